"""The suite watches every file it opens (tests/conftest.py): a read beside the repository is
recorded and fails the run. This test proves the watch itself can fail."""

from pathlib import Path

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
