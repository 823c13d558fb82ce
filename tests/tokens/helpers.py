"""What the token tests do over and over: ask for a token, read or delete it, and look for card
data where none may be. (Paying a checkout by card and making a token: tests.support.factories.)"""
from __future__ import annotations

import json
import re

from django.db import connection

from tests.support.factories import MASTERCARD, TOKENS_URL, VISA

TEST_NUMBERS = (VISA, MASTERCARD, "4000000000000002")


def _headers(tm, headers: dict) -> dict:
    """tm's X-Api-Key and X-Merchant-Id, with `headers` replacing them (None drops one)."""
    merged = {**tm.headers, **headers}
    return {k: v for k, v in merged.items() if v is not None}


def post_token(api, tm, body, **headers):
    return api.post(TOKENS_URL, body, format="json", **_headers(tm, headers))


def get_token(api, tm, token_id, **headers):
    return api.get(f"{TOKENS_URL}/{token_id}", **_headers(tm, headers))


def delete_token(api, tm, token_id, **headers):
    return api.delete(f"{TOKENS_URL}/{token_id}", **_headers(tm, headers))


def assert_error(response, status: int, code: str, field: str | None = None) -> dict:
    assert response.status_code == status, response.content
    body = response.json()
    assert body["success"] is False and body["errorCode"] == code, body
    assert body["traceId"]
    if field:
        assert body["errorMessage"].startswith(field), body
    return body


# --- looking for card data ------------------------------------------------------------------

def _luhn(number: str) -> bool:
    total = 0
    for index, char in enumerate(reversed(number)):
        value = int(char) * (2 if index % 2 else 1)
        total += value - 9 if value > 9 else value
    return total % 10 == 0


def database_text() -> str:
    """Every row of every table of the database, as JSON text (PostgreSQL's row_to_json, so
    every column of every type is in it), plus the decoded content of browser sessions."""
    from django.contrib.sessions.models import Session

    chunks = []
    with connection.cursor() as cursor:
        for table in connection.introspection.table_names(include_views=False):
            cursor.execute(f"SELECT row_to_json(t)::text FROM {connection.ops.quote_name(table)} AS t")
            chunks.extend(row for (row,) in cursor.fetchall())
    chunks.extend(json.dumps(session.get_decoded()) for session in Session.objects.all())
    return "\n".join(chunks)


def find_card_data(text: str, *, cvvs=()) -> list[str]:
    """Card numbers (the test cards, however grouped, and any Luhn-valid run of 13 to 19
    digits) and the given CVVs (as a number of their own) found in `text`."""
    found = []
    for number in TEST_NUMBERS:
        grouped = " ".join(number[i:i + 4] for i in range(0, 16, 4))
        for form in (number, grouped, grouped.replace(" ", "-")):
            if form in text:
                found.append(form)
    # Standalone runs only: inside a hex digest (letters around it) 13 digits happen by chance.
    for run in re.findall(r"(?<![0-9A-Za-z])\d{13,19}(?![0-9A-Za-z])", text):
        if _luhn(run):
            found.append(run)
    for cvv in cvvs:
        # Not after a ".": a timestamp's fraction ("12.358+00:00") holds any three digits by chance.
        # Nor a row's id or foreign key ("id":358, "group_id":358): other tests' rows number
        # into the hundreds, and a key is a counter, never typed by a customer.
        for match in re.finditer(rf"(?<![A-Za-z0-9.]){cvv}(?![A-Za-z0-9])", text):
            if not _ID_VALUE.search(text, max(0, match.start() - 40), match.start()):
                found.append(f"CVV {cvv}")
                break
    return found


_ID_VALUE = re.compile(r'(?:"id"|_id"):\s*$')


def assert_no_card_data_stored(*, cvvs=()) -> None:
    text = database_text()
    assert text, "the scan read nothing"
    found = find_card_data(text, cvvs=cvvs)
    assert found == [], [(what, _context(text, what.split()[-1])) for what in found]


def _context(text: str, what: str) -> str:
    at = text.find(what)
    return text[max(0, at - 80):at + 40]
