"""The suite watches every file it opens (tests/conftest.py): a read beside the repository is
recorded and fails the run. This test proves the watch itself can fail."""

from pathlib import Path

import pytest

from tests import conftest


def test_a_read_beside_the_repository_is_caught(tmp_path):
    beside = Path(conftest._ROOT).parent / f".lone-clone-probe-{tmp_path.name}"
    before = len(conftest._outside_reads)
    try:
        beside.write_text("x")
        beside.read_text()
        caught = conftest._outside_reads[before:]
    finally:
        beside.unlink(missing_ok=True)
        del conftest._outside_reads[before:]
    assert str(beside) in caught


def test_a_read_inside_the_repository_is_not(tmp_path):
    before = len(conftest._outside_reads)
    (Path(conftest._ROOT) / "README.md").read_text()
    assert conftest._outside_reads[before:] == []


def test_no_tracked_file_is_a_link_out_of_the_repository():
    """A worktree's links to a shared Prism or SDK install (.prism, .venv-sdk101) were committed
    twice; on main each became a link to itself, replacing the real folder, and in a clone they
    point nowhere. No tracked symlink may lead out of the repository (judged on the link's text,
    without following it)."""
    import os
    import subprocess

    root = os.path.normpath(conftest._ROOT)
    if not os.path.exists(os.path.join(root, ".git")):
        pytest.skip("not a git checkout: nothing is tracked")

    def git(*args) -> str:
        return subprocess.run(["git", *args], cwd=root, capture_output=True, text=True, check=True).stdout

    links = [line.split("\t", 1)[1] for line in git("ls-files", "-s").splitlines() if line.startswith("120000 ")]
    outside = []
    for path in links:
        target = os.path.normpath(os.path.join(root, os.path.dirname(path), git("cat-file", "-p", f":{path}")))
        if os.path.commonpath([root, target]) != root or target == os.path.join(root, path):
            outside.append(path)
    assert outside == [], f"tracked links out of the repository or to themselves (git rm --cached them): {outside}"
