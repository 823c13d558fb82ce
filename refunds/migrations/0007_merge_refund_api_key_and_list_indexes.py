# Merges i18-security's 0004_refund_api_key with issue 17's refund migrations (statuses, reason, list indexes).

from django.db import migrations


class Migration(migrations.Migration):

    dependencies = [
        ('refunds', '0004_refund_api_key'),
        ('refunds', '0006_refund_list_indexes'),
    ]

    operations = [
    ]
