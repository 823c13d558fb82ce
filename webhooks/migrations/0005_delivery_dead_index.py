"""The needs-attention queue's dead deliveries (issue 30): without this index the queue read
every delivery of the log. Built CONCURRENTLY, outside a transaction: on a live log of millions
of deliveries a plain CREATE INDEX would hold up every delivery's write while it builds
(docs/operations.md, "Upgrading with zero downtime"). SQLite (the quick start) builds it the
ordinary way."""
from importlib import import_module

from django.db import migrations, models

# The refund list's indexes built the same way first (refunds 0006): one operation, not a copy.
AddIndexConcurrentlyOnPostgres = import_module("refunds.migrations.0006_refund_list_indexes").AddIndexConcurrentlyOnPostgres


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
