"""The needs-attention queue's dead deliveries (issue 30): without this index the queue read
every delivery of the log. Built CONCURRENTLY, outside a transaction: on a live log of millions
of deliveries a plain CREATE INDEX would hold up every delivery's write while it builds
(docs/operations.md, "Upgrading with zero downtime"). SQLite (the quick start) builds it the
ordinary way."""
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
        ("webhooks", "0004_webhook_inbox_refused"),
    ]

    operations = [
        AddIndexConcurrentlyOnPostgres(
            model_name="webhookdelivery",
            index=models.Index(fields=["created_at"], name="webhook_delivery_dead", condition=models.Q(status="dead")),
        ),
    ]
