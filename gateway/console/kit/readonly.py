"""Console pages that show rows and never write them through Django's own forms.

Every app's admin keeps its records this way (payments, refunds, tokens, the webhook log, the
audit log): no add, no change, no delete, and every field shown read-only. What staff may do
to such a record is an admin action or a page of the admin's own that calls a service, checks
its own permission (gateway/platform/roles.py) and is audited.
"""
from __future__ import annotations

from django.contrib.admin.utils import flatten_fieldsets


class ReadOnlyAdminMixin:
    """For a ModelAdmin or an inline: Django's add, change and delete are refused, and every
    field it shows (fields, fieldsets, readonly_fields and the model's own) is read-only."""

    def has_add_permission(self, request, obj=None):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return False

    def get_readonly_fields(self, request, obj=None):
        shown = flatten_fieldsets(self.fieldsets) if self.fieldsets else (self.fields or ())
        return list(dict.fromkeys([*self.readonly_fields, *shown, *(f.name for f in self.model._meta.fields)]))
