"""The merchant's brand on the checkout (issue 19): display name, logo served by the gateway
under its digest, and the accent colour in the one nonce'd inline style the CSP allows."""
from __future__ import annotations

import io
import re

import pytest
from PIL import Image

from gateway.platform import brand as brand_rules
from gateway.platform.services import BrandChange, merchant_snapshot, merchant_update

pytestmark = pytest.mark.django_db


def set_brand(tm, **fields) -> None:
    merchant_update(merchant=tm.merchant, actor=None, before=merchant_snapshot(tm.merchant),
                    brand=BrandChange(**fields))


def a_logo() -> bytes:
    out = io.BytesIO()
    Image.new("RGB", (300, 100), (15, 118, 110)).save(out, format="PNG")
    return brand_rules.logo_clean(out.getvalue())


def open_page(client, session):
    client.get(f"/checkout/{session['paymentId']}?clientSecret={session['clientSecret']}")
    return client.get(f"/checkout/{session['paymentId']}")


def test_the_checkout_shows_the_display_name_logo_and_accent(client, create_session, shop):
    set_brand(shop, display_name="Chai Point", accent_color="#0f766e", logo_png=a_logo())
    response = open_page(client, create_session(shop))
    html = response.content.decode()
    assert "Pay ₹1,499.00 to Chai Point" in html
    logo = re.search(r'<img class="brand-logo" src="([^"]+)"', html).group(1)
    assert re.fullmatch(r"/checkout/brand/%s/[0-9a-f]{16}\.png" % shop.code, logo)
    # The accent arrives in an inline style whose nonce the page's CSP names, and nowhere else.
    nonce = re.search(r'<style nonce="([^"]+)">:root\{ --brand:#0f766e;--brand-dark:#[0-9a-f]{6};'
                      r'--brand-soft:#[0-9a-f]{6} \}</style>', html).group(1)
    style_src = re.search(r"style-src ([^;]+)", response["Content-Security-Policy"]).group(1)
    assert f"'nonce-{nonce}'" in style_src and "'unsafe-inline'" not in style_src

    image = client.get(logo)
    assert image.status_code == 200 and image["Content-Type"] == "image/png"
    assert image.content.startswith(b"\x89PNG")
    assert "immutable" in image["Cache-Control"] and image["X-Content-Type-Options"] == "nosniff"
    assert image["Content-Security-Policy"] == "default-src 'none'"


def test_without_a_brand_the_checkout_keeps_its_own_look(client, create_session, shop):
    response = open_page(client, create_session(shop))
    html = response.content.decode()
    assert "<style" not in html and "brand-logo" not in html and "Chai Point Stores" in html
    assert "nonce-" not in response["Content-Security-Policy"]


def test_a_logo_address_with_a_stale_digest_or_another_merchant_is_not_found(client, shop):
    from tests.support.factories import make_merchant

    set_brand(shop, display_name="", accent_color="", logo_png=a_logo())
    other = make_merchant()
    digest = shop.merchant.brand.logo_sha256[:16]
    assert client.get(f"/checkout/brand/{shop.code}/{digest}.png").status_code == 200
    assert client.get(f"/checkout/brand/{shop.code}/{'0' * 16}.png").status_code == 404
    assert client.get(f"/checkout/brand/{other.code}/{digest}.png").status_code == 404
    assert client.get(f"/checkout/brand/{shop.code}/{digest[:8]}.png").status_code == 404


@pytest.mark.browser
def test_in_a_real_browser_the_csp_lets_the_accent_and_logo_through(checkout, start, shop):
    """Chromium enforces the page's CSP: the nonce'd style must apply and the logo must load,
    with no violation reported."""
    set_brand(shop, display_name="Chai Point", accent_color="#0f766e", logo_png=a_logo())
    violations = []
    checkout.on("console", lambda message: violations.append(message.text)
                if "Content Security Policy" in message.text else None)
    start()
    checkout.locator("img.brand-logo").wait_for()
    assert checkout.evaluate("getComputedStyle(document.documentElement).getPropertyValue('--brand').trim()") == "#0f766e"
    assert checkout.evaluate("document.querySelector('img.brand-logo').naturalWidth") > 0
    assert checkout.evaluate("[...document.querySelectorAll('.marks img')].every(img => img.naturalWidth > 0)")
    assert checkout.locator(".topbar .brand").inner_text().strip() == "Chai Point"
    # A phone's header holds the logo, the name, the badge and the language switch: nothing spills.
    assert checkout.evaluate("document.documentElement.scrollWidth <= window.innerWidth")
    assert violations == []
    from tests.payments.hosted.conftest import ARTIFACTS

    checkout.screenshot(path=f"{ARTIFACTS}/checkout-branded-phone.png", full_page=True)
