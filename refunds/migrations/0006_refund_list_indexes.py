"""Indexes for the refund list with its filters and pages (issue 17): a merchant's refunds by
creation time, all of them or one status. Built concurrently, so a live refunds table keeps
taking writes while they are made. SQLite (the quick start) has no such thing and builds them
the ordinary way."""
from django.contrib.postgres.operations import AddIndexConcurrently
from django.db import migrations, models


class AddIndexConcurrentlyOnPostgres(AddIndexConcurrently):
    """CREATE INDEX CONCURRENTLY on PostgreSQL; a plain AddIndex on any other database."""

    def database_forwards(self, app_label, schema_editor, from_state, to_state):
        if schema_editor.connection.vendor == "postgresql":
            return super().database_forwards(app_label, schema_editor, from_state, to_state)
        return migrations.AddIndex.database_forwards(self, app_label, schema_editor, from_state, to_state)

    def database_backwards(self, app_label, schema_editor, from_state, to_state):
        if schema_editor.connection.vendor == "postgresql":
            return super().database_backwards(app_label, schema_editor, from_state, to_state)
        return migrations.AddIndex.database_backwards(self, app_label, schema_editor, from_state, to_state)


class Migration(migrations.Migration):
    atomic = False

    dependencies = [
        ("refunds", "0005_refund_reason_500_characters"),
    ]

    operations = [
        AddIndexConcurrentlyOnPostgres(
            model_name="refund",
            index=models.Index(fields=["merchant", "created_at", "id"], name="refund_merchant_created"),
        ),
        AddIndexConcurrentlyOnPostgres(
            model_name="refund",
            index=models.Index(fields=["merchant", "status", "created_at", "id"],
                               name="refund_merchant_status_created"),
        ),
    ]
