"""Finance staff send a refund flagged for review to the bank again from the refund list; the
action goes through refunds.services (audited), and staff without the refund permission
cannot run it."""
import pytest
from django.contrib.auth.models import Permission, User

from gateway.platform.models import AuditRecord
from refunds.models import Refund
from tests.support.factories import make_refund, make_success_payment

pytestmark = pytest.mark.django_db


def _staff(username, *codenames):
    user = User.objects.create_user(username, password="pw-not-used", is_staff=True)
    user.user_permissions.add(*Permission.objects.filter(content_type__app_label="refunds", codename__in=codenames))
    return user


def _flagged(merchant) -> Refund:
    payment = make_success_payment(merchant, amount=10_000)
    refund = make_refund(payment, amount=2_500)
    Refund.objects.filter(pk=refund.pk).update(bank_attempts=10, needs_review=True)
    return refund


def _release(client, refund):
    return client.post("/admin/refunds/refund/", {"action": "release_for_retry", "_selected_action": [refund.pk]})


def test_finance_releases_a_flagged_refund_and_it_is_audited(client, merchant):
    refund = _flagged(merchant)
    client.force_login(_staff("finance", "initiate_refund", "view_refund"))
    response = _release(client, refund)
    assert response.status_code == 302
    refund.refresh_from_db()
    assert (refund.needs_review, refund.bank_attempts, refund.status) == (False, 0, "INITIATED")
    assert AuditRecord.objects.get(action="refund.review_release").actor_name == "finance"


def test_staff_without_the_refund_permission_cannot_release(client, merchant):
    refund = _flagged(merchant)
    client.force_login(_staff("support", "view_refund"))
    _release(client, refund)
    refund.refresh_from_db()
    assert refund.needs_review and refund.bank_attempts == 10
    assert not AuditRecord.objects.filter(action="refund.review_release").exists()
