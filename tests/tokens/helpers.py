"""What the token tests do over and over: pay a checkout by card (with or without consent)
through the real checkout views, ask for a token, and look for card data where none may be."""
from __future__ import annotations

import json
import re
from datetime import date

from django.db import connection
from django.test import Client

from payments.models import Payment
from tests.support.factories import now

TOKENS_URL = "/api/v2/tokens"
VISA, MASTERCARD = "4111111111111111", "5555555555554444"
TEST_NUMBERS = (VISA, MASTERCARD, "4000000000000002")
CONSENT_TEXT = "I agree to save my card with Chai Point Stores for faster checkout."


def future_expiry(years: int = 3) -> tuple[int, int, str]:
    """(month, year, 'MM/YY') of a card valid for a few more years."""
    today = date.today()
    year = today.year + years
    return 8, year, f"08/{year % 100:02d}"


def enter(client: Client, session: dict) -> None:
    response = client.get(f"/checkout/{session['paymentId']}?clientSecret={session['clientSecret']}")
    assert response.status_code == 303, response.content


def pay_by_card(client: Client, session: dict, *, number: str = VISA, cvv: str = "123", save_card: bool = True,
                otp: str | None = "123456", expiry: str | None = None) -> Payment:
    """The customer pays `session` by card on the checkout (Django's test client, the real
    views): card form, then the 3-D Secure OTP unless `otp` is None."""
    enter(client, session)
    pid = session["paymentId"]
    form = {"card_number": number, "card_expiry": expiry or future_expiry()[2], "card_cvv": cvv}
    if save_card:
        form["save_card"] = "1"
    response = client.post(f"/checkout/{pid}/card", form)
    assert response.status_code == 303, response.content
    if otp is not None:
        response = client.post(f"/checkout/{pid}/card/challenge", {"otp": otp})
        assert response.status_code == 303, response.content
    return Payment.objects.get(payment_id=pid)


def token_request(payment_id: str, *, given=True, timestamp=None, text=CONSENT_TEXT) -> dict:
    """A POST /api/v2/tokens body; `...` for a value drops the key."""
    consent = {"consentGiven": given, "consentTimestamp": now() if timestamp is None else timestamp,
               "consentText": text}
    return {"paymentId": payment_id, "consent": {k: v for k, v in consent.items() if v is not ...}}


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


def make_token(api, create_session, tm, **card) -> dict:
    payment = pay_by_card(Client(), create_session(tm), **card)
    assert payment.status == "SUCCESS", payment.failure_reason
    response = post_token(api, tm, token_request(payment.payment_id))
    assert response.status_code == 200, response.content
    return response.json()


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
