"""A payment link's returnUrl carried its token (/pay/<token>), in plain text in the payment's
row, which every console role reads. It now names the link by its id (/pay/<plink_...>)."""
from django.db import migrations


def forwards(apps, schema_editor):
    PaymentLink = apps.get_model("payments", "PaymentLink")
    Payment = apps.get_model("payments", "Payment")
    for link in PaymentLink.objects.select_related("payment").iterator():
        payment = link.payment
        base, marker, _token = payment.return_url.rpartition("/pay/")
        if marker:
            Payment.objects.filter(pk=payment.pk).update(return_url=f"{base}/pay/{payment.merchant_txn_id}")


class Migration(migrations.Migration):
    dependencies = [("payments", "0017_payment_refund_totals")]
    operations = [migrations.RunPython(forwards, migrations.RunPython.noop)]
