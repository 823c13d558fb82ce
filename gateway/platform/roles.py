"""The console's roles: three Django groups and exactly the permissions each one holds.

The groups belong to this module: `roles_sync` gives each group the permissions listed here and
takes away any other, so "support cannot refund" holds however the groups were edited by hand.
Staff who need more than one role are put in more than one group; a team that wants a role of
its own makes a group with another name, which this module leaves alone.

The data migration gateway/0003 creates the groups, and a post_migrate receiver (connected in
GatewayConfig.ready) syncs them after every `migrate`, so a permission that appears later (a new
model, another app's new custom permission) reaches its group without another migration.

Every console page and action checks one of these permissions, never the group name, so a
superuser (who holds every permission) can do everything and a custom group works the same way.
"""
from __future__ import annotations

import logging

from django.core.exceptions import PermissionDenied

logger = logging.getLogger("gateway.roles")

SUPPORT = "support"
FINANCE = "finance"
ADMINISTRATORS = "administrators"

# Reading every page of the console: the payment, its story, refunds, the webhook log, tokens'
# metadata, merchants (no secret is ever on a page) and the audit log.
READ = (
    "gateway.view_merchant",
    "gateway.view_apikey",
    "gateway.view_auditrecord",
    "payments.view_payment",
    "payments.view_paymentevent",
    "payments.view_reversal",
    "refunds.view_refund",
    "refunds.view_refundevent",
    "webhooks.view_webhookevent",
    "webhooks.view_webhookdelivery",
    "webhooks.view_webhookdeliveryattempt",
    "tokens.view_token",
    "payments.view_paymentlink",
    "payments.view_acquirerroute",
    # Settlements, their reconciliation exceptions and the bank statements (gateway/console/settlements.py).
    "refunds.view_settlement",
    "refunds.view_reconexception",
    "refunds.view_bankstatement",
    # Disputes (chargebacks) and their story (gateway/console/disputes.py, docs/disputes.md).
    "refunds.view_dispute",
    "refunds.view_disputeevent",
)

# What each action of the console checks.
RESEND_WEBHOOK = "webhooks.change_webhookdelivery"  # resend now, send a test event (webhooks/admin.py)
DELETE_TOKEN = "tokens.revoke_token"                # delete a card token through tokens.services (tokens/admin.py)
INITIATE_REFUND = "refunds.initiate_refund"         # start a refund (refunds/admin.py)
EXPORT_SETTLEMENT = "payments.export_settlement"    # settlement CSV (gateway/console/views.py)
# A late approval the acquirer would not reverse, recorded as given back by hand (Needs
# attention): giving a customer money back is what the refund permission is for.
SETTLE_REVERSAL = INITIATE_REFUND
ADD_MERCHANT = "gateway.add_merchant"               # onboard a merchant (credentials shown once)
CHANGE_MERCHANT = "gateway.change_merchant"         # edit a merchant, rotate its key and secrets
CREATE_PAYMENT_LINK = "payments.add_paymentlink"     # make a payment link (payments/admin.py)
CANCEL_PAYMENT_LINK = "payments.cancel_paymentlink"  # cancel an unpaid payment link (payments/admin.py)
# Finance's reconciliation (gateway/console/reconciliation.py): resolve an exception with a note,
# upload a bank statement and reconcile against it.
RESOLVE_RECON_EXCEPTION = "refunds.change_reconexception"
UPLOAD_BANK_STATEMENT = "refunds.add_bankstatement"
# A merchant's acquirer routes (payments/admin.py, issue 33): which processor takes its money,
# so held with the merchant's other settings.
CHANGE_ROUTES = ("payments.add_acquirerroute", "payments.change_acquirerroute", "payments.delete_acquirerroute")
# Accept a dispute or contest it with evidence (gateway/console/dispute_views.py): accepting gives
# the customer the money back, so it is finance's, and needs a second factor like a refund.
ANSWER_DISPUTE = "refunds.answer_dispute"

# Staff accounts and groups: whoever may change them may give themselves any permission above.
MANAGE_STAFF = ("auth.add_user", "auth.change_user", "auth.add_group", "auth.change_group",
                "auth.add_permission", "auth.change_permission")

# What needs a second factor in production (gateway/platform/signin.py), however it is held:
# moving money (refunds, a late approval given back, payment links asking a customer for money),
# revealing or rotating a secret and changing a merchant, and changing who holds what.
SECOND_FACTOR_PERMISSIONS = (INITIATE_REFUND, SETTLE_REVERSAL, CREATE_PAYMENT_LINK, CANCEL_PAYMENT_LINK,
                             EXPORT_SETTLEMENT, ANSWER_DISPUTE, ADD_MERCHANT, CHANGE_MERCHANT, *CHANGE_ROUTES,
                             *MANAGE_STAFF)

_SUPPORT = (*READ, RESEND_WEBHOOK, DELETE_TOKEN)

ROLES: dict[str, tuple[str, ...]] = {
    # Find a payment, read its whole story, resend its webhooks, delete a card token on request.
    SUPPORT: _SUPPORT,
    # Support, plus moving money and reporting on it, and asking customers for money by link.
    FINANCE: (*_SUPPORT, INITIATE_REFUND, EXPORT_SETTLEMENT, CREATE_PAYMENT_LINK, CANCEL_PAYMENT_LINK,
              RESOLVE_RECON_EXCEPTION, UPLOAD_BANK_STATEMENT, ANSWER_DISPUTE),
    # Support, plus the merchants and their credentials; no refunds or exports, so that the
    # people who hold the keys are not also the people who move money (give both groups to
    # someone who must do both).
    ADMINISTRATORS: (*_SUPPORT, ADD_MERCHANT, CHANGE_MERCHANT, *CHANGE_ROUTES),
}


def _split(permission: str) -> tuple[str, str]:
    app_label, codename = permission.split(".", 1)
    return app_label, codename


def roles_sync(*, apps=None, using: str = "default") -> dict[str, list[str]]:
    """Create the role groups if missing and give each exactly the permissions in ROLES.

    `apps` is a migration's historical registry (the global one when None). A permission that
    does not exist yet (its app not migrated) is skipped and returned in the result, role by
    role; the next sync, after the migration that creates it, assigns it. Idempotent."""
    if apps is None:
        from django.apps import apps
    Group = apps.get_model("auth", "Group")
    Permission = apps.get_model("auth", "Permission")
    wanted = {_split(name) for names in ROLES.values() for name in names}
    found = {
        (app_label, codename): pk
        for pk, app_label, codename in Permission.objects.using(using)
        .filter(content_type__app_label__in={app for app, _ in wanted}, codename__in={code for _, code in wanted})
        .values_list("pk", "content_type__app_label", "codename")
    }
    missing: dict[str, list[str]] = {}
    for role, names in ROLES.items():
        group, _ = Group.objects.using(using).get_or_create(name=role)
        ids = [found[_split(name)] for name in names if _split(name) in found]
        absent = [name for name in names if _split(name) not in found]
        if absent:
            missing[role] = absent
        if set(group.permissions.values_list("pk", flat=True)) != set(ids):
            group.permissions.set(ids)
    return missing


def sync_after_migrate(sender, *, using="default", apps=None, **kwargs) -> None:
    """post_migrate receiver. Runs for every app's signal (cheap: a handful of queries), so
    whichever app's permissions are created last, the groups end up complete. `migrate` passes
    its historical registry; `flush` passes none (the global one is current then)."""
    if apps is None:
        from django.apps import apps
    try:
        apps.get_model("auth", "Group")
        apps.get_model("contenttypes", "ContentType")
    except LookupError:  # auth or contenttypes not migrated on this database (yet)
        return
    from django.db import connections

    tables = connections[using].introspection.table_names()
    if "auth_group" not in tables or "auth_permission" not in tables:
        return
    roles_sync(apps=apps, using=using)


def roles_holding(permission: str) -> list[str]:
    """The role groups that hold `permission`, for the console's "ask for this role" hints."""
    return [role for role, names in ROLES.items() if permission in names]


def permission_refusal(user, permission: str, doing: str) -> str | None:
    """None when `user` holds `permission`; else the one refusal every console page and action
    gives: what was refused, the permission it needs, and the roles that hold it."""
    if user.has_perm(permission):
        return None
    holders = " or ".join(roles_holding(permission)) or "no role: a superuser's"
    return f"{doing} needs the permission {permission} (role: {holders})."


def permission_require(user, permission: str, doing: str) -> None:
    """Raise PermissionDenied (the console's 403 page shows its message) unless `user` holds
    `permission`, with permission_refusal's words."""
    refusal = permission_refusal(user, permission, doing)
    if refusal is not None:
        raise PermissionDenied(refusal)


def user_roles(user) -> list[str]:
    """The names of the groups `user` is in (role groups and any other)."""
    if not getattr(user, "is_authenticated", False):
        return []
    return sorted(user.groups.values_list("name", flat=True))
