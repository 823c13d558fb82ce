"""Indexes for the refund list with its filters and pages (issue 17): a merchant's refunds by
creation time, all of them or one status. Built concurrently, so a live refunds table keeps
taking writes while they are made."""
from django.contrib.postgres.operations import AddIndexConcurrently
from django.db import migrations, models


class Migration(migrations.Migration):
    atomic = False

    dependencies = [
        ("refunds", "0005_refund_reason_500_characters"),
    ]

    operations = [
        AddIndexConcurrently(
            model_name="refund",
            index=models.Index(fields=["merchant", "created_at", "id"], name="refund_merchant_created"),
        ),
        AddIndexConcurrently(
            model_name="refund",
            index=models.Index(fields=["merchant", "status", "created_at", "id"],
                               name="refund_merchant_status_created"),
        ),
    ]
