# Fills the payment's refund totals (payments/migrations/0017) from the refunds that exist:
# refunded is the sum of SUCCESS refunds, pending the sum of INITIATED ones (refunds.selectors
# states the rule). From here on refunds keeps them as each refund moves (refunds.services,
# refunds.transitions). One UPDATE, over the payments that have a refund.

from django.db import migrations
from django.db.models import Exists, OuterRef, Subquery, Sum, Value
from django.db.models.functions import Coalesce


def fill(apps, schema_editor):
    Payment = apps.get_model("payments", "Payment")
    Refund = apps.get_model("refunds", "Refund")

    def total(status):
        summed = (Refund.objects.filter(payment=OuterRef("pk"), status=status).order_by()
                  .values("payment").annotate(total=Sum("amount")).values("total"))
        return Coalesce(Subquery(summed), Value(0))

    (Payment.objects.filter(Exists(Refund.objects.filter(payment=OuterRef("pk"))))
     .update(refunded_amount=total("SUCCESS"), refund_pending_amount=total("INITIATED")))


class Migration(migrations.Migration):

    dependencies = [
        ("payments", "0017_payment_refund_totals"),
        ("refunds", "0007_merge_refund_api_key_and_list_indexes"),
    ]

    operations = [
        migrations.RunPython(fill, migrations.RunPython.noop, elidable=True),
    ]
