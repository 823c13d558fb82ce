"""The refunds table is vacuumed after 2% of it changes, not PostgreSQL's default fifth, so the
refund list's count stays an index-only scan over the newest refunds too (migration 0013,
docs/performance.md)."""
import pytest
from django.db import connection


@pytest.mark.django_db
def test_refunds_table_is_vacuumed_after_two_percent_of_it_changes():
    with connection.cursor() as cursor:
        cursor.execute("SELECT reloptions FROM pg_class WHERE relname = 'refunds_refund'")
        options = set(cursor.fetchone()[0] or [])
    assert {"autovacuum_vacuum_scale_factor=0.02", "autovacuum_vacuum_insert_scale_factor=0.02",
            "autovacuum_analyze_scale_factor=0.02"} <= options
