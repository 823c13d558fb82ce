"""The hosted checkout pages. Plain HTML forms (JavaScript optional), CSRF-protected, with the
Content-Security-Policy of settings.CONTENT_SECURITY_POLICY on every page (django-csp's
middleware applied to these views only).

Access: the customer arrives with ?clientSecret=...; a valid secret grants this browser's
session access to that one payment and the customer is sent on to the same address without the
secret (out of the address bar and of later Referer headers). Every other page needs the grant.
A browser holding the grant is never rate limited. Without it, a wrong secret or a page answers
NOT_FOUND and counts against the client address (gateway.clientip: REMOTE_ADDR, or
X-Forwarded-For behind TRUSTED_PROXY_COUNT proxies); too many in a window answer RATE_LIMITED.

Each view reads the payment's state and sends the customer to the page for it: methods while
PENDING, the method's own page while PROCESSING, the merchant's returnUrl once final.
"""
from __future__ import annotations

import base64
import io
import math
from functools import wraps

from csp.middleware import CSPMiddleware
from django.conf import settings
from django.core.cache import cache
from django.http import HttpResponseRedirect
from django.shortcuts import render
from django.urls import reverse
from django.utils import timezone
from django.utils.decorators import decorator_from_middleware
from django.views.decorators.cache import never_cache
from django.views.decorators.debug import sensitive_post_parameters, sensitive_variables
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from gateway.clientip import client_ip
from gateway.errors import GatewayError, NotFound, RateLimited
from gateway.money import rupees_str
from payments.acquirer.sandbox import BANKS, TEST_OTP, UPI_TEST_VPAS, WALLETS
from payments.checkout import forms
from payments.models import Payment
from payments.selectors import payment_get_for_checkout, payment_get_hosted
from payments.services import hosted
from payments.state import InvalidTransition
from tokens.selectors import token_for_checkout
from tokens.services import card_consent_text

S = Payment.Status
M = Payment.Mode

SESSION_GRANTS = "checkout_grants"
MAX_GRANTS = 20
# Wrong or missing clientSecrets tolerated per client address in a window. Secrets are 256-bit,
# so this is about probing, not about guessing one.
BAD_SECRET_LIMIT = 20
BAD_SECRET_WINDOW_SECONDS = 900
# How often the waiting page reloads itself (meta refresh: no JavaScript needed).
STATUS_REFRESH_SECONDS = 3

METHODS = (
    (M.UPI, "UPI", "Pay with any UPI app: scan the QR code or enter your UPI ID"),
    (M.CARD, "Card", "Credit or debit card: Visa, Mastercard, RuPay, Amex"),
    (M.NB, "Net banking", "Pay from your bank account"),
    (M.WALLET, "Wallet", "Paytm, PhonePe, Amazon Pay, MobiKwik"),
    (M.NEFT, "NEFT", "Bank transfer from your internet banking"),
    (M.RTGS, "RTGS", "Real-time bank transfer, usually for large amounts"),
    (M.CHALLAN, "Cash challan", "Print a challan and pay in cash at a bank branch"),
)

TRANSFER_LABELS = {M.NEFT: "NEFT", M.RTGS: "RTGS", M.CHALLAN: "cash challan"}

checkout_csp = decorator_from_middleware(CSPMiddleware)


def checkout_page(view):
    """Every checkout and sandbox page: the CSP header, and never cached. (A GatewayError a
    view raises becomes the JSON envelope in gateway.middleware.ApiErrorMiddleware.)"""
    return checkout_csp(never_cache(view))


def sandbox_only(view):
    """The sandbox pages stand in for banks and customers' transfers: 404 in production."""
    @wraps(view)
    def wrapped(request, *args, **kwargs):
        if settings.IS_PRODUCTION:
            raise NotFound()
        return view(request, *args, **kwargs)
    return wrapped


# --- access ---------------------------------------------------------------------------------

def _bad_secret_key(request) -> str:
    return f"checkout:badsecret:{client_ip(request)}"


def _ensure_not_limited(request) -> None:
    if (cache.get(_bad_secret_key(request)) or 0) >= BAD_SECRET_LIMIT:
        raise RateLimited("too many invalid checkout links from this address; try again later",
                          headers={"Retry-After": str(BAD_SECRET_WINDOW_SECONDS)})


def _count_bad_secret(request) -> None:
    key = _bad_secret_key(request)
    cache.add(key, 0, timeout=BAD_SECRET_WINDOW_SECONDS)
    try:
        cache.incr(key)
    except ValueError:  # evicted between add and incr
        cache.set(key, 1, timeout=BAD_SECRET_WINDOW_SECONDS)


def _grant(request, payment: Payment) -> None:
    grants = [pid for pid in request.session.get(SESSION_GRANTS, []) if pid != payment.payment_id]
    request.session[SESSION_GRANTS] = (grants + [payment.payment_id])[-MAX_GRANTS:]


def _has_grant(request, payment_id: str) -> bool:
    return payment_id in request.session.get(SESSION_GRANTS, [])


def _granted_payment(request, payment_id: str) -> Payment:
    """The payment this browser was given access to. The grant is checked first: a customer who
    has access is never limited, however much others behind the same address (a NAT, an office,
    a carrier) probe. Without it: RATE_LIMITED once the address is over the limit, else
    NOT_FOUND (counted)."""
    if _has_grant(request, payment_id):
        return payment_get_hosted(payment_id=payment_id)
    _ensure_not_limited(request)
    _count_bad_secret(request)
    raise NotFound()


# --- where the customer goes next -----------------------------------------------------------

def _step_url(payment: Payment) -> str:
    """The page for a payment that is not final."""
    pid = payment.payment_id
    if payment.status == S.PENDING:
        return reverse("checkout:page", args=[pid])
    if payment.payment_mode == M.CARD:
        return reverse("checkout:card-otp", args=[pid])
    if payment.payment_mode in hosted.TRANSFER_MODES:
        return reverse("checkout:transfer", args=[pid])
    if payment.payment_mode in hosted.BANK_MODES and not settings.IS_PRODUCTION:
        return reverse("checkout:sandbox-bank", args=[pid])
    return reverse("checkout:status", args=[pid])


def _go_on(payment: Payment, *, here: str | None = None):
    """None when the customer is on the right page (`here`), else the redirect: to the
    merchant once final (recorded), else to the page for the payment's state. 303, so a POST
    is followed by a GET."""
    payment.refresh_from_db()
    payment = hosted.hosted_expire_if_due(payment)
    if payment.is_final:
        return HttpResponseRedirect(hosted.hosted_redirect(payment), status=303)
    url = _step_url(payment)
    if here is not None and url == here:
        return None
    return HttpResponseRedirect(url, status=303)


def _plain(exc: GatewayError) -> str:
    """An error's message for a person: without the API field name in front, capitalised."""
    message = exc.message
    if exc.field and message.startswith(f"{exc.field}: "):
        message = message[len(exc.field) + 2:]
    return message[:1].upper() + message[1:]


# --- display --------------------------------------------------------------------------------

def format_inr(paise: int) -> str:
    """₹ with Indian digit grouping: 12345678 paise -> '₹1,23,456.78'."""
    whole, fraction = rupees_str(paise).split(".")
    if len(whole) > 3:
        head, tail = whole[:-3], whole[-3:]
        groups = []
        while len(head) > 2:
            groups.insert(0, head[-2:])
            head = head[:-2]
        if head:
            groups.insert(0, head)
        whole = ",".join(groups + [tail])
    return f"₹{whole}.{fraction}"


def _time_left(deadline) -> dict:
    seconds = max(0, int((deadline - timezone.now()).total_seconds()))
    minutes = math.ceil(seconds / 60)
    if seconds >= 2 * 3600:
        text = f"{round(seconds / 3600)} hours"
    elif minutes > 1:
        text = f"{minutes} minutes"
    else:
        text = "less than a minute" if seconds < 60 else "1 minute"
    return {"seconds": seconds, "text": text, "deadline": deadline}


def _qr_data_uri(text: str) -> str:
    """A QR code of `text`, drawn on the server as SVG (no JavaScript, no external address)."""
    import qrcode
    import qrcode.image.svg

    image = qrcode.make(text, image_factory=qrcode.image.svg.SvgPathFillImage, box_size=10, border=2)
    buffer = io.BytesIO()
    image.save(buffer)
    return "data:image/svg+xml;base64," + base64.b64encode(buffer.getvalue()).decode()


def _upi_link(payment: Payment) -> str:
    from payments.services.upi import upi_link

    return upi_link(payment)


def _context(request, payment: Payment, **extra) -> dict:
    merchant = payment.merchant
    context = {
        "payment": payment,
        "merchant_name": merchant.name,
        "amount_display": format_inr(payment.amount),
        "time_left": _time_left(payment.expires_at),
        "sandbox": not settings.IS_PRODUCTION,
        "cancel_url": reverse("checkout:cancel", args=[payment.payment_id]),
    }
    context.update(extra)
    return context


def _render_methods(request, payment: Payment, *, open_method: str = "", errors=None, status: int = 200):
    pid = payment.payment_id
    upi_link = _upi_link(payment)
    methods = [{"code": code.value, "label": label, "hint": hint, "open": code.value == open_method}
               for code, label, hint in METHODS]
    context = _context(
        request, payment, methods=methods, errors=errors or {}, open_method=open_method,
        upi_link=upi_link, upi_qr=_qr_data_uri(upi_link),
        banks=sorted(BANKS.items(), key=lambda item: item[1]),
        wallets=sorted(WALLETS.items(), key=lambda item: item[1]),
        urls={name.replace("-", "_"): reverse(f"checkout:{name}", args=[pid])
              for name in ("upi", "card", "card-saved", "netbanking", "wallet", "transfer-start", "status")},
        # Tokenisation beta (staging only): the session's saved card, or the consent to save one.
        saved_card=token_for_checkout(payment=payment),
        save_card_text=card_consent_text(payment.merchant.name),
        test_vpas=UPI_TEST_VPAS,
        rtgs_minimum=format_inr(20_000_000),
    )
    return render(request, "checkout/page.html", context, status=status)


# --- pages ----------------------------------------------------------------------------------

@checkout_page
@require_GET
def page(request, payment_id: str):
    """The checkout page. With ?clientSecret=: check it, grant access, and continue without
    it. Without: the methods while PENDING, else wherever the payment's state leads."""
    secret = request.GET.get("clientSecret")
    if secret is not None:
        if _has_grant(request, payment_id):
            # The customer opened the merchant's link again: this browser has access already.
            return HttpResponseRedirect(reverse("checkout:page", args=[payment_id]), status=303)
        # Limited before the secret is looked at, so that a limited address learns nothing
        # from the answer (a right secret must not be told from a wrong one).
        _ensure_not_limited(request)
        payment = payment_get_for_checkout(payment_id=payment_id, client_secret=secret)
        if payment is None:
            _count_bad_secret(request)
            raise NotFound()
        _grant(request, payment)
        return HttpResponseRedirect(reverse("checkout:page", args=[payment_id]), status=303)
    payment = _granted_payment(request, payment_id)
    return _go_on(payment, here=request.path) or _render_methods(request, payment)


@checkout_page
@require_POST
def upi(request, payment_id: str):
    """UPI collect: the customer's UPI app is asked to approve; the waiting page follows."""
    payment = _granted_payment(request, payment_id)
    form = forms.UpiForm(request.POST)
    if not form.is_valid():
        return _render_methods(request, payment, open_method=M.UPI, errors=form.errors)
    from payments.services.upi import upi_pay

    try:
        upi_pay(payment_id=payment.pk, payer_vpa=form.cleaned_data["vpa"])
    except InvalidTransition:
        pass
    except GatewayError as exc:
        return _render_methods(request, payment, open_method=M.UPI, errors={"vpa": [_plain(exc)]})
    return _go_on(payment)


@checkout_page
@sensitive_post_parameters("card_number", "card_expiry", "card_cvv")
@sensitive_variables("form")
@require_POST
def card(request, payment_id: str):
    """Card details in, 3-D Secure challenge (or the decline) out. The number and CVV go to the
    acquirer and nowhere else: on a validation error the page is shown again without them."""
    payment = _granted_payment(request, payment_id)
    form = forms.CardForm(request.POST)
    if not form.is_valid():
        return _render_methods(request, payment, open_method=M.CARD, errors=form.errors)
    # The consent checkbox exists in staging only; a forged one in production is ignored.
    save_card = form.cleaned_data["save_card"] and not settings.IS_PRODUCTION
    try:
        hosted.hosted_card_pay(payment=payment, card=form.cleaned_data["card"], save_card=save_card)
    except InvalidTransition:
        pass
    return _go_on(payment)


@checkout_page
@sensitive_post_parameters("card_cvv")
@sensitive_variables("form")
@require_POST
def card_saved(request, payment_id: str):
    """The saved card of a session created with tokenId (staging beta): CVV in, the same 3-D
    Secure challenge as a typed card out. The CVV goes to the card network and nowhere else."""
    payment = _granted_payment(request, payment_id)
    token = token_for_checkout(payment=payment)
    if token is None:
        return _render_methods(request, payment, open_method=M.CARD, errors={
            "saved_card": ["This saved card is no longer available. Pay with a card or another method."]})
    form = forms.SavedCardForm(request.POST, network=token.network)
    if not form.is_valid():
        return _render_methods(request, payment, open_method=M.CARD, errors=form.errors)
    try:
        hosted.hosted_saved_card_pay(payment=payment, cvv=form.cleaned_data["card_cvv"])
    except InvalidTransition:
        pass
    except GatewayError as exc:
        return _render_methods(request, payment, open_method=M.CARD, errors={"saved_card": [_plain(exc)]})
    return _go_on(payment)


@checkout_page
@require_http_methods(["GET", "POST"])
def card_otp(request, payment_id: str):
    """The 3-D Secure 2.x challenge: the issuer's one-time password."""
    payment = _granted_payment(request, payment_id)
    here = reverse("checkout:card-otp", args=[payment_id])
    redirect = _go_on(payment, here=here)
    if redirect is not None:
        return redirect
    errors = {}
    if request.method == "POST":
        form = forms.OtpForm(request.POST)
        if form.is_valid():
            try:
                hosted.hosted_card_verify_otp(payment=payment, otp=form.cleaned_data["otp"])
            except InvalidTransition:
                pass
            except GatewayError as exc:
                errors = {"otp": [_plain(exc)]}
            else:
                return _go_on(payment)
        else:
            errors = form.errors
    return render(request, "checkout/challenge.html",
                  _context(request, payment, errors=errors, test_otp=TEST_OTP, action=here))


def _bank_start(request, payment_id: str, mode: str, form_class, field: str):
    payment = _granted_payment(request, payment_id)
    form = form_class(request.POST)
    if not form.is_valid():
        return _render_methods(request, payment, open_method=mode, errors=form.errors)
    try:
        hosted.hosted_bank_start(payment=payment, mode=mode, bank_code=form.cleaned_data[field])
    except InvalidTransition:
        pass
    return _go_on(payment)


@checkout_page
@require_POST
def netbanking(request, payment_id: str):
    """The customer picked a bank: on to the bank's page."""
    return _bank_start(request, payment_id, M.NB, forms.BankForm, "bank")


@checkout_page
@require_POST
def wallet(request, payment_id: str):
    """The customer picked a wallet: on to the wallet's page."""
    return _bank_start(request, payment_id, M.WALLET, forms.WalletForm, "wallet")


@checkout_page
@require_POST
def transfer_start(request, payment_id: str):
    """NEFT, RTGS or cash challan: a reference is issued and the challan shown."""
    payment = _granted_payment(request, payment_id)
    form = forms.TransferForm(request.POST)
    if not form.is_valid():
        return _render_methods(request, payment, errors={"mode": ["Choose NEFT, RTGS or cash challan."]})
    try:
        hosted.hosted_transfer_start(payment=payment, mode=form.cleaned_data["mode"])
    except InvalidTransition:
        pass
    return _go_on(payment)


@checkout_page
@require_GET
def transfer(request, payment_id: str):
    """The printable challan: where to pay, the reference to quote, and until when."""
    payment = _granted_payment(request, payment_id)
    redirect = _go_on(payment, here=reverse("checkout:transfer", args=[payment_id]))
    if redirect is not None:
        return redirect
    details = hosted.transfer_details(payment)
    return render(request, "checkout/transfer.html", _context(
        request, payment, transfer=details, time_left=_time_left(payment.expires_at),
        mode_label=TRANSFER_LABELS[payment.payment_mode],
        status_url=reverse("checkout:status", args=[payment_id]),
        sandbox_url=reverse("checkout:sandbox-transfers") + f"?reference={details['reference']}",
    ))


@checkout_page
@require_GET
def status(request, payment_id: str):
    """The waiting page: reloads itself every few seconds until the payment is final, then the
    reload lands on the redirect to the merchant. While PENDING it shows the UPI QR code
    (the customer chose to scan it)."""
    payment = _granted_payment(request, payment_id)
    payment.refresh_from_db()
    payment = hosted.hosted_expire_if_due(payment)
    waiting_here = payment.status == S.PENDING or (
        payment.status == S.PROCESSING and payment.payment_mode in (M.UPI, *hosted.BANK_MODES)
    )
    if not waiting_here:
        return _go_on(payment)
    upi_link = _upi_link(payment) if payment.status == S.PENDING else None
    return render(request, "checkout/status.html", _context(
        request, payment, refresh_seconds=STATUS_REFRESH_SECONDS, upi_link=upi_link,
        upi_qr=_qr_data_uri(upi_link) if upi_link else None,
        back_url=reverse("checkout:page", args=[payment_id]),
    ))


@checkout_page
@require_POST
def cancel(request, payment_id: str):
    """The customer gives up before choosing a method: FAILED, and back to the merchant."""
    payment = _granted_payment(request, payment_id)
    try:
        hosted.hosted_cancel(payment=payment)
    except InvalidTransition:
        pass
    return _go_on(payment)


# --- sandbox pages (staging only) -----------------------------------------------------------

@checkout_page
@sandbox_only
@require_http_methods(["GET", "POST"])
def sandbox_bank(request, payment_id: str):
    """Stands in for the bank's (or wallet's) own page: the tester approves or declines."""
    payment = _granted_payment(request, payment_id)
    here = reverse("checkout:sandbox-bank", args=[payment_id])
    redirect = _go_on(payment, here=here)
    if redirect is not None:
        return redirect
    errors = {}
    if request.method == "POST":
        form = forms.SandboxBankForm(request.POST)
        if form.is_valid():
            try:
                hosted.hosted_bank_complete(payment=payment, approved=form.cleaned_data["decision"] == "approve")
            except InvalidTransition:
                pass
            except GatewayError as exc:  # being confirmed already (another tab), or the bank did not answer
                errors = {"decision": [_plain(exc)]}
            if not errors:
                return _go_on(payment)
    is_wallet = payment.payment_mode == M.WALLET
    provider = (WALLETS if is_wallet else BANKS).get(payment.bank_code, payment.bank_code)
    return render(request, "checkout/sandbox_bank.html",
                  _context(request, payment, provider=provider, is_wallet=is_wallet, action=here, errors=errors))


@checkout_page
@sandbox_only
@require_http_methods(["GET", "POST"])
def sandbox_transfers(request):
    """Stands in for the bank telling us that a NEFT/RTGS transfer or a cash deposit arrived:
    the tester enters the reference from the challan."""
    result, errors = None, {}
    reference = request.GET.get("reference", "")
    if request.method == "POST":
        form = forms.SandboxTransferForm(request.POST)
        if form.is_valid():
            reference = form.cleaned_data["reference"]
            try:
                result = hosted.hosted_transfer_received(reference=reference)
            except GatewayError as exc:
                errors = {"reference": [_plain(exc)]}
        else:
            errors = form.errors
    return render(request, "checkout/sandbox_transfers.html",
                  {"reference": reference, "result": result, "errors": errors,
                   "result_amount": format_inr(result.amount) if result else "", "sandbox": True,
                   "action": reverse("checkout:sandbox-transfers")},
                  status=400 if errors else 200)
