"""The payments sweep's question for customers left on the acquirer's page (acquirer_pages_reconcile)
reads the open card, bank and wallet payments through this index, instead of every PROCESSING
payment (every open UPI payment among them) once a second. Built CONCURRENTLY, as the refund
list's indexes were (refunds 0006): the payments table keeps taking writes while it builds."""
from importlib import import_module

from django.db import migrations, models

_REFUND_INDEXES = import_module("refunds.migrations.0006_refund_list_indexes")
AddIndexConcurrentlyOnPostgres = _REFUND_INDEXES.AddIndexConcurrentlyOnPostgres


class Migration(migrations.Migration):
    atomic = False

    dependencies = [
        ("payments", "0026_phone_key_constants_in_sql"),
        ("refunds", "0006_refund_list_indexes"),
    ]

    operations = [
        AddIndexConcurrentlyOnPostgres(
            model_name="payment",
            index=models.Index(fields=["id"], name="payment_page_open",
                               condition=models.Q(status="PROCESSING", payment_mode__in=["CARD", "NB", "WALLET"],
                                                  acquirer_call_started_at__isnull=True)),
        ),
    ]
