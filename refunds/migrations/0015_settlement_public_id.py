"""A settlement's public id becomes a random `stl_` string (docs/settlements.md): the column is
added empty, every existing settlement gets its own id, then the column is made unique and
required."""
from django.db import migrations, models

import refunds.models


def fill_public_ids(apps, schema_editor):
    Settlement = apps.get_model("refunds", "Settlement")
    for settlement in Settlement.objects.filter(public_id__isnull=True).only("pk").iterator():
        Settlement.objects.filter(pk=settlement.pk).update(public_id=refunds.models.new_settlement_id())


class Migration(migrations.Migration):

    dependencies = [
        ('refunds', '0014_settlement_line_dispute'),
    ]

    operations = [
        migrations.AddField(
            model_name='settlement',
            name='public_id',
            field=models.CharField(editable=False, max_length=24, null=True),
        ),
        migrations.RunPython(fill_public_ids, migrations.RunPython.noop),
        migrations.AlterField(
            model_name='settlement',
            name='public_id',
            field=models.CharField(default=refunds.models.new_settlement_id, editable=False, max_length=24, unique=True),
        ),
    ]
