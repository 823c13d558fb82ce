"""What the checkout pages show: amounts in rupees, the time left, the UPI QR code, the
context every page shares and the methods page."""
from __future__ import annotations

import base64
import io
import math
from dataclasses import dataclass, field
from urllib.parse import urlsplit

from django.conf import settings
from django.shortcuts import render
from django.urls import reverse
from django.utils import timezone
from django.utils.html import format_html
from django.utils.translation import gettext, ngettext
from django.utils.translation import gettext_lazy as _

from gateway.platform.brand import accent_palette
from gateway.core.errors import GatewayError
from gateway.platform.models import Merchant, MerchantBrand
from gateway.core.money import format_inr  # views import it from here too
from payments.acquirer import get_acquirer
from payments.acquirer.base import CardFields
from payments.checkout.availability import methods_on_page, usable_methods, with_degraded_notices
from payments.models import Payment, PaymentEvent
from payments.services.hosted.customer import customer_phone_needed
from payments.services.acquirer_methods import acquirer_for_method, method_choices
from tokens.selectors import token_for_checkout
from tokens.services import card_consent_text

M = Payment.Mode

METHODS = (
    (M.UPI, "UPI", _("Pay with any UPI app: scan the QR code or enter your UPI ID")),
    (M.CARD, _("Card"), _("Credit or debit card: Visa, Mastercard, RuPay, Amex")),
    (M.NB, _("Net banking"), _("Pay from your bank account")),
    (M.WALLET, _("Wallet"), ""),  # the hint: the acquirer's wallets (render_methods)
    (M.NEFT, "NEFT", _("Bank transfer from your internet banking")),
    (M.RTGS, "RTGS", _("Real-time bank transfer, usually for large amounts")),
    (M.CHALLAN, _("Cash challan"), _("Print a challan and pay in cash at a bank branch")),
)


# Card-network and UPI-app marks (static/checkout/marks/, vendored from simple-icons by
# scripts/vendor-marks; their provenance and licence are beside them), by method.
MARKS = {
    M.CARD: [("visa", "Visa"), ("mastercard", "Mastercard"), ("americanexpress", "American Express"),
             ("dinersclub", "Diners Club")],
    M.UPI: [("googlepay", "Google Pay"), ("phonepe", "PhonePe"), ("paytm", "Paytm")],
}


def marks_of(code: str) -> list[dict]:
    return [{"src": f"checkout/marks/{slug}.svg", "name": name} for slug, name in MARKS.get(code, [])]


def time_left(deadline) -> dict:
    seconds = max(0, int((deadline - timezone.now()).total_seconds()))
    minutes = math.ceil(seconds / 60)
    if seconds >= 2 * 86400:  # a payment link lasts up to 30 days
        days = round(seconds / 86400)
        text = ngettext("%(count)d day", "%(count)d days", days) % {"count": days}
    elif seconds >= 2 * 3600:
        hours = round(seconds / 3600)
        text = ngettext("%(count)d hour", "%(count)d hours", hours) % {"count": hours}
    elif minutes > 1:
        text = ngettext("%(count)d minute", "%(count)d minutes", minutes) % {"count": minutes}
    else:
        text = gettext("less than a minute") if seconds < 60 else gettext("1 minute")
    return {"seconds": seconds, "text": text, "deadline": deadline}


def qr_data_uri(text: str) -> str:
    """A QR code of `text`, drawn on the server as SVG (no JavaScript, no external address)."""
    import qrcode
    import qrcode.image.svg

    image = qrcode.make(text, image_factory=qrcode.image.svg.SvgPathFillImage, box_size=10, border=2)
    buffer = io.BytesIO()
    image.save(buffer)
    return "data:image/svg+xml;base64," + base64.b64encode(buffer.getvalue()).decode()


def upi_link_of(payment: Payment) -> str:
    """The payment's UPI link (payments.services.upi), for its QR code and the app button."""
    from payments.services.upi import upi_link

    return upi_link(payment)


@dataclass(frozen=True)
class CheckoutBrand:
    """The merchant as the checkout's header shows it (gateway.platform.brand checked every value)."""

    name: str
    logo_url: str = ""
    palette: dict = field(default_factory=dict)  # CSS variable -> '#rrggbb'; empty: the checkout's own

    @property
    def css(self) -> str:
        return ";".join(f"--{name}:{colour}" for name, colour in self.palette.items())


def checkout_brand(merchant: Merchant) -> CheckoutBrand:
    """The merchant's display name (else its name), logo address and accent colours."""
    brand = MerchantBrand.objects.filter(merchant_id=merchant.pk).defer("logo_png").first()
    if brand is None:
        return CheckoutBrand(merchant.name)
    logo_url = (reverse("checkout:brand-logo", args=[merchant.code, brand.logo_sha256[:16]])
                if brand.logo_sha256 else "")
    return CheckoutBrand(brand.display_name or merchant.name, logo_url,
                         accent_palette(brand.accent_color) if brand.accent_color else {})


def page_context(payment: Payment, **extra) -> dict:
    """What every checkout page shows: the merchant's brand, the amount in rupees, the time
    left, the sandbox banner and the cancel address; `extra` adds the page's own."""
    brand = checkout_brand(payment.merchant)
    context = {
        "payment": payment,
        "brand": brand,
        "merchant_name": brand.name,
        "amount_display": format_inr(payment.amount),
        "time_left": time_left(payment.expires_at),
        "sandbox": not settings.IS_PRODUCTION,
        "cancel_url": reverse("checkout:cancel", args=[payment.payment_id]),
    }
    context.update(extra)
    return context


def offered_methods(payment: Payment) -> list[str]:
    """The codes of the methods the payment can be paid with (payments.checkout.availability)."""
    return usable_methods(payment)


# What the customer reads after a failed attempt, by the method that failed.
ATTEMPT_FAILED_TITLES = {
    M.UPI: _("Your UPI payment did not go through."),
    M.CARD: _("Your card payment did not go through."),
    M.NB: _("Your net banking payment did not go through."),
    M.WALLET: _("Your wallet payment did not go through."),
}


# The gateway's own reasons for a failed attempt (payments/services: the words used when the
# acquirer gave none, or when it could not be asked), as the customer reads them. Any other
# reason is the acquirer's or the bank's own words: shown as they came, as a detail.
OWN_REASONS = {
    "declined by the payer": _("The payment was declined in the UPI app."),
    "declined by the issuer": _("The bank that issued your card declined the payment."),
    "declined by the card network": _("The card network declined the payment."),
    "declined at the bank": _("Your bank declined the payment."),
    "3-D Secure authentication failed": _("The card's 3-D Secure check did not pass."),
    "the bank could not be reached; no money was taken": _("The bank could not be reached."),
    "the card payment could not be started; no money was taken": _("The card payment could not be started."),
}


def failure_text(sentence: str, detail: str = "") -> str:
    """A failure as the page shows it: our `sentence` in the page's language and, when there
    is one, `detail`, the acquirer's or the bank's own words as they came (neither translated
    nor re-cased: they may hold what the customer typed), marked as English for screen readers."""
    if not detail:
        return format_html("{}", sentence)
    return format_html('{} <q class="failure-detail" lang="en" data-failure-detail>{}</q>', sentence, detail)


def attempt_failed(payment: Payment) -> dict | None:
    """Why the payment's last attempt failed, while it is open again (PENDING) after it: the
    failed method, why (our sentence, and the bank's own words as a detail) and how many
    attempts are left."""
    if payment.status != Payment.Status.PENDING or not payment.failed_attempts or not payment.attempt_error:
        return None
    last = (payment.events.filter(kind=PaymentEvent.Kind.STATUS, to_status=Payment.Status.PENDING,
                                  detail__outcome="failed")
            .order_by("-id").values_list("detail", flat=True).first()) or {}
    reason = payment.attempt_error
    own = OWN_REASONS.get(reason)
    return {
        "title": ATTEMPT_FAILED_TITLES.get(last.get("method"), _("Your payment did not go through.")),
        "reason": failure_text(own) if own else failure_text(gettext("The bank gave this reason:"), reason),
        "attempts_left": Payment.MAX_FAILED_ATTEMPTS - payment.failed_attempts,
        "method": last.get("method", ""),
    }


# The phone's app buttons, in the order Indian customers use them most; the acquirer's own
# per-app link where it gives one (Cashfree's payload), and the common link ("any UPI app").
UPI_APPS = (("gpay", "Google Pay"), ("phonepe", "PhonePe"), ("paytm", "Paytm"), ("bhim", "BHIM"))


def upi_app_buttons(intent: dict) -> list[dict]:
    """The buttons the waiting page shows on a phone for a UPI attempt by app (upi_intent_of):
    one per app whose own link the acquirer gave, then "any UPI app" with the common link (the
    phone's chooser)."""
    apps = intent.get("apps") or {}
    buttons = [{"app": code, "label": label, "href": apps[code]} for code, label in UPI_APPS
               if isinstance(apps.get(code), str)]
    return [*buttons, {"app": "any", "label": gettext("Any UPI app"), "href": intent["link"]}]


def render_methods(request, payment: Payment, *, open_method: str = "", errors=None, values=None,
                   status: int = 200):
    """The methods page, `open_method` unfolded and `errors` shown by field; after a failed
    attempt, why it failed (data-attempt="failed", CONTRACT.md). Every method the merchant
    offers, each with its form, or, when it cannot take this payment, why not and which method
    can; one failing on every acquirer that would take it says so (payments.checkout.availability)."""
    pid = payment.payment_id
    failed = attempt_failed(payment)
    open_method = open_method or (failed or {}).get("method", "")
    acquirer = get_acquirer()
    upi_link = upi_link_of(payment) if acquirer.gateway_upi_link_payable else ""
    # The banks and wallets of the acquirer each method would be carried by (not the configured one's).
    banks, wallets = method_choices(payment, M.NB), method_choices(payment, M.WALLET)
    hints = {M.WALLET: ", ".join(wallets.values())}
    labels = {code.value: (label, hints.get(code, hint)) for code, label, hint in METHODS}
    methods = [{"code": shown.code, "label": labels[shown.code][0], "hint": labels[shown.code][1],
                "open": shown.code == open_method, "marks": marks_of(shown.code), "usable": shown.usable,
                "reason": shown.reason, "short": shown.short, "instead": shown.instead,
                "instead_label": labels[shown.instead][0] if shown.instead else "", "degraded": shown.degraded}
               for shown in with_degraded_notices(methods_on_page(payment), payment)]
    # CARD_FORM_MODE=processor: the card is typed into the processor's own fields, which its
    # script draws inside this page (Acquirer.card_fields); our card form is not on the page.
    fields = (acquirer_for_method(payment, M.CARD).card_fields() if settings.CARD_FORM_MODE == "processor"
              and any(method["code"] == M.CARD and method["usable"] for method in methods) else None)
    context = page_context(
        payment, methods=methods, errors=errors or {}, open_method=open_method,
        upi_link=upi_link, upi_qr=qr_data_uri(upi_link) if upi_link else None,
        banks=sorted(banks.items(), key=lambda item: item[1]),
        wallets=sorted(wallets.items(), key=lambda item: item[1]),
        urls={name.replace("-", "_"): reverse(f"checkout:{name}", args=[pid])
              for name in ("upi", "upi-intent", "card", "card-fields", "card-saved", "netbanking", "wallet",
                           "transfer-start", "status", "acquirer-return")},
        card_fields=fields,
        # Tokenisation beta (staging only): the session's saved card, or the consent to save one.
        saved_card=token_for_checkout(payment_pk=payment.pk, merchant_id=payment.merchant_id),
        save_card_text=card_consent_text(payment.merchant.name),
        test_vpas=acquirer.upi_test_vpas,
        # UPI Collect (a typed UPI ID): only where the merchant's setting allows it (NPCI, 2026).
        upi_collect=payment.merchant.upi_collect_allowed,
        phone_suffix="",  # checkout/methods/_phone.html's id suffix: "-app" in UPI's second form
        rtgs_minimum=format_inr(20_000_000),
        card_marks=marks_of(M.CARD),
        attempt_failed=failed,
        # The acquirer requires the customer's mobile number and the session brought none.
        ask_phone=customer_phone_needed(payment),
        values=values or {},
    )
    response = render(request, "checkout/page.html", context, status=status)
    if fields is not None:
        response._csp_replace = card_fields_policy(fields)
    return response


def card_fields_policy(fields: CardFields) -> dict:
    """The page's Content-Security-Policy beside the processor's card fields: its script, its
    fields' frames and its calls from the processor's own origins and ours, nothing else from
    outside (PCI DSS v4 6.4.3; docs/security.md lists the page's scripts)."""
    parts = urlsplit(fields.script)
    return {"script-src": ["'self'", f"{parts.scheme}://{parts.netloc}"], "frame-src": list(fields.origins),
            "connect-src": ["'self'", *fields.origins]}


def mode_label(mode: str) -> str:
    return {code.value: label for code, label, _ in METHODS}.get(mode, "")


def result_outcome(payment: Payment) -> str:
    """Which result the page shows: paid, cancelled, failed or expired."""
    S = Payment.Status
    if payment.status == S.SUCCESS:
        return "paid"
    if payment.status == S.EXPIRED:
        return "expired"
    return "cancelled" if payment.failure_reason == "cancelled by the customer" else "failed"


def plain(exc: GatewayError) -> str:
    """An error's message without the API field name in front, and otherwise as it came: not
    re-cased, since it may begin with what the customer typed ("nobody@ybl is not ...")."""
    message = exc.message
    if exc.field and message.startswith(f"{exc.field}: "):
        message = message[len(exc.field) + 2:]
    return message


# What the page says when a step of the payment could not even start, by error code.
STEP_ERRORS = {
    "PAYMENT_FAILED": _("The bank could not start the payment. No money was taken: try again, or choose "
                        "another method."),
    "SERVICE_UNAVAILABLE": _("The bank did not answer in time. No money was taken: try again in a moment."),
    "VALIDATION_ERROR": _("This step could not be completed. Check the details and try again."),
}
STEP_ERROR_DEFAULT = _("The payment could not be processed. No money was taken: try again, or choose another "
                       "method.")


def step_error(exc: GatewayError, *, vpa: str = "") -> str:
    """A step the customer took that could not start (`exc`), in the page's language: our
    sentence, with the service's or the acquirer's own words as a detail when they say more than
    the code does. A VPA the UPI request could not be sent to (`payerVpa`) is named as the
    customer typed it (`vpa`)."""
    detail = plain(exc) if exc.message != exc.default_message else ""
    if exc.field == "payerVpa" and vpa:
        sentence = gettext("We could not send a payment request to %(vpa)s. Check the UPI ID, or choose "
                           "another method.") % {"vpa": vpa}
    else:
        sentence = str(STEP_ERRORS.get(exc.code, STEP_ERROR_DEFAULT))
    return failure_text(sentence, detail)
