"""The console's role groups: support, finance, administrators (gateway/platform/roles.py).

Permissions are normally created after the last migration (post_migrate), so this migration
creates them first for every app migrated so far; roles_sync then gives each group its set.
A permission that appears in a later migration reaches its group through the post_migrate
receiver (gateway.platform.roles.sync_after_migrate)."""
from django.contrib.auth.management import create_permissions
from django.db import migrations

from gateway.platform.roles import ROLES, roles_sync


def create_roles(apps, schema_editor):
    alias = schema_editor.connection.alias
    for app_config in apps.get_app_configs():
        app_config.models_module = True
        create_permissions(app_config, apps=apps, verbosity=0, using=alias)
        app_config.models_module = None
    roles_sync(apps=apps, using=alias)


def remove_roles(apps, schema_editor):
    apps.get_model("auth", "Group").objects.using(schema_editor.connection.alias).filter(name__in=ROLES).delete()


class Migration(migrations.Migration):

    dependencies = [
        ("auth", "0012_alter_user_first_name_max_length"),
        ("contenttypes", "0002_remove_content_type_name"),
        ("gateway", "0002_auditrecord_object_index"),
        ("payments", "0004_console_search_indexes"),
        ("refunds", "0001_initial"),
        ("tokens", "0001_initial"),
        ("webhooks", "0001_initial"),
    ]

    operations = [migrations.RunPython(create_roles, remove_roles)]
