"""Bank statements: reading the file finance uploads (or drops in a folder) into
BankStatementLine rows.

The accepted file (docs/settlements.md, "The bank statement"):

- CSV, UTF-8 (a byte-order mark is allowed), comma separated, fields quoted as Excel quotes
  them. The first row is the header; it names the columns `date`, `amount`, `utr` and,
  optionally, `narration`, in any order and any letter case (other columns are ignored).
- `date`: ISO `2026-11-27` or Indian `27/11/2026` (day first).
- `amount`: rupees, as the bank prints them: `1234.50`, `1234.5`, `1234`, with an optional
  leading `-` for a debit and optional thousands separators (`1,234.50`, `1,23,456.00`).
  Converted to paise exactly with Decimal; a fraction of a paisa is refused, never rounded.
- `utr`: the bank's transfer reference, up to 64 characters (spaces around it dropped).
- Blank rows are skipped. At most MAX_ROWS rows.

parse_statement never writes; bank_statement_store writes a parsed statement in one
transaction, once per file content (SHA-256): uploading the same file again adds nothing.
"""
from __future__ import annotations

import csv
import hashlib
import io
import re
from dataclasses import dataclass
from datetime import date, datetime
from decimal import Decimal

from django.db import transaction

from gateway.platform.services import audit_record
from refunds.models import BankStatement, BankStatementLine

MAX_ROWS = 200_000
MAX_BYTES = 20 * 1024 * 1024
REQUIRED_COLUMNS = ("date", "amount", "utr")
# Plain digits, or grouped in thousands (1,234,567) or the Indian way (12,34,567), then up to
# two decimals.
_AMOUNT = re.compile(r"^-?(\d+|\d{1,3}(,\d{3})+|\d{1,2}(,\d{2})*,\d{3})(\.\d{1,2})?$")


class StatementInvalid(ValueError):
    """The file is not a statement this gateway reads; the message names the row and column."""

    def __init__(self, message: str, *, row: int | None = None, column: str | None = None):
        self.row, self.column = row, column
        where = (f"row {row}" if row is not None else "") + (f", column {column}" if column else "")
        super().__init__(f"{where}: {message}" if where else message)


@dataclass(frozen=True)
class StatementRow:
    line_no: int
    date: date
    amount: int  # paise; a debit is negative
    utr: str
    narration: str


def parse_date(text: str) -> date:
    """`2026-11-27` or `27/11/2026`; anything else raises ValueError."""
    text = text.strip()
    for fmt in ("%Y-%m-%d", "%d/%m/%Y"):
        try:
            return datetime.strptime(text, fmt).date()
        except ValueError:
            continue
    raise ValueError(f"{text!r} is not a date as YYYY-MM-DD or DD/MM/YYYY")


def parse_rupees(text: str) -> int:
    """A bank's rupee amount (`1,234.50`, `-12.5`) as paise, exactly; anything else raises
    ValueError."""
    text = text.strip()
    if not _AMOUNT.match(text):
        raise ValueError(f"{text!r} is not an amount in rupees such as 1234.50")
    return int(Decimal(text.replace(",", "")) * 100)


def parse_statement(content: bytes) -> list[StatementRow]:
    """Every row of a statement file, or StatementInvalid naming the first bad row and column."""
    if len(content) > MAX_BYTES:
        raise StatementInvalid(f"the file is larger than {MAX_BYTES // (1024 * 1024)} MB")
    try:
        text = content.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise StatementInvalid("the file is not UTF-8 text") from exc
    reader = csv.reader(io.StringIO(text, newline=""))
    header = next(reader, None)
    if header is None:
        raise StatementInvalid("the file is empty: the first row names the columns date, amount, utr, narration")
    columns = {name.strip().lower(): index for index, name in enumerate(header)}
    missing = [name for name in REQUIRED_COLUMNS if name not in columns]
    if missing:
        raise StatementInvalid("the header row has no column " + ", ".join(missing)
                               + " (accepted: date, amount, utr, narration)", row=1)
    rows: list[StatementRow] = []
    for line_no, fields in enumerate(reader, start=1):
        if not any(field.strip() for field in fields):
            continue
        if len(rows) >= MAX_ROWS:
            raise StatementInvalid(f"the file has more than {MAX_ROWS} rows")

        def field(name: str) -> str:
            index = columns.get(name)
            return fields[index] if index is not None and index < len(fields) else ""

        values = {}
        for name, parse in (("date", parse_date), ("amount", parse_rupees)):
            try:
                values[name] = parse(field(name))
            except ValueError as exc:
                raise StatementInvalid(str(exc), row=line_no + 1, column=name) from None
        utr = field("utr").strip()
        if len(utr) > 64:
            raise StatementInvalid("a UTR is at most 64 characters", row=line_no + 1, column="utr")
        rows.append(StatementRow(line_no=line_no, date=values["date"], amount=values["amount"], utr=utr,
                                 narration=field("narration").strip()[:500]))
    return rows


def bank_statement_store(*, name: str, content: bytes, source: str, actor=None) -> tuple[BankStatement, bool]:
    """Parse and store a statement file: (the statement, True) when new, (the one stored
    before, False) when the same content was stored already. Raises StatementInvalid, and
    writes nothing, for a file parse_statement refuses."""
    digest = hashlib.sha256(content).hexdigest()
    existing = BankStatement.objects.filter(sha256=digest).first()
    if existing is not None:
        return existing, False
    rows = parse_statement(content)
    with transaction.atomic():
        statement, created = BankStatement.objects.get_or_create(
            sha256=digest, defaults={"name": name[:255], "source": source,
                                     "uploaded_by": actor if getattr(actor, "pk", None) else None})
        if created:
            BankStatementLine.objects.bulk_create(
                [BankStatementLine(statement=statement, line_no=row.line_no, date=row.date, amount=row.amount,
                                   utr=row.utr, narration=row.narration) for row in rows], batch_size=5000)
    return statement, created


def bank_statement_upload(*, name: str, content: bytes, actor) -> tuple[BankStatement, bool]:
    """Finance's upload in the console: bank_statement_store and an audit record of who
    uploaded which file (new or not, how many lines), in one transaction. Raises
    StatementInvalid, and writes nothing, for a file parse_statement refuses."""
    with transaction.atomic():
        statement, created = bank_statement_store(name=name, content=content, source=BankStatement.Source.CONSOLE,
                                                  actor=actor)
        audit_record(actor=actor, action="bank_statement.upload", obj=statement,
                     after={"name": statement.name, "sha256": statement.sha256, "new": created,
                            "lines": statement.lines.count()})
    return statement, created
