"""The normalised forms payments are looked up by, shared by the indexes (payments.models) and
the console's search (gateway.console.search), so that a lookup is always an index lookup; and
the hash a hosted payment keeps of its clientSecret, which the checkout looks it up by.

- Email: lower-cased. Customers type their address in any case; the mailbox is the same.
- Phone: the last 10 digits of what was stored, with the punctuation the APIs allow (spaces,
  hyphens, brackets, a leading +) removed. '+91 98765-43210', '919876543210' and '9876543210'
  are one Indian mobile number, and all three have the key '9876543210'.

Plain REPLACE and RIGHT, not a regular expression, so that the expression indexes also build
on SQLite (the quick start's database).
"""
from __future__ import annotations

import hashlib

from django.db.models import F, Value
from django.db.models.functions import Lower, Replace, Right

PHONE_KEY_DIGITS = 10
PHONE_PUNCTUATION = (" ", "-", "(", ")", "+", ".")


def phone_key_expression(field: str = "customer_phone"):
    expression = F(field)
    for character in PHONE_PUNCTUATION:
        expression = Replace(expression, Value(character), Value(""))
    return Right(expression, PHONE_KEY_DIGITS)


def email_key_expression(field: str = "customer_email"):
    return Lower(field)


def phone_key(text: str) -> str:
    """The Python twin of phone_key_expression, for what staff type into the search box."""
    for character in PHONE_PUNCTUATION:
        text = text.replace(character, "")
    return text[-PHONE_KEY_DIGITS:]


def email_key(text: str) -> str:
    return text.lower()


def client_secret_hash(client_secret: str) -> str:
    """What a hosted payment stores of its clientSecret, and looks it up by (the secret itself
    is shown once, in the creation response)."""
    return hashlib.sha256(client_secret.encode()).hexdigest()
