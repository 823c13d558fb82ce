"""What a customer reads when a payment fails (issue 26, section 4): the sentence is the page's,
in its language; the bank's (or the acquirer's) own words are kept as a detail, as they came;
what the customer typed is never re-cased (a VPA once came back as "Nobody@ybl")."""
from __future__ import annotations

import re

import pytest

from payments.models import Payment
from tests.payments.hosted.conftest import submit

pytestmark = pytest.mark.django_db


def opened(client, create_session, shop, **overrides) -> str:
    session = create_session(shop, **overrides)
    client.get(f"/checkout/{session['paymentId']}?clientSecret={session['clientSecret']}")
    return session["paymentId"]


def text(html: str) -> str:
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", html))


def notice(html: str) -> str:
    return re.search(r'<div class="alert" role="alert" data-attempt="failed">(.*?)</div>', html, re.S).group(1)


def test_a_declined_upi_payment_reads_in_hindi_with_the_banks_words_as_a_detail(client, create_session, shop):
    pid = opened(client, create_session, shop, language="hi")
    client.post(f"/checkout/{pid}/upi", {"vpa": "failure@sandbox"})
    said = notice(client.get(f"/checkout/{pid}").content.decode())
    assert "आपका UPI पेमेंट नहीं हो पाया।" in said and "बैंक ने यह कारण बताया:" in said
    # The sandbox's words, as it sent them: not translated, not re-cased, marked as English.
    assert re.search(r'<q class="failure-detail" lang="en" data-failure-detail>declined by the payer&#x27;s bank '
                     r'\(sandbox\)</q>', said)
    outside = re.sub(r"<q .*?</q>", "", said, flags=re.S)
    assert not re.search(r"[A-Za-z]{4,}", text(outside).replace("UPI", "")), text(outside)  # no English around it


def test_the_gateways_own_reason_is_translated_whole(client, create_session, shop):
    pid = opened(client, create_session, shop, language="hi")
    payment = Payment.objects.get(payment_id=pid)
    from payments.services.transitions import payment_attempt_failed, payment_mark_processing

    payment_mark_processing(payment_id=payment.pk, payment_mode="NB")
    payment_attempt_failed(payment_id=payment.pk, reason="declined at the bank")
    said = notice(client.get(f"/checkout/{pid}").content.decode())
    assert "आपके बैंक ने पेमेंट अस्वीकार कर दिया।" in said and "declined" not in said and "<q" not in said


@pytest.mark.parametrize("typed", ["nobody@ybl", "Nobody@YBL", "nobody.Kumar@okaxis"])
def test_the_vpa_error_reads_in_hindi_and_keeps_the_vpa_as_typed(client, create_session, shop, typed):
    pid = opened(client, create_session, shop, language="hi")
    html = client.post(f"/checkout/{pid}/upi", {"vpa": typed}).content.decode()
    error = re.search(r'<p id="vpa-error" class="error">(.*?)</p>', html, re.S).group(1)
    assert f"हम {typed} को पेमेंट का अनुरोध नहीं भेज पाए।" in error
    assert re.search(r'<q class="failure-detail" lang="en" data-failure-detail>[^<]*not a sandbox test VPA', error)
    if typed == "nobody@ybl":
        assert "Nobody@ybl" not in html  # the capital the page once added
    assert f'value="{typed}"' in html  # shown back in the field as typed
    assert Payment.objects.get(payment_id=pid).status == "PENDING"


def test_in_english_the_same_error_is_a_sentence_and_the_detail(client, create_session, shop):
    pid = opened(client, create_session, shop, language="en")
    html = client.post(f"/checkout/{pid}/upi", {"vpa": "nobody@ybl"}).content.decode()
    error = text(re.search(r'<p id="vpa-error" class="error">(.*?)</p>', html, re.S).group(1))
    assert error.startswith("We could not send a payment request to nobody@ybl. Check the UPI ID")
    assert "nobody@ybl is not a sandbox test VPA" in error and "Nobody@ybl" not in html


@pytest.mark.browser
def test_a_hindi_customer_sees_the_failure_in_hindi_in_the_browser(checkout, start):
    start(language="hi")
    checkout.click("[data-method=UPI]")
    checkout.fill("input[name=vpa]", "Nobody@ybl")
    submit(checkout, "UPI")
    error = checkout.locator("#vpa-error")
    assert "हम Nobody@ybl को पेमेंट का अनुरोध नहीं भेज पाए।" in error.inner_text()
    assert error.locator("q[lang=en]").count() == 1
    checkout.fill("input[name=vpa]", "failure@sandbox")
    submit(checkout, "UPI")
    failed = checkout.locator("[data-attempt=failed]")
    failed.wait_for()
    assert "बैंक ने यह कारण बताया:" in failed.inner_text()
    assert failed.locator("q[lang=en]").inner_text() == "declined by the payer's bank (sandbox)"


def test_every_reason_translated_whole_is_one_the_services_still_give():
    """OWN_REASONS is keyed by the services' own words: a reworded reason there would quietly
    fall back to 'the bank gave this reason' with English beside it."""
    from pathlib import Path

    from payments.checkout.display import OWN_REASONS

    services = Path(__file__).resolve().parents[3] / "payments" / "services"
    source = "".join(path.read_text() for path in services.rglob("*.py"))
    assert [reason for reason in OWN_REASONS if f'"{reason}"' not in source] == []
