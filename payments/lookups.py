"""The normalised forms payments are looked up by, shared by the indexes (payments.models) and
the console's search (gateway.console.search), so that a lookup is always an index lookup; and
the hash a hosted payment keeps of its clientSecret, which the checkout looks it up by; and the
ten digits of a customer's mobile number, as the checkout keeps it and an acquirer takes it.

- Email: lower-cased. Customers type their address in any case; the mailbox is the same.
- Phone: the last 10 digits of what was stored, with the punctuation the APIs allow (spaces,
  hyphens, brackets, a leading +) removed. '+91 98765-43210', '919876543210' and '9876543210'
  are one Indian mobile number, and all three have the key '9876543210'.

Plain REPLACE and RIGHT, not a regular expression, so that the expression indexes also build
on SQLite (the quick start's database). The phone key's constants are written into the SQL, not
sent as parameters: a prepared statement planned generically (PostgreSQL does so after five
runs when the generic plan looks cheaper) sees `replace(customer_phone, $1, $2)`, which is not
the index's expression, and reads the whole payments table (2.8 s a search at 5 million
payments, measured; docs/performance.md).
"""
from __future__ import annotations

import hashlib
import re

from django.core.exceptions import EmptyResultSet
from django.db.models import CharField, F, Func, Lookup
from django.db.models.functions import Lower
from django.db.models.lookups import In

PHONE_KEY_DIGITS = 10
PHONE_PUNCTUATION = (" ", "-", "(", ")", "+", ".")


class PhoneKey(Func):
    """RIGHT(REPLACE(...REPLACE(phone, ' ', '')..., '.', ''), 10) with every constant in the SQL
    text (the module's docstring says why); on PostgreSQL the very expression the index
    payment_phone_key was built with."""

    def __init__(self, expression, **extra):
        super().__init__(expression, output_field=CharField(), **extra)

    def _stripped(self, compiler):
        sql, params = compiler.compile(self.source_expressions[0])
        for character in PHONE_PUNCTUATION:
            sql = f"REPLACE({sql}, '{character}', '')"
        return sql, params

    def as_sql(self, compiler, connection, **extra_context):
        sql, params = self._stripped(compiler)
        return f"RIGHT({sql}, {PHONE_KEY_DIGITS})", params

    def as_sqlite(self, compiler, connection, **extra_context):
        # SQLite has no RIGHT; this is the form its index was built with (Django's Right then).
        sql, params = self._stripped(compiler)
        return f"SUBSTR({sql}, ({PHONE_KEY_DIGITS} * -1), {PHONE_KEY_DIGITS})", params


class AnyOfIds(Lookup):
    """`column = ANY(%s::bigint[])` for an integer column (a primary key): the ids as one array
    parameter, written as PostgreSQL's array text, where Django's `__in` writes a placeholder per
    id. For the long lists of ids the console's dashboard reads (every payment still open in the
    day's folded buckets: thousands on a busy day) `__in` cost 115 to 200 ms of building,
    quoting and parsing for 15,349 ids that matched nothing, measured; 25 ms with each id made
    ready by the field and dumped by psycopg as a list; 8 to 15 ms as this text. Every length
    of list was also a statement of its own for the prepared-statement cache. The plan is the
    same index scan. On SQLite, Django's IN.

    Used as an expression: `Q(AnyOfIds(F("pk"), ids))`. An empty list matches nothing, as with
    `__in`; a value that is not an integer is refused (ValueError) before anything is sent."""

    prepare_rhs = False

    def get_prep_lookup(self):
        return [int(value) for value in self.rhs if value is not None]

    def as_sql(self, compiler, connection):
        if not self.rhs:
            raise EmptyResultSet
        lhs, params = self.process_lhs(compiler, connection)
        return f"{lhs} = ANY(%s::bigint[])", [*params, "{" + ",".join(map(str, self.rhs)) + "}"]

    def as_sqlite(self, compiler, connection):
        return In(self.lhs, self.rhs).as_sql(compiler, connection)


def phone_key_expression(field: str = "customer_phone"):
    return PhoneKey(F(field))


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


# What a customer may type around a mobile number: spaces, hyphens, brackets, dots.
_PHONE_SEPARATORS = re.compile(r"[\s\-().]")


def mobile_digits(raw: str) -> str:
    """`raw` as the ten digits of a mobile number, the form an acquirer takes (Cashfree's
    customer_phone) and the checkout keeps: separators, a +91 / 91 prefix and a leading 0 taken
    off. Empty when what is left is not ten ASCII digits."""
    digits = _PHONE_SEPARATORS.sub("", raw or "")
    if digits.startswith("+91"):
        digits = digits[3:]
    elif len(digits) == 12 and digits.startswith("91"):
        digits = digits[2:]
    elif len(digits) == 11 and digits.startswith("0"):
        digits = digits[1:]
    return digits if len(digits) == 10 and digits.isascii() and digits.isdigit() else ""
