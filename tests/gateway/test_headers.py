"""Transport and headers (issue 18 item 4): the CSP on every HTML page, the API docs page from
our own static files, and HTTPS, HSTS and secure cookies in production, with /healthz still
answering over plain HTTP."""
from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from cryptography.fernet import Fernet
from django.test import Client

ROOT = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.django_db


def policy(response) -> dict[str, list[str]]:
    header = response["Content-Security-Policy"]
    return {part.split()[0]: part.split()[1:] for part in header.split(";") if part.strip()}


@pytest.mark.parametrize("path", ["/admin/login/", "/sandbox/upi", "/api/docs/"])
def test_html_pages_beyond_checkout_carry_a_policy_without_inline_script(client, path):
    response = client.get(path)
    assert response.status_code == 200
    rules = policy(response)
    assert rules["script-src"] == ["'self'"]
    assert rules["frame-ancestors"] == ["'none'"] and rules["default-src"] == ["'self'"]
    assert "'unsafe-eval'" not in response["Content-Security-Policy"]


def test_the_console_posts_forms_only_to_itself(client):
    assert policy(client.get("/admin/login/"))["form-action"] == ["'self'"]


def test_the_api_docs_page_loads_nothing_from_elsewhere_and_no_inline_script(client):
    response = client.get("/api/docs/")
    html = response.content.decode()
    assert "cdn" not in html.lower() and "https://" not in html
    assert not re.search(r"<script>", html), "an inline script would be refused by the policy"
    sources = re.findall(r'(?:src|href)="([^"]+)"', html)
    assert len(sources) >= 4
    for source in sources:
        assert source.startswith("/"), source
        answer = client.get(source.replace("&amp;", "&"))
        assert answer.status_code == 200, source
        if hasattr(answer, "streaming_content"):
            b"".join(answer.streaming_content)


def test_api_answers_carry_no_page_policy(client):
    response = client.get("/api/schema/?format=json")
    assert response.status_code == 200
    assert "Content-Security-Policy" not in response


# --- production --------------------------------------------------------------------------------

PRODUCTION_PROBE = r"""
import json, django
django.setup()
from django.conf import settings
from django.test import Client
out = {}
plain = Client(HTTP_HOST="pay.example.com")
secure = Client(HTTP_HOST="pay.example.com", HTTP_X_FORWARDED_PROTO="https")
r = plain.get("/api/docs/")
out["docs_plain"] = [r.status_code, r.get("Location")]
r = plain.get("/healthz")
out["healthz_plain"] = [r.status_code, r.get("Location")]
r = secure.get("/admin/login/")
out["login_secure"] = [r.status_code, r.get("Strict-Transport-Security"),
                       bool(r.cookies["csrftoken"]["secure"]) if "csrftoken" in r.cookies else None]
out["session_cookie_secure"] = settings.SESSION_COOKIE_SECURE
print(json.dumps(out))
"""


def run_production(**extra) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GATEWAY_", "DJANGO_"))}
    env.update({"GATEWAY_ENV": "production", "GATEWAY_PUBLIC_URL": "https://pay.example.com",
                "DJANGO_SECRET_KEY": "a-real-production-secret-key-of-enough-length-0123456789abcdef",
                "GATEWAY_ENCRYPTION_KEYS": Fernet.generate_key().decode(), "GATEWAY_ACQUIRER": "cashfree",
                "CASHFREE_CLIENT_ID": "CF1234567890", "CASHFREE_CLIENT_SECRET": "cfsk_ma_prod_0123456789abcdef",
                "DJANGO_SETTINGS_MODULE": "gateway.settings", **extra})
    return subprocess.run([sys.executable, "-c", PRODUCTION_PROBE], cwd=ROOT, capture_output=True,
                          text=True, timeout=120, env=env)


def test_production_redirects_to_https_sends_hsts_and_secure_cookies_but_not_for_healthz():
    result = run_production()
    assert result.returncode == 0, result.stderr
    out = json.loads(result.stdout.strip().splitlines()[-1])
    assert out["docs_plain"] == [301, "https://pay.example.com/api/docs/"]
    status, location = out["healthz_plain"]
    assert status in (200, 503) and location is None  # answered over plain HTTP, not redirected
    status, hsts, csrf_secure = out["login_secure"]
    assert status == 200 and hsts == "max-age=31536000" and csrf_secure is True
    assert out["session_cookie_secure"] is True


def test_production_refuses_a_plain_http_public_url():
    result = run_production(GATEWAY_PUBLIC_URL="http://pay.example.com")
    assert result.returncode != 0
    assert "GATEWAY_PUBLIC_URL must be an https:// address in production" in result.stderr
