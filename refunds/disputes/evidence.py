"""Evidence files that contest a dispute: checked, stored out of the web root, deleted when their
retention ends (docs/disputes.md, "Evidence"; docs/security.md, "Data retention").

The checks, in order, each refusing with a VALIDATION_ERROR naming `file` (or `docType`):

- the size: not empty, at most DISPUTE_EVIDENCE_MAX_BYTES;
- the type by content, never by name or the sender's Content-Type: PDF (`%PDF-`), PNG (its
  8-byte signature) or JPEG (FF D8 FF); anything else is refused, and so is a file whose name's
  extension says another type than its content (a disguised file: `invoice.pdf` that is a PNG,
  `photo.jpg` that is a PDF);
- no active content: a PDF naming /JavaScript, /JS, /OpenAction, /Launch, /AA (additional
  actions), /EmbeddedFile, /RichMedia, /XFA, /SubmitForm or /ImportData in its objects, or in
  the objects of its compressed streams, is refused, whether the name is written plainly or
  with #xx escapes; an image with an HTML or script marker in its bytes
  (a polyglot) is refused too;
- `docType` must be one the dispute's processor asked for (its `preferred_evidence`), and at
  most DOC_TYPE_MAX characters (what the record keeps) when it asked for none.

The file is kept under DISPUTE_EVIDENCE_DIR (by default var/dispute-evidence, outside the
static and template folders, and served by no route), named by its SHA-256 and not by what the
sender called it.
"""
from __future__ import annotations

import hashlib
import re
import zlib
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path

from django.conf import settings

from gateway.core.errors import ValidationError
from refunds.models import Dispute, DisputeEvidence

PDF, PNG, JPEG = "application/pdf", "image/png", "image/jpeg"
EXTENSIONS = {PDF: {"pdf"}, PNG: {"png"}, JPEG: {"jpg", "jpeg"}}
# Kept this long after the dispute is decided (or, undecided, after it was sent): pre-arbitration
# and arbitration can reopen a dispute for months after its first decision. docs/security.md.
RETENTION = timedelta(days=540)
DOC_TYPE_MAX = DisputeEvidence._meta.get_field("doc_type").max_length

# PDF names whose objects run code or reach outside the file when it is opened.
_ACTIVE_PDF_NAMES = (b"javascript", b"js", b"openaction", b"launch", b"aa", b"embeddedfile", b"richmedia",
                     b"xfa", b"submitform", b"importdata")
_PDF_NAME = re.compile(rb"/([A-Za-z0-9#]+)")
_HEX_ESCAPE = re.compile(rb"#([0-9A-Fa-f]{2})")
_MARKUP = re.compile(rb"<\s*(script|html|svg|iframe|object|\?php)\b|javascript:", re.I)
_SAFE_NAME = re.compile(r"[^A-Za-z0-9._-]+")
_STREAM = re.compile(rb"stream\r?\n(.*?)\r?\n?endstream", re.S)
DECOMPRESSED_MAX = 64 * 1024 * 1024


@dataclass(frozen=True)
class CheckedFile:
    filename: str       # the sender's name, reduced to safe characters
    content_type: str
    content: bytes
    sha256: str


def max_bytes() -> int:
    return settings.DISPUTE_EVIDENCE_MAX_BYTES


def content_type_of(content: bytes) -> str | None:
    """PDF, PNG or JPEG by the file's first bytes; None for anything else."""
    if content.startswith(b"%PDF-"):
        return PDF
    if content.startswith(b"\x89PNG\r\n\x1a\n"):
        return PNG
    if content.startswith(b"\xff\xd8\xff"):
        return JPEG
    return None


def _names(text: bytes) -> set[str]:
    found = set()
    for match in _PDF_NAME.finditer(text):
        name = _HEX_ESCAPE.sub(lambda m: bytes([int(m.group(1), 16)]), match.group(1)).lower()
        if name in _ACTIVE_PDF_NAMES:
            found.add("/" + name.decode("ascii", "replace"))
    return found


def _pdf_active_names(content: bytes) -> list[str]:
    """The active names of a PDF: in its objects as written, and inside its Flate-compressed
    streams (a PDF 1.5 object stream hides whole objects there). A stream's raw bytes are not
    read as names (compressed data would match /JS by chance); one that does not inflate
    (an image) holds no objects. Inflating is bounded by DECOMPRESSED_MAX bytes in all."""
    found = set()
    budget = DECOMPRESSED_MAX
    position = 0
    for match in _STREAM.finditer(content):
        found |= _names(content[position:match.start()])
        position = match.end()
        inflater = zlib.decompressobj()
        try:
            inflated = inflater.decompress(match.group(1), max(budget, 1))
        except zlib.error:
            continue
        budget -= len(inflated)
        if budget <= 0:
            found.add("(streams too large to inspect)")
            break
        found |= _names(inflated)
    found |= _names(content[position:])
    return sorted(found)


def evidence_check(*, dispute: Dispute, doc_type: str, filename: str, content: bytes) -> CheckedFile:
    """The file, checked as the module's docstring says. Raises ValidationError naming the field."""
    wanted = {item.get("code") for item in dispute.preferred_evidence}
    if not doc_type:
        raise ValidationError("is required: one of the dispute's preferredEvidence types", field="docType")
    if len(doc_type) > DOC_TYPE_MAX:
        # Reachable when the processor listed no documents (any docType is then taken).
        raise ValidationError(f"is at most {DOC_TYPE_MAX} characters", field="docType")
    if wanted and doc_type not in wanted:
        raise ValidationError("must be one of the dispute's preferredEvidence types: " + ", ".join(sorted(wanted)),
                              field="docType")
    if not content:
        raise ValidationError("is empty", field="file")
    if len(content) > max_bytes():
        raise ValidationError(f"is {len(content)} bytes; the limit is {max_bytes()}", field="file")
    content_type = content_type_of(content)
    if content_type is None:
        raise ValidationError("must be a PDF, PNG or JPEG file (judged by its content)", field="file")
    safe = _SAFE_NAME.sub("_", Path(filename or "evidence").name)[-100:].lstrip(".") or "evidence"
    extension = safe.rsplit(".", 1)[-1].lower() if "." in safe else ""
    if extension and extension not in EXTENSIONS[content_type]:
        raise ValidationError(f"is named .{extension} but its content is {content_type}: a disguised file is "
                              "refused", field="file")
    if not extension:
        safe = f"{safe}.{sorted(EXTENSIONS[content_type])[0]}"
    if content_type == PDF:
        active = _pdf_active_names(content)
        if active:
            raise ValidationError("holds active content (" + ", ".join(active) + "): send a PDF without "
                                  "scripts, actions or embedded files", field="file")
    elif _MARKUP.search(content):
        raise ValidationError("holds markup or script beside the image: refused", field="file")
    return CheckedFile(safe, content_type, content, hashlib.sha256(content).hexdigest())


def evidence_folder() -> Path:
    return Path(settings.DISPUTE_EVIDENCE_DIR)


def evidence_store(*, dispute: Dispute, checked: CheckedFile) -> str:
    """Write the file under DISPUTE_EVIDENCE_DIR/<disputeId>/<sha256>.<ext> (owner-only
    permissions) and return that path relative to the folder. The same file twice is one file."""
    relative = Path(dispute.dispute_id) / f"{checked.sha256}.{checked.filename.rsplit('.', 1)[-1].lower()}"
    target = evidence_folder() / relative
    target.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    if not target.exists():
        partial = target.with_suffix(target.suffix + ".part")
        partial.write_bytes(checked.content)
        partial.chmod(0o600)
        partial.replace(target)
    return relative.as_posix()


def evidence_delete(stored_as: str) -> None:
    if stored_as:
        (evidence_folder() / stored_as).unlink(missing_ok=True)
