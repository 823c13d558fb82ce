"""Staff edit a merchant's brand and payment methods on its console page (issue 19): checked
as gateway.platform.brand and gateway.platform.methods check them, and audited with before and after."""
from __future__ import annotations

import io

import pytest
from PIL import Image

from gateway.platform.models import ApiKey, AuditRecord, Merchant, MerchantBrand
from tests.support.factories import make_merchant

pytestmark = pytest.mark.django_db


@pytest.fixture
def acme(db):
    return make_merchant(code="ACME", name="Acme Traders Pvt Ltd")


def change_url(tm) -> str:
    return f"/admin/gateway/merchant/{tm.merchant.pk}/change/"


def form_data(tm, **changes) -> dict:
    """The change form as the page posts it, untouched, with `changes` applied."""
    merchant = tm.merchant
    data = {"name": merchant.name, "is_active": "on", "s2s_enabled": "on", "webhook_url": "",
            "rate_limit": str(merchant.rate_limit or ""),
            "api_keys-TOTAL_FORMS": "1", "api_keys-INITIAL_FORMS": "1",
            "api_keys-MIN_NUM_FORMS": "0", "api_keys-MAX_NUM_FORMS": "0",
            "api_keys-0-id": ApiKey.objects.get(merchant=merchant).pk, "api_keys-0-merchant": merchant.pk}
    data.update(changes)
    return data


def logo_upload(fmt="PNG", name="logo.png"):
    out = io.BytesIO()
    Image.new("RGB", (600, 200), (20, 60, 160)).save(out, format=fmt)
    out.seek(0)
    out.name = name
    return out


def test_an_administrator_sets_the_brand_and_it_is_audited(as_role, acme):
    console = as_role("administrators")
    response = console.post(change_url(acme), form_data(
        acme, display_name="Acme", accent_color="#0F766E", logo=logo_upload()))
    assert response.status_code == 302, response.content.decode()[:3000]
    brand = MerchantBrand.objects.get(merchant=acme.merchant)
    assert (brand.display_name, brand.accent_color) == ("Acme", "#0f766e")
    assert bytes(brand.logo_png).startswith(b"\x89PNG") and len(brand.logo_sha256) == 64
    record = AuditRecord.objects.get(merchant=acme.merchant, action="merchant.update")
    assert record.before["brand"] == {"display_name": "", "accent_color": "", "logo_sha256": ""}
    assert record.after["brand"] == {"display_name": "Acme", "accent_color": "#0f766e",
                                     "logo_sha256": brand.logo_sha256}
    # The page shows the logo as the checkout will serve it.
    page = console.get(change_url(acme)).content.decode()
    assert f"/checkout/brand/ACME/{brand.logo_sha256[:16]}.png" in page


@pytest.mark.parametrize(("changes", "field", "message"), [
    ({"accent_color": "#facc15"}, "accent_color", "too light"),
    ({"accent_color": "blue"}, "accent_color", "hex colour"),
    ({"logo": "svg"}, "logo", "PNG, JPEG or WebP"),
    ({"method_RTGS_min": "100"}, "method_RTGS_min", "20000000"),
    ({"method_CARD_min": "5000", "method_CARD_max": "4000"}, "method_CARD_min", "above the maximum"),
])
def test_a_bad_brand_or_limit_is_a_form_error_and_nothing_changes(as_role, acme, changes, field, message):
    if changes.get("logo") == "svg":
        svg = io.BytesIO(b'<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>')
        svg.name = "logo.svg"
        changes = {"logo": svg}
    response = as_role("administrators").post(change_url(acme), form_data(acme, **changes))
    assert response.status_code == 200
    errors = response.context["adminform"].form.errors
    assert field in errors and message in " ".join(errors[field]), errors
    assert not MerchantBrand.objects.filter(merchant=acme.merchant).exists()
    assert Merchant.objects.get(pk=acme.merchant.pk).payment_methods == {}
    assert not AuditRecord.objects.filter(action="merchant.update").exists()


def test_an_administrator_changes_the_methods_and_limits_and_it_is_audited(as_role, acme):
    response = as_role("administrators").post(change_url(acme), form_data(
        acme, method_CHALLAN_off="on", method_UPI_min="100", method_UPI_max="5000000"))
    assert response.status_code == 302, response.content.decode()[:3000]
    stored = Merchant.objects.get(pk=acme.merchant.pk).payment_methods
    assert stored == {"UPI": {"enabled": True, "min": 100, "max": 5_000_000},
                      "CHALLAN": {"enabled": False, "min": 100, "max": 19_999_999}}
    record = AuditRecord.objects.get(merchant=acme.merchant, action="merchant.update")
    assert record.before["payment_methods"] == {} and record.after["payment_methods"] == stored


def test_the_form_shows_each_methods_limits_in_paise(as_role, acme):
    page = as_role("administrators").get(change_url(acme)).content.decode()
    assert 'name="method_RTGS_min" value="20000000"' in page
    assert 'name="method_CHALLAN_max" value="19999999"' in page


def test_support_can_read_but_not_change_the_brand_or_methods(as_role, acme):
    support = as_role("support")
    assert support.get(change_url(acme)).status_code == 200
    response = support.post(change_url(acme), form_data(acme, display_name="Hijacked", method_UPI_off="on"))
    assert response.status_code == 403
    assert not MerchantBrand.objects.filter(merchant=acme.merchant).exists()
    assert Merchant.objects.get(pk=acme.merchant.pk).payment_methods == {}


def noisy_png(side: int) -> io.BytesIO:
    """A PNG that does not compress (random pixels): about 3 × side² bytes."""
    import os

    out = io.BytesIO()
    Image.frombytes("RGB", (side, side), os.urandom(side * side * 3)).save(out, format="PNG")
    out.seek(0)
    out.name = "logo.png"
    return out


def test_a_logo_the_console_promises_is_accepted_above_the_apis_64_kib(as_role, acme):
    """Issue 29, finding 8: the page promises 512 KB, but every body over the API's 64 KiB was
    refused with the API's JSON envelope before the form saw it."""
    logo = noisy_png(250)  # about 190 KB
    assert 64 * 1024 < len(logo.getvalue()) < 512 * 1024
    response = as_role("administrators").post(change_url(acme), form_data(acme, logo=logo))
    assert response.status_code == 302, response.content[:500]
    assert MerchantBrand.objects.get(merchant=acme.merchant).logo_sha256


def test_a_logo_over_512_kb_is_a_form_error(as_role, acme):
    logo = noisy_png(440)  # about 580 KB: within the console's body limit, over the logo's
    assert 512 * 1024 < len(logo.getvalue()) < 1024 * 1024 - 64 * 1024
    response = as_role("administrators").post(change_url(acme), form_data(acme, logo=logo))
    assert response.status_code == 200 and response["Content-Type"].startswith("text/html")
    assert "At most 512 KB." in response.content.decode()
    assert not MerchantBrand.objects.filter(merchant=acme.merchant).exists()


def test_a_body_over_the_consoles_limit_gets_an_html_page_not_the_apis_envelope(as_role, acme):
    logo = noisy_png(700)  # about 1.4 MB
    response = as_role("administrators").post(change_url(acme), form_data(acme, logo=logo))
    assert response.status_code == 413 and response["Content-Type"].startswith("text/html")
    page = response.content.decode()
    assert 'data-testid="too-large"' in page and "at most 512 KB" in page
    assert not MerchantBrand.objects.filter(merchant=acme.merchant).exists()
    # The API keeps its own limit and its envelope.
    api = as_role(None).post("/api/v2/refunds", data=b"{" + b" " * (70 * 1024) + b"}",
                             content_type="application/json")
    assert api.status_code == 400 and api.json()["errorCode"] == "VALIDATION_ERROR"


def test_a_console_body_limit_below_the_logo_is_refused_at_start():
    import subprocess
    import sys

    result = subprocess.run([sys.executable, "-c", "import django; django.setup()"], capture_output=True, text=True,
                            env={**__import__("os").environ, "DJANGO_SETTINGS_MODULE": "gateway.settings",
                                 "CONSOLE_MAX_BODY_BYTES": str(300 * 1024)})
    assert result.returncode != 0 and "CONSOLE_MAX_BODY_BYTES" in result.stderr
