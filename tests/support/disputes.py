"""What the dispute tests share (tests/refunds/test_dispute*.py, tests/console/test_disputes_*.py):
a plain one-page PDF and a fixture that keeps evidence files in a folder of the test's own inside
the repository's var/, removed afterwards. A test module imports the fixture by name."""
from __future__ import annotations

import shutil
import uuid
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PDF = b"%PDF-1.4\n1 0 obj << /Type /Catalog >> endobj\ntrailer << /Root 1 0 R >>\n%%EOF\n"


@pytest.fixture
def evidence_dir(settings):
    folder = ROOT / "var" / "test-evidence" / uuid.uuid4().hex
    settings.DISPUTE_EVIDENCE_DIR = folder
    yield folder
    shutil.rmtree(folder, ignore_errors=True)
