"""Each payment records the acquirer that took it (issue 33). Existing payments were all taken by
the one configured acquirer (GATEWAY_ACQUIRER), so they are given its name: a deployment that
later changes GATEWAY_ACQUIRER still sends their refunds and status queries to the right place."""
from django.conf import settings
from django.db import migrations, models


def configured_acquirer(apps, schema_editor):
    Payment = apps.get_model("payments", "Payment")
    if settings.GATEWAY_ACQUIRER:
        Payment.objects.filter(acquirer="").update(acquirer=settings.GATEWAY_ACQUIRER)


class Migration(migrations.Migration):

    dependencies = [
        ("payments", "0021_sandbox_disputes"),
    ]

    operations = [
        migrations.AddField(
            model_name="payment",
            name="acquirer",
            field=models.CharField(blank=True, db_default="", default="", help_text="the acquirer that took the payment",
                                   max_length=20),
        ),
        migrations.RunPython(configured_acquirer, migrations.RunPython.noop),
    ]
