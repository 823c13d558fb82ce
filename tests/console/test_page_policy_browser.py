"""The Content-Security-Policy on the console and the API docs page (issue 18 item 4), in a real
Chromium: the pages work under it, and the browser reports no violation (no inline script, no
file from elsewhere)."""
from __future__ import annotations

import pytest

from tests.support.factories import staff_in

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]
PASSWORD = "console-policy-pw-1"


def violations_on(page) -> list[str]:
    found = []
    page.on("console", lambda message: found.append(message.text)
            if "Content Security Policy" in message.text or "Content-Security-Policy" in message.text else None)
    return found


def test_the_api_docs_page_renders_every_operation_under_its_policy(chromium, live_server):
    page = chromium.new_page()
    violations = violations_on(page)
    requests = []
    page.on("request", lambda request: requests.append(request.url))
    response = page.goto(f"{live_server.url}/api/docs/")
    assert "script-src 'self'" in response.headers["content-security-policy"]
    page.wait_for_selector(".opblock", timeout=30_000)  # Swagger UI ran and read the schema
    assert page.locator(".opblock").count() >= 8
    assert violations == []
    assert all(url.startswith(live_server.url) for url in requests), requests


def test_the_console_signs_in_and_shows_its_pages_under_its_policy(chromium, live_server):
    staff_in("finance", username="fin-policy", password=PASSWORD)
    page = chromium.new_page()
    violations = violations_on(page)
    page.goto(f"{live_server.url}/admin/login/?next=/admin/")
    page.fill("#id_username", "fin-policy")
    page.fill("#id_password", PASSWORD)
    page.click("input[type=submit]")
    page.wait_for_selector("#find-payment")
    for path in ("/admin/payments/payment/", "/admin/refunds/refund/", "/admin/gateway/auditrecord/"):
        response = page.goto(f"{live_server.url}{path}")
        assert response.status == 200 and "content-security-policy" in response.headers
    assert violations == []
