"""Separation of duties, tested as a property (issue 29, finding 1): no single staff account can
both obtain a merchant's secret and move that merchant's money.

Before: an administrator alone rotated a merchant's API key with a 720-hour grace, read the new key
(and the new secret key) on the console's page, and refunded through the API. Now no console page
shows a credential: a request by one administrator, approved by a second, is claimed by the
merchant with both their codes (gateway.platform.claims, docs/security.md).

For each kind of account (superuser, each role, both roles at once, a custom group holding the
same permissions directly), one account tries every path open to it: every console page about the
merchant, asking for each rotation (API key with a 720-hour grace), approving its own requests,
onboarding a merchant, switching "signed requests required" off, making itself a second account
to approve with (where it may manage staff), the claim page with whatever codes it was shown,
the management commands an operator would run for it, and the API with every credential-looking
string it saw. It must never hold a working credential; and the accounts that may refund do move
money in the console, so the property is not met by moving nothing."""
from __future__ import annotations

import itertools
import io
import re

import pytest
from django.contrib.auth.models import Group, Permission, User
from django.core.management import call_command
from django.test import Client

from gateway.platform.models import CredentialClaim, Merchant
from payments.models import Payment
from refunds.models import Refund
from tests.support.claims import approve, claim, handed_code, shown_credentials
from tests.support.factories import make_merchant, make_success_payment, refund_body, staff_in

pytestmark = pytest.mark.django_db
PASSWORD = "Separate-duties-29"
CREDENTIAL = re.compile(r"gwk_[A-Za-z0-9_-]{20,}|gws_[0-9a-f]{64}|whsec_[A-Za-z0-9_-]{20,}")
CODE = re.compile(r"\b[0-9a-f]{4}(?:-[0-9a-f]{4}){7}\b")
INLINE = {"api_keys-TOTAL_FORMS": "0", "api_keys-INITIAL_FORMS": "0", "api_keys-MIN_NUM_FORMS": "0",
          "api_keys-MAX_NUM_FORMS": "0"}


def _permissions(*names):
    found = []
    for name in names:
        app_label, codename = name.split(".")
        found.append(Permission.objects.get(content_type__app_label=app_label, codename=codename))
    return found


def superuser():
    return User.objects.create_superuser("root-sod", password=PASSWORD)


def both_roles():
    user = staff_in("administrators", username="adm-fin-sod", password=PASSWORD)
    user.groups.add(Group.objects.get(name="finance"))
    return user


def custom_group():
    user = staff_in(None, username="custom-sod", password=PASSWORD)
    group = Group.objects.create(name="keys-and-money")
    group.permissions.add(*_permissions("gateway.view_merchant", "gateway.add_merchant", "gateway.change_merchant",
                                        "payments.view_payment", "refunds.view_refund", "refunds.initiate_refund",
                                        "auth.add_user", "auth.change_user", "auth.view_user"))
    user.groups.add(group)
    return user


ACCOUNTS = {
    "superuser": superuser,
    "administrators": lambda: staff_in("administrators", username="adm-sod", password=PASSWORD),
    "finance": lambda: staff_in("finance", username="fin-sod", password=PASSWORD),
    "administrators and finance": both_roles,
    "a custom group with the same permissions": custom_group,
}


class Attempt:
    """One account's tries; everything it was shown is kept in `seen`."""

    def __init__(self, user: User):
        self.user = user
        self.client = Client()
        self.client.force_login(user)
        self.seen: list[str] = []

    def record(self, response):
        self.seen.append(response.content.decode(errors="replace") + str(dict(response.headers)))
        return response

    def get(self, url, client=None):
        return self.record((client or self.client).get(url))

    def post(self, url, data=None, client=None):
        return self.record((client or self.client).post(url, data or {}))

    @property
    def text(self) -> str:
        return "\n".join(self.seen)


def try_every_path(attempt: Attempt, shop, payment) -> None:
    merchant = shop.merchant
    page = f"/admin/gateway/merchant/{merchant.pk}/change/"
    # Every console page about the merchant and its money.
    for url in ("/admin/gateway/merchant/", page, "/admin/gateway/auditrecord/", "/admin/gateway/apikey/",
                f"/admin/payments/payment/{payment.pk}/change/", "/admin/webhooks/webhookdelivery/",
                f"/admin/refunds/refund/initiate/{payment.pk}/", "/admin/refunds/refund/"):
        attempt.get(url)
    # Every rotation, the API key with a 720-hour grace.
    for kind, form in (("api-key", {"grace_hours": 720}), ("secret-key", {}), ("webhook-secret", {"grace_hours": 24})):
        attempt.get(f"/admin/gateway/merchant/{merchant.pk}/rotate/{kind}/")
        attempt.post(f"/admin/gateway/merchant/{merchant.pk}/rotate/{kind}/", form)
    # Onboarding a merchant of its own.
    attempt.post("/admin/gateway/merchant/add/", {"code": "SODNEW", "name": "Own Shop", "is_active": "on",
                                                  "webhook_url": "", "rate_limit": "", **INLINE})
    # Approving its own requests.
    for pending in CredentialClaim.objects.filter(approved_at__isnull=True):
        url = f"/admin/gateway/merchant/{pending.merchant_id}/credentials/{pending.claim_id}/approve/"
        attempt.get(url)
        attempt.post(url)
    # Switching signed requests off (the setting that was meant to stop a key alone).
    attempt.post(page, {"name": merchant.name, "is_active": "on", "s2s_enabled": "on", "webhook_url": "",
                        "rate_limit": "", **INLINE})
    # Making itself a second administrator to approve with, where it may manage staff.
    if attempt.user.has_perm("auth.add_user"):
        attempt.post("/admin/auth/user/add/", {"username": "accomplice", "password1": PASSWORD,
                                               "password2": PASSWORD, "usable_password": "true"})
        accomplice = User.objects.filter(username="accomplice").first()
        if accomplice is not None:
            accomplice.is_staff = True  # (as the change form would; the audit already names its maker)
            accomplice.save(update_fields=["is_staff"])
            accomplice.groups.add(Group.objects.get(name="administrators"))
            other = Client()
            other.force_login(accomplice)
            for pending in CredentialClaim.objects.filter(approved_at__isnull=True):
                attempt.post(f"/admin/gateway/merchant/{pending.merchant_id}/credentials/{pending.claim_id}/approve/",
                             client=other)
    # The claim pages, with every pair of codes it was shown (a code twice included).
    codes = set(CODE.findall(attempt.text))
    for pending in CredentialClaim.objects.all():
        url = f"/credentials/claim/{pending.claim_id}"
        attempt.get(url)
        for first, second in itertools.product(codes, repeat=2):
            attempt.post(url, {"first_code": first, "second_code": second})
    # The commands an operator runs for staff (their output is what staff would be handed).
    for command, args in (("reencrypt_secrets", []), ("set_webhook", [shop.code, "https://shop.example/hooks"]),
                          ("settlement_export", ["--merchant", shop.code, "--date", "2026-01-01"])):
        out, err = io.StringIO(), io.StringIO()
        try:
            call_command(command, *args, stdout=out, stderr=err)
        except BaseException as exc:  # a refusal is an answer too
            err.write(str(exc))
        attempt.seen.append(out.getvalue() + err.getvalue())


def refunds_with(found: list[str], shop, payment, api) -> list[int]:
    """The API's answers to a refund made with every API key found, signed with every secret key
    found (and unsigned)."""
    keys = [value for value in found if value.startswith("gwk_")]
    secrets_ = [value for value in found if value.startswith("gws_")] + [None]
    statuses = []
    for key, secret in itertools.product(keys, secrets_):
        signer = type("Holder", (), {"code": shop.code, "secret_key": secret})()
        body = refund_body(signer, payment, refundAmount=100, sign=secret is not None)
        statuses.append(api.post("/api/v2/refunds", body, format="json", HTTP_X_API_KEY=key).status_code)
    return statuses


@pytest.mark.parametrize("account", list(ACCOUNTS))
def test_no_single_staff_account_can_both_obtain_a_merchants_secret_and_move_its_money(account, api):
    shop = make_merchant(code="SODSHOP")
    Merchant.objects.filter(pk=shop.merchant.pk).update(signed_requests_required=True)
    payment = make_success_payment(shop, amount=50_000)
    attempt = Attempt(ACCOUNTS[account]())

    try_every_path(attempt, shop, payment)

    # What the account was shown holds no credential, by pattern or by value...
    found = sorted(set(CREDENTIAL.findall(attempt.text)))
    refunds_before = Refund.objects.filter(payment=payment).count()
    statuses = refunds_with(found, shop, payment, api)
    assert Refund.objects.filter(payment=payment).count() == refunds_before, statuses
    merchant = Merchant.objects.get(pk=shop.merchant.pk)
    for value in (shop.api_key, shop.secret_key, shop.webhook_secret, merchant.secret_key, merchant.webhook_secret):
        assert value not in attempt.text
    assert found == []
    assert merchant.signed_requests_required is True  # not switched off by one account either
    obtained = bool(found)

    # Moving money: the accounts that hold the refund permission do refund in the console.
    console_refund = attempt.client.post(f"/admin/refunds/refund/initiate/{payment.pk}/", {
        "amount": "1.00", "reason": "test", "refund_id": "SOD-1", "confirmed": "True"})
    moved = Refund.objects.filter(payment=payment, refund_id="SOD-1").exists()
    assert moved == attempt.user.has_perm("refunds.initiate_refund"), console_refund.status_code
    assert not (obtained and moved)


def test_the_two_codes_open_the_claim_once_and_the_rotation_waits_for_a_second_administrator(api):
    shop = make_merchant(code="SODPAIR")
    requester, approver = Client(), Client()
    requester.force_login(staff_in("administrators"))
    approver.force_login(staff_in("administrators"))
    asked = requester.post(f"/admin/gateway/merchant/{shop.merchant.pk}/rotate/api-key/", {"grace_hours": 720})
    first, url = handed_code(asked)
    assert shown_credentials(asked) == {} and shop.merchant.api_keys.count() == 1  # nothing rotated yet
    # One code alone, or the same code twice, opens nothing.
    assert claim(url, first, first).status_code == 400
    approved = approve(shop.merchant, approver)
    second, _ = handed_code(approved)
    assert shown_credentials(approved) == {} and shop.merchant.api_keys.count() == 2
    assert claim(url, first, "0000-" * 7 + "0000").status_code == 400
    opened = claim(url, first, second, REMOTE_ADDR="203.0.113.9")
    values = shown_credentials(opened)
    assert set(values) == {"merchantId", "apiKey"} and "no-store" in opened["Cache-Control"]
    from gateway.core import crypto
    from gateway.platform.models import ApiKey

    assert ApiKey.objects.filter(merchant=shop.merchant, key_hash=crypto.hash_api_key(values["apiKey"])).exists()
    # Once only; the use is audited with the address; nothing of it stays in the claim.
    assert shown_credentials(claim(url, first, second)) == {}
    done = CredentialClaim.objects.get()
    assert done.values_encrypted == "" and done.claimed_from == "203.0.113.9"
    from gateway.platform.models import AuditRecord

    record = AuditRecord.objects.get(action="merchant.credentials_claim")
    assert record.actor_name == "merchant" and record.after["address"] == "203.0.113.9"
    assert values["apiKey"] not in str(list(AuditRecord.objects.values("before", "after")))


def test_five_wrong_tries_void_a_claim():
    shop = make_merchant(code="SODVOID")
    requester = Client()
    requester.force_login(staff_in("administrators"))
    first, url = handed_code(requester.post(f"/admin/gateway/merchant/{shop.merchant.pk}/rotate/secret-key/"))
    second, _ = handed_code(approve(shop.merchant))
    for _ in range(5):
        claim(url, first, "ffff-" * 7 + "ffff")
    assert CredentialClaim.objects.get().state == "void"
    assert shown_credentials(claim(url, first, second)) == {}


def test_an_account_the_requester_made_cannot_approve_their_request():
    shop = make_merchant(code="SODMADE")
    root = Client()
    root.force_login(User.objects.create_superuser("root-maker", password=PASSWORD))
    handed_code(root.post(f"/admin/gateway/merchant/{shop.merchant.pk}/rotate/api-key/", {"grace_hours": 1}))
    root.post("/admin/auth/user/add/", {"username": "made", "password1": PASSWORD, "password2": PASSWORD,
                                        "usable_password": "true"})
    made = User.objects.get(username="made")
    made.is_staff = True
    made.save(update_fields=["is_staff"])
    made.groups.add(Group.objects.get(name="administrators"))
    other = Client()
    other.force_login(made)
    refused = approve(shop.merchant, other)
    assert refused.status_code == 403 and b"root-maker created or changed this account" in refused.content
    assert shop.merchant.api_keys.count() == 1
    assert Payment.objects.count() == 0


def test_turning_signed_requests_off_waits_for_a_second_administrator():
    """Defence in depth: the setting that keeps a key alone from moving money cannot be switched
    off by one administrator."""
    from gateway.platform.models import AuditRecord

    shop = make_merchant(code="SODSIGN")
    Merchant.objects.filter(pk=shop.merchant.pk).update(signed_requests_required=True)
    page = f"/admin/gateway/merchant/{shop.merchant.pk}/change/"
    asker, second = Client(), Client()
    asker.force_login(staff_in("administrators", username="adm-asker"))
    second.force_login(staff_in("administrators", username="adm-second"))
    form = {"name": shop.merchant.name, "is_active": "on", "s2s_enabled": "on", "webhook_url": "", "rate_limit": "",
            **INLINE}
    assert asker.post(page, form).status_code == 302
    assert Merchant.objects.get(pk=shop.merchant.pk).signed_requests_required is True
    waiting = CredentialClaim.objects.get(merchant=shop.merchant, purpose="signed-requests-off")
    approve_url = f"/admin/gateway/merchant/{shop.merchant.pk}/credentials/{waiting.claim_id}/approve/"
    assert approve_url in asker.get(page).content.decode()
    assert asker.post(approve_url).status_code == 403  # not by the one who asked
    assert Merchant.objects.get(pk=shop.merchant.pk).signed_requests_required is True
    assert second.post(approve_url).status_code == 302
    assert Merchant.objects.get(pk=shop.merchant.pk).signed_requests_required is False
    record = AuditRecord.objects.filter(action="merchant.update").latest("created_at")
    assert record.actor_name == "adm-second" and record.after["requested_by"] == "adm-asker"
    assert record.before["signed_requests_required"] is True and record.after["signed_requests_required"] is False
