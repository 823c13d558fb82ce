"""Refund statuses take SabPaisa's names (issue 17): PENDING becomes INITIATED and PROCESSED
becomes SUCCESS; FAILED stays. Existing refunds and their timelines are renamed in place, and
the partial index and the check constraint that name a status follow them.

One transaction: the constraint and the index are dropped, the rows renamed, then both are
created again over the new names, so no moment sees a status the table does not allow.
"""
from django.db import migrations, models

RENAMES = {"PENDING": "INITIATED", "PROCESSED": "SUCCESS"}


def _rename(apps, mapping):
    Refund = apps.get_model("refunds", "Refund")
    RefundEvent = apps.get_model("refunds", "RefundEvent")
    for old, new in mapping.items():
        Refund.objects.filter(status=old).update(status=new)
        RefundEvent.objects.filter(from_status=old).update(from_status=new)
        RefundEvent.objects.filter(to_status=old).update(to_status=new)


def forwards(apps, schema_editor):
    _rename(apps, RENAMES)


def backwards(apps, schema_editor):
    _rename(apps, {new: old for old, new in RENAMES.items()})


class Migration(migrations.Migration):

    dependencies = [
        ("refunds", "0003_refund_console_search_indexes"),
    ]

    operations = [
        migrations.RemoveConstraint(model_name="refund", name="refund_processed_has_reference"),
        migrations.RemoveIndex(model_name="refund", name="refund_pending_created"),
        migrations.AlterField(
            model_name="refund",
            name="status",
            field=models.CharField(choices=[("INITIATED", "Initiated"), ("SUCCESS", "Success"),
                                            ("FAILED", "Failed")],
                                   db_index=True, default="INITIATED", max_length=10),
        ),
        migrations.AlterField(
            model_name="refund",
            name="needs_review",
            field=models.BooleanField(default=False,
                                      help_text="the bank never answered; left INITIATED for staff to check"),
        ),
        migrations.RunPython(forwards, backwards),
        migrations.AddIndex(
            model_name="refund",
            index=models.Index(condition=models.Q(("status", "INITIATED")), fields=["created_at"],
                               name="refund_initiated_created"),
        ),
        migrations.AddConstraint(
            model_name="refund",
            constraint=models.CheckConstraint(
                condition=models.Q(("status", "SUCCESS"), _negated=True)
                | models.Q(("bank_refund_reference", ""), _negated=True),
                name="refund_success_has_reference"),
        ),
    ]
