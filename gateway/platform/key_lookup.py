"""The API key and its merchant by the key's prefix, in one hand-written statement: the
platform's one use of gateway.perf.sql. Every API request needs them, and the ORM's
select_related costs more CPU to compile than PostgreSQL takes to answer it
(gateway/perf/sql.py). gateway.platform.auth keeps the rows a moment (its _recent) and makes
each request its own instances from them."""
from __future__ import annotations

from functools import lru_cache

from django.db import connection

from gateway.perf import sql
from gateway.platform.models import ApiKey, Merchant


@lru_cache(maxsize=None)
def _key_sql() -> str:
    return (f"SELECT {sql.columns(ApiKey, 'k')}, {sql.columns(Merchant, 'm')} FROM {ApiKey._meta.db_table} k "
            f"JOIN {Merchant._meta.db_table} m ON m.id = k.merchant_id WHERE k.prefix = %s")


def api_key_row(prefix: str) -> tuple | None:
    """The row of the key with this prefix (unique) and of its merchant, or None."""
    with connection.cursor() as cursor:
        cursor.execute(_key_sql(), [prefix])
        return cursor.fetchone()


def api_key_from_row(row: tuple) -> ApiKey:
    """A new ApiKey, with its merchant, from an api_key_row, as the ORM would load them."""
    split = sql.width(ApiKey)
    key = sql.instance(ApiKey, row[:split])
    key.merchant = sql.instance(Merchant, row[split:])
    return key
