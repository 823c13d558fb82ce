"""Third-party files in vendor/ are kept byte for byte as published: each folder's PROVENANCE.md
records every file's sha256, and a file that differs from its record fails here."""

import hashlib
import re
from pathlib import Path

import pytest

VENDOR = Path(__file__).resolve().parents[2] / "vendor"
_ROW = re.compile(r"^\|\s*`(?P<name>[^`]+)`\s*\|.*\|\s*`(?P<sha>[0-9a-f]{64})`\s*\|\s*$", re.MULTILINE)


def _recorded():
    for note in sorted(VENDOR.glob("*/PROVENANCE.md")):
        for match in _ROW.finditer(note.read_text(encoding="utf-8")):
            yield pytest.param(note.parent / match["name"], match["sha"], id=f"{note.parent.name}/{match['name']}")


def test_every_vendored_folder_has_a_provenance_note():
    folders = [folder for folder in VENDOR.iterdir() if folder.is_dir()]
    assert folders, "vendor/ holds nothing"
    assert [folder.name for folder in folders if not (folder / "PROVENANCE.md").is_file()] == []


def test_every_vendored_file_is_recorded():
    recorded = {path for path, _ in (param.values for param in _recorded())}
    files = {path for path in VENDOR.rglob("*") if path.is_file() and path.name != "PROVENANCE.md"}
    assert sorted(map(str, files - recorded)) == []


@pytest.mark.parametrize(("path", "sha256"), list(_recorded()))
def test_vendored_file_is_byte_for_byte_as_recorded(path, sha256):
    assert hashlib.sha256(path.read_bytes()).hexdigest() == sha256, f"{path} differs from its PROVENANCE.md"


def test_the_cashfree_description_is_read_from_the_repository():
    from tests.acquirer_cashfree.double import description_path

    assert description_path() == VENDOR / "cashfree-pg" / "openapi.yaml"
