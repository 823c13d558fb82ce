"""Evidence that contests a dispute (POST /api/v2/disputes/{id}/evidence): a good file is stored
out of the web root and sent; a wrong type, an oversized file, a disguised file and a PDF with
active content are refused, naming the field, with nothing stored or sent."""
from __future__ import annotations

import zlib
from pathlib import Path

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from gateway.platform.models import AuditRecord
from payments.acquirer.sandbox import disputes as sandbox_disputes
from payments.models import SandboxDispute
from refunds.disputes.sweep import disputes_sweep, evidence_files_purge
from refunds.models import Dispute, DisputeEvidence
from tests.support.disputes import evidence_dir  # noqa: F401 - the fixture, by name
from tests.support.factories import make_success_payment

ROOT = Path(__file__).resolve().parents[2]
PDF = b"%PDF-1.4\n1 0 obj << /Type /Catalog /Pages 2 0 R >> endobj\ntrailer << /Root 1 0 R >>\n%%EOF\n"
PNG = b"\x89PNG\r\n\x1a\n" + b"\x00\x00\x00\rIHDR" + b"\x00" * 40
JPEG = b"\xff\xd8\xff\xe0\x00\x10JFIF\x00" + b"\x00" * 40
PROOF = "Delivery/Service Proof"


@pytest.fixture
def dispute(merchant):
    make_success_payment(merchant, amount=sandbox_disputes.DISPUTED_AMOUNT_WON)
    disputes_sweep()
    return Dispute.objects.get()


def upload(api, merchant, dispute, content=PDF, name="proof.pdf", doc_type=PROOF, **extra):
    data = {"file": SimpleUploadedFile(name, content, content_type="application/pdf"), "docType": doc_type, **extra}
    return api.post(f"/api/v2/disputes/{dispute.dispute_id}/evidence", data, format="multipart", **merchant.headers)


@pytest.mark.parametrize("content, name", [(PDF, "proof.pdf"), (PNG, "receipt.png"), (JPEG, "parcel.JPG"),
                                           (PDF, "no-extension")])
def test_a_good_file_is_stored_out_of_the_web_root_sent_and_audited(api, merchant, dispute, evidence_dir,
                                                                     content, name):
    answer = upload(api, merchant, dispute, content, name)
    assert answer.status_code == 200, answer.content
    body = answer.json()
    assert body["status"] == "UNDER_REVIEW" and body["evidenceSubmitted"] and body["evidenceSubmittedAt"]
    row = DisputeEvidence.objects.get()
    stored = evidence_dir / row.stored_as
    assert stored.read_bytes() == content and oct(stored.stat().st_mode & 0o777) == "0o600"
    assert row.sent_at is not None and row.doc_type == PROOF
    assert not str(stored).startswith(str(ROOT / "static")) and "templates" not in stored.parts
    assert SandboxDispute.objects.get().evidence == [row.filename]
    assert AuditRecord.objects.filter(action="dispute.evidence", object_id=str(dispute.pk)).count() == 1


def _compressed_pdf(hidden: bytes) -> bytes:
    return (b"%PDF-1.5\n5 0 obj << /Type /ObjStm /Filter /FlateDecode >>\nstream\n" + zlib.compress(hidden)
            + b"\nendstream\nendobj\n%%EOF\n")


@pytest.mark.parametrize("content, name, field, says", [
    (b"", "proof.pdf", "file", "empty"),
    (b"hello, this is plain text", "proof.txt", "file", "PDF, PNG or JPEG"),
    (b"<html><script>alert(1)</script></html>", "proof.pdf", "file", "PDF, PNG or JPEG"),
    (b"PK\x03\x04 a zip", "proof.pdf", "file", "PDF, PNG or JPEG"),
    (PNG, "invoice.pdf", "file", "disguised"),
    (PDF, "photo.jpg", "file", "disguised"),
    (PDF.replace(b"/Type /Catalog", b"/Type /Catalog /OpenAction 3 0 R"), "proof.pdf", "file", "/openaction"),
    (PDF + b"3 0 obj << /S /JavaScript /JS (app.alert(1)) >> endobj", "proof.pdf", "file", "/javascript"),
    (PDF + b"3 0 obj << /S /Launch /F (cmd.exe) >> endobj", "proof.pdf", "file", "/launch"),
    (PDF + b"3 0 obj << /S /J#61vaScript >> endobj", "proof.pdf", "file", "/javascript"),
    (_compressed_pdf(b"<< /OpenAction << /S /JavaScript /JS (x) >> >>"), "proof.pdf", "file", "/js"),
    (PNG + b"<script>alert(1)</script>", "receipt.png", "file", "markup"),
])
def test_a_refused_file_names_the_field_and_nothing_is_stored_or_sent(api, merchant, dispute, evidence_dir,
                                                                      content, name, field, says):
    answer = upload(api, merchant, dispute, content, name)
    assert answer.status_code == 400, answer.content
    body = answer.json()
    assert body["errorCode"] == "VALIDATION_ERROR" and body["errorMessage"].startswith(field)
    assert says.lower() in body["errorMessage"].lower()
    assert not DisputeEvidence.objects.exists() and not evidence_dir.exists()
    assert SandboxDispute.objects.get().evidence == []
    dispute.refresh_from_db()
    assert dispute.status == Dispute.Status.NEEDS_RESPONSE


def test_an_oversized_file_is_refused_before_it_is_read(api, merchant, dispute, evidence_dir, settings):
    settings.DISPUTE_EVIDENCE_MAX_BYTES = 1000
    answer = upload(api, merchant, dispute, PDF + b"%" * 2000)
    assert answer.status_code == 400 and answer.json()["errorMessage"].startswith("file")
    too_big = upload(api, merchant, dispute, PDF + b"%" * (70 * 1024))  # past the form's room: the body itself
    assert too_big.status_code == 400 and too_big.json()["errorMessage"].startswith("file")
    assert not DisputeEvidence.objects.exists()


def test_an_overlong_doc_type_is_named_when_the_processor_listed_no_documents(api, merchant, dispute, evidence_dir):
    # A dispute whose processor has not (yet) said which documents it wants takes any docType:
    # one longer than the record's column is a VALIDATION_ERROR, not a 500, and nothing is kept.
    Dispute.objects.filter(pk=dispute.pk).update(preferred_evidence=[])
    answer = upload(api, merchant, dispute, doc_type="D" * 81)
    assert answer.status_code == 400, answer.content
    assert answer.json()["errorMessage"].startswith("docType")
    assert not DisputeEvidence.objects.exists() and not evidence_dir.exists()


def test_a_doc_type_the_dispute_did_not_ask_for_and_a_missing_file_are_named(api, merchant, dispute, evidence_dir):
    wrong = upload(api, merchant, dispute, doc_type="Selfie")
    assert wrong.status_code == 400 and wrong.json()["errorMessage"].startswith("docType")
    missing = api.post(f"/api/v2/disputes/{dispute.dispute_id}/evidence", {"docType": PROOF}, format="multipart",
                       **merchant.headers)
    assert missing.status_code == 400 and missing.json()["errorMessage"].startswith("file")
    json_body = api.post(f"/api/v2/disputes/{dispute.dispute_id}/evidence", {"docType": PROOF}, format="json",
                         **merchant.headers)
    assert json_body.status_code == 400 and json_body.json()["errorMessage"].startswith("Content-Type")


def test_another_merchants_dispute_takes_no_evidence(api, merchant, other_merchant, dispute, evidence_dir):
    answer = upload(api, other_merchant, dispute)
    assert answer.status_code == 404 and not DisputeEvidence.objects.exists()


def test_evidence_files_are_deleted_after_their_retention_and_their_rows_kept(api, merchant, dispute, evidence_dir):
    from datetime import timedelta

    from django.utils import timezone

    from refunds.disputes.evidence import RETENTION

    assert upload(api, merchant, dispute).status_code == 200
    row = DisputeEvidence.objects.get()
    assert evidence_files_purge() == 0  # not decided yet
    Dispute.objects.filter(pk=dispute.pk).update(status=Dispute.Status.WON)
    assert evidence_files_purge(now=timezone.now() + RETENTION - timedelta(days=1)) == 0
    assert evidence_files_purge(now=timezone.now() + RETENTION + timedelta(days=1)) == 1
    row.refresh_from_db()
    assert row.stored_as == "" and row.sha256 and not any(evidence_dir.rglob("*.pdf"))
