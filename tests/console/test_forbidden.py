"""Staff refused a console page get an HTML 403 page that says what is missing; API clients
still get the JSON envelope (CONTRACT.md), and a stale console form is a 403 page too."""
import contextvars
import json

import pytest
from django.core.exceptions import PermissionDenied
from django.test import Client, RequestFactory

from gateway.platform.views import permission_denied

pytestmark = pytest.mark.django_db


def test_a_refused_admin_page_is_an_html_403_in_the_console(as_role, shop):
    response = as_role("support").get("/admin/console/settlement-export/")
    assert response.status_code == 403
    assert response["Content-Type"].startswith("text/html")
    html = response.content.decode()
    assert "Permission needed" in html and "payments.export_settlement" in html and "finance" in html
    assert 'id="site-name"' in html  # the console's own header: the page is in the admin's look
    assert "errorCode" not in html


def test_django_admins_own_refusals_are_html_too(as_role, shop):
    response = as_role("support").get("/admin/gateway/merchant/add/")
    assert response.status_code == 403 and response["Content-Type"].startswith("text/html")
    assert "does not have the permission" in response.content.decode()


def test_api_paths_keep_the_json_envelope():
    request = RequestFactory().get("/api/v2/payments/enquiry")
    # In a context of its own: outside a request, the envelope would leave its traceId behind.
    response = contextvars.copy_context().run(permission_denied, request, PermissionDenied())
    assert response.status_code == 401 and response["Content-Type"] == "application/json"
    body = json.loads(response.content)
    assert body["success"] is False and body["errorCode"] == "UNAUTHORIZED"


def test_an_unauthenticated_api_call_is_still_the_envelope(client):
    response = client.get("/api/v2/refunds/rfnd_nope")
    assert response["Content-Type"].startswith("application/json")
    assert response.json()["errorCode"] == "UNAUTHORIZED"


def test_a_stale_console_form_is_an_html_403_that_says_to_reload(admin_user, shop):
    client = Client(enforce_csrf_checks=True)
    client.force_login(admin_user)
    response = client.post(f"/admin/gateway/merchant/{shop.merchant.pk}/rotate/secret-key/", {})
    assert response.status_code == 403 and response["Content-Type"].startswith("text/html")
    assert "reload the page" in response.content.decode()


def test_a_missing_console_page_is_an_html_404_in_the_console(as_role, shop):
    response = as_role("support").get("/admin/payments/no-such-page/")
    assert response.status_code == 404 and response["Content-Type"].startswith("text/html")
    html = response.content.decode()
    assert "Page not found" in html and "/admin/payments/no-such-page/" in html
    assert 'id="site-name"' in html and "errorCode" not in html


def test_a_missing_api_path_is_still_the_envelope(client):
    response = client.get("/api/v2/no-such-thing")
    assert response.status_code == 404 and response["Content-Type"].startswith("application/json")
    assert response.json()["errorCode"] == "NOT_FOUND"


def test_every_refusal_is_worded_once_naming_the_permission_and_its_roles(db):
    """One wording, gateway.platform.roles.permission_require, for every page and action that
    refuses: what was refused, the permission and the roles that hold it."""
    from pathlib import Path

    from gateway.platform.roles import permission_require
    from tests.support.factories import staff_in

    root = Path(__file__).resolve().parents[2]
    wordings = [str(path.relative_to(root)) for folder in ("gateway", "payments", "refunds", "tokens", "webhooks")
                for path in (root / folder).rglob("*.py") if "needs the permission" in path.read_text()]
    assert wordings == ["gateway/platform/roles.py"]
    with pytest.raises(PermissionDenied) as refused:
        permission_require(staff_in("support"), "refunds.initiate_refund", "Starting a refund")
    assert str(refused.value) == "Starting a refund needs the permission refunds.initiate_refund (role: finance)."
    permission_require(staff_in("finance"), "refunds.initiate_refund", "Starting a refund")  # held: no refusal
