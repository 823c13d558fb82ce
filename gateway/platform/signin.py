"""Console sign-in: who may get in, with what, and the audit trail of every attempt.

Well-kept libraries do the hard parts (docs/security.md says why each):
- django-axes counts failed sign-ins and locks the username, or the client address, out for a
  while (settings.AXES_*).
- django-otp checks TOTP codes from an authenticator app (devices: `manage.py console_totp_enrol`).

The rules, in ConsoleAuthenticationForm and ConsoleAdminSite:
- Staff with an authenticator must give its code at sign-in, in every environment; a wrong
  code is a failed sign-in (audited, and counted by axes like a wrong password).
- In production, whoever holds any permission that moves money, reveals or rotates a secret,
  changes a merchant or gives staff their permissions (roles.SECOND_FACTOR_PERMISSIONS) must have
  one, however they hold it (superuser, a role group, another group, or given directly): without
  it they cannot sign in, and a session without a verified code does not open the console. In
  staging it is optional, so the quick start and the tests sign in with a password alone.
- Five failures for one account from one address lock that pair out (axes); nobody can lock
  an account out from another address. An account guessed at from many addresses is slowed down
  rather than locked: after five failures anywhere, an address that never signed in to it may
  try once every CONSOLE_SIGNIN_SLOWDOWN_SECONDS, while its owner's usual addresses are never
  slowed. A signed-in administrator releases a lock (gateway/console/admin.py).
- Every sign-in, failure and lock-out is an AuditRecord (action console.sign_in,
  console.sign_in_failed, console.locked_out), with the client address; never a password or code.
"""
from __future__ import annotations

from datetime import timedelta

from django import forms
from django.conf import settings
from django.contrib import admin
from django.contrib.admin.forms import AdminAuthenticationForm
from django.contrib.auth import get_user_model
from django.contrib.auth.signals import user_logged_in, user_login_failed
from django.core.exceptions import ValidationError
from django_otp import devices_for_user
from django_otp.forms import OTPAuthenticationFormMixin

from gateway.core.clientip import client_ip
from gateway.platform.roles import SECOND_FACTOR_PERMISSIONS

ENROL_HINT = ("An authenticator app is required in production for staff who can move money, rotate "
              "keys or change merchants. Ask an operator to enrol one: manage.py console_totp_enrol <username>.")


def totp_required(user) -> bool:
    """Whether `user` must sign in with a TOTP code: in production, anyone holding one of
    roles.SECOND_FACTOR_PERMISSIONS, asked through Django's permission check (so a permission given
    directly, through any group, or by being a superuser counts; a group's name never does)."""
    if not settings.IS_PRODUCTION or not getattr(user, "is_authenticated", False):
        return False
    if not user.is_active:
        return False
    return user.is_superuser or any(user.has_perm(permission) for permission in SECOND_FACTOR_PERMISSIONS)


class ConsoleAuthenticationForm(OTPAuthenticationFormMixin, AdminAuthenticationForm):
    """The admin's password form plus an authenticator code, asked of whoever has an
    authenticator and required of the roles totp_required names."""

    otp_device = forms.CharField(required=False, widget=forms.HiddenInput)
    otp_token = forms.CharField(
        label="Authenticator code", required=False,
        help_text="From your authenticator app, if you have one; required in production of staff who can "
                  "move money, rotate keys or change merchants.",
        widget=forms.TextInput(attrs={"autocomplete": "one-time-code", "inputmode": "numeric"}))
    otp_challenge = forms.CharField(required=False, widget=forms.HiddenInput)

    def clean(self):
        account_slowed_down(self.request, self.cleaned_data.get("username") or "")
        cleaned = super().clean()  # the password (through axes), active and staff
        user = self.get_user()
        try:
            device = next(devices_for_user(user), None)
            if device is not None:
                # One authenticator per person (console_totp_enrol replaces it): nothing to choose.
                self.cleaned_data["otp_device"] = device.persistent_id
                self.clean_otp(user)  # sets user.otp_device, which django_otp keeps in the session
            elif totp_required(user):
                raise ValidationError(ENROL_HINT, code="totp_required")
        except ValidationError:
            # The password was right but the sign-in fails: a failure like any other, for the
            # audit log and for axes' count (a stolen password must not allow endless codes).
            self.user_cache = None
            user_login_failed.send(sender=__name__, credentials={"username": user.get_username()},
                                   request=self.request)
            raise
        return cleaned


SLOW_DOWN = ("This account has had many failed sign-ins. From an address it has not signed in from before, "
             "it may be tried once every {seconds} seconds: wait a few seconds and sign in again.")
KNOWN_ADDRESS_DAYS = 30


def account_slowed_down(request, username: str) -> None:
    """Raise a form error when `username` has failed AXES_FAILURE_LIMIT times or more (from any
    addresses) within the cool-off, its last failure is under CONSOLE_SIGNIN_SLOWDOWN_SECONDS
    old, and this request's address never signed in to the account in the last 30 days. A
    refused try is not counted, so it prolongs nothing; the account's usual addresses are never
    slowed, so an attacker spraying from elsewhere cannot keep its owner out."""
    from axes.models import AccessAttempt
    from django.db.models import Max, Sum
    from django.utils import timezone

    if not username or request is None:
        return
    now = timezone.now()
    seen = AccessAttempt.objects.filter(username=username, attempt_time__gte=now - settings.AXES_COOLOFF_TIME) \
        .aggregate(failures=Sum("failures_since_start"), last=Max("attempt_time"))
    if (seen["failures"] or 0) < settings.AXES_FAILURE_LIMIT:
        return
    pause = settings.CONSOLE_SIGNIN_SLOWDOWN_SECONDS
    if seen["last"] is None or (now - seen["last"]).total_seconds() >= pause:
        return
    address = client_ip(request)
    if AccessAttempt.objects.filter(username=username, ip_address=axes_client_ip(request),
                                    failures_since_start__gte=settings.AXES_FAILURE_LIMIT,
                                    attempt_time__gte=now - settings.AXES_COOLOFF_TIME).exists():
        return  # this address is locked out of the account: axes answers (429)
    if _known_address(username, address, since=now - timedelta(days=KNOWN_ADDRESS_DAYS)):
        return
    raise ValidationError(SLOW_DOWN.format(seconds=pause), code="slowed_down")


def _known_address(username: str, address: str, *, since) -> bool:
    """Whether `username` signed in successfully from `address` since `since` (the audit log's
    console.sign_in records carry the address)."""
    from gateway.platform.models import AuditRecord

    user = get_user_model().objects.filter(username=username).first()
    if user is None:
        return False
    return AuditRecord.objects.filter(object_type=get_user_model()._meta.label, object_id=str(user.pk),
                                      action="console.sign_in", after__address=address,
                                      created_at__gte=since).exists()


def sign_in_locks_release(*, user, actor) -> int:
    """Release every sign-in lock and failure count of `user`'s account (every address), as a
    signed-in administrator does from the staff list; audited as staff_user.unlock. Returns how
    many axes records were removed."""
    from axes.utils import reset

    from gateway.platform.services import audit_record

    removed = reset(username=user.get_username())
    audit_record(actor=actor, action="staff_user.unlock", obj=user, after={"released": removed})
    return removed


class ConsoleAdminSite(admin.AdminSite):
    """Django's admin site (the console), whose pages also need a verified second factor from
    the roles that must have one."""

    login_form = ConsoleAuthenticationForm
    login_template = "admin/console/login.html"

    def has_permission(self, request):
        if not super().has_permission(request):
            return False
        user = request.user
        return not totp_required(user) or user.is_verified()


def axes_client_ip(request) -> str | None:
    """The client address for axes' per-address count: gateway.core.clientip's, or None when the
    request has none (a session made in code, not over the network)."""
    address = client_ip(request)
    return None if address == "unknown" else address


# --- the audit trail ------------------------------------------------------------------------------

def _audit(*, action: str, user, username: str, request, **after) -> None:
    from gateway.platform.models import AuditRecord

    AuditRecord.objects.create(
        actor=user if getattr(user, "pk", None) else None, actor_name=username[:150], action=action,
        object_type=get_user_model()._meta.label, object_id=str(getattr(user, "pk", "") or username)[:100],
        after={"address": client_ip(request) if request is not None else None, **after})


def audit_signed_in(sender, request, user, **kwargs) -> None:
    _audit(action="console.sign_in", user=user, username=user.get_username(), request=request,
           second_factor=getattr(user, "otp_device", None) is not None)


def audit_sign_in_failed(sender, credentials, request=None, **kwargs) -> None:
    username = str(credentials.get("username") or "")
    user = get_user_model().objects.filter(username=username).first() if username else None
    _audit(action="console.sign_in_failed", user=user, username=username, request=request)


def audit_locked_out(sender, request, username, ip_address, **kwargs) -> None:
    username = str(username or "")
    user = get_user_model().objects.filter(username=username).first() if username else None
    _audit(action="console.locked_out", user=user, username=username, request=request)


def connect_audit_receivers() -> None:
    from axes.signals import user_locked_out

    user_logged_in.connect(audit_signed_in, dispatch_uid="gateway.platform.signin.signed_in")
    user_login_failed.connect(audit_sign_in_failed, dispatch_uid="gateway.platform.signin.failed")
    user_locked_out.connect(audit_locked_out, dispatch_uid="gateway.platform.signin.locked_out")
