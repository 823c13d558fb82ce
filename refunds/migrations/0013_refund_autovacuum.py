"""Autovacuum keeps up with the refunds table (issue 30). The refund list's totalElements is a
count of the merchant's matching refunds, answered from the index alone (an index-only scan)
only for heap pages the visibility map marks all-visible; a page with a refund inserted or
changed since the last VACUUM is read from the table instead. PostgreSQL's defaults vacuum a
table after a fifth of it has changed (autovacuum_vacuum_scale_factor and
autovacuum_vacuum_insert_scale_factor, 0.2): at 500,000 refunds, months of the newest ones,
which are the ones every first page counts. Measured at 5 million payments: the largest
merchant's count (15,980 refunds) visited 9,261 table pages (37 ms) before a VACUUM and none
after it (1.5 ms, index-only; docs/performance.md).
Setting a table's storage parameters takes a SHARE UPDATE EXCLUSIVE lock, which blocks neither
reads nor writes: safe while the old code serves. SQLite (the quick start) has no autovacuum."""
from django.db import migrations

TABLE = "refunds_refund"
SETTINGS = ("autovacuum_vacuum_scale_factor = 0.02, autovacuum_vacuum_insert_scale_factor = 0.02, "
            "autovacuum_analyze_scale_factor = 0.02")
RESET = "autovacuum_vacuum_scale_factor, autovacuum_vacuum_insert_scale_factor, autovacuum_analyze_scale_factor"


def forwards(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute(f"ALTER TABLE {TABLE} SET ({SETTINGS})")


def backwards(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute(f"ALTER TABLE {TABLE} RESET ({RESET})")


class Migration(migrations.Migration):
    dependencies = [
        ("refunds", "0012_disputes"),
    ]

    operations = [migrations.RunPython(forwards, backwards, elidable=False)]
