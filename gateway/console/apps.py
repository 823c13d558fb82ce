from django.apps import AppConfig
from django.contrib.admin import apps as admin_apps


class ConsoleConfig(AppConfig):
    """The support console's own pages: merchants and staff (admin.py), the dashboard, search,
    a payment's story and the settlement export. It reads each app's selectors; its one table is
    the dashboard's summary of payments (models.py, buckets.py)."""

    name = "gateway.console"
    label = "console"
    verbose_name = "Support console"


class ConsoleAdminConfig(admin_apps.AdminConfig):
    """django.contrib.admin with the console's site: sign-in with a second factor (gateway.platform.signin)."""

    default = False  # named in INSTALLED_APPS
    default_site = "gateway.platform.signin.ConsoleAdminSite"
