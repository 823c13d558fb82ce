"""The hosted checkout pages. Plain HTML forms (JavaScript optional), CSRF-protected, with the
Content-Security-Policy of settings.CONTENT_SECURITY_POLICY on every page (django-csp's
middleware applied to these views only).

Each view reads the payment's state and sends the customer to the page for it (navigation):
methods while PENDING, the method's own page while PROCESSING, the merchant's returnUrl once
final. Who may see a page: access. What a page shows: display.
"""
from __future__ import annotations

from contextlib import contextmanager
from functools import wraps

from django.conf import settings
from django.http import HttpResponse, HttpResponseRedirect, JsonResponse
from django.shortcuts import render
from django.urls import reverse
from django.utils.translation import gettext_lazy as _
from django.views.decorators.debug import sensitive_post_parameters, sensitive_variables
from django.views import i18n as i18n_views
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from gateway.core.clientip import client_ip
from gateway.core.errors import GatewayError, NotFound, ServiceUnavailable
from gateway.platform.models import MerchantBrand
from payments.acquirer import get_acquirer
from payments.acquirer.base import AcquirerError
from payments.checkout import forms
from payments.checkout.availability import refusal
from payments.checkout.access import checkout_page, grant_by_link, grant_by_secret, granted_payment
from payments.checkout.display import (
    format_inr,
    mode_label,
    offered_methods,
    page_context,
    plain,
    qr_data_uri,
    render_methods,
    result_outcome,
    step_error,
    upi_app_buttons,
    upi_link_of,
)
from payments.checkout.navigation import go_on, step_url
from payments.models import Payment
from payments.services import hosted
from payments.services.acquirer_methods import method_choices
from payments.services.call_budget import CallBudgetSpent
from payments.services.links import payment_link_customer_cancel, payment_link_of
from payments.state import InvalidTransition
from tokens.selectors import token_for_checkout

S = Payment.Status
M = Payment.Mode

# How often the waiting page reloads itself (meta refresh: no JavaScript needed).
STATUS_REFRESH_SECONDS = 3

TRANSFER_LABELS = {M.NEFT: "NEFT", M.RTGS: "RTGS", M.CHALLAN: _("cash challan")}


class _Step:
    """What became of one step of the customer's payment (_checkout_step)."""

    moved_on = False  # the payment had already left the state the step starts from
    error: str | None = None  # the GatewayError's message for the customer (show_errors only)


@contextmanager
def _checkout_step(*, show_errors: bool = False, vpa: str = ""):
    """Runs one step of the customer's payment (a service call), as every page here runs one.

    InvalidTransition means the payment moved on meanwhile (another tab, the worker, the
    expiry sweep): no error for the customer, because the page that follows (go_on) shows
    where the payment is now; `step.moved_on` records it. With show_errors, any other
    GatewayError becomes `step.error`, what the page shows beside the form (display.step_error:
    our sentence in the customer's language, the service's words as a detail, and `vpa`, the
    UPI ID as the customer typed it, named in it);
    without, it goes on to checkout_page, which answers with the checkout's error page."""
    step = _Step()
    try:
        yield step
    except CallBudgetSpent:
        raise  # not the step's error: the calm page instead (_calm_when_spent)
    except InvalidTransition:
        step.moved_on = True
    except GatewayError as exc:
        if not show_errors:
            raise
        step.error = step_error(exc, vpa=vpa)


def _with_phone(request, payment: Payment, form) -> tuple[dict | None, forms.CustomerPhoneForm]:
    """The method's `form` checked together with the customer's mobile number (asked only when
    the acquirer requires one the payment lacks, forms.CustomerPhoneForm): both forms' errors,
    so the customer sees every one at once, or None when both are valid."""
    phone = forms.CustomerPhoneForm(request.POST, payment=payment)
    valid = form.is_valid() & phone.is_valid()  # not `and`: both are checked
    return (None if valid else {**form.errors, **phone.errors}), phone


def _typed_phone(request) -> dict:
    """The number as typed, shown again beside its error (it is not card data)."""
    return {"customer_phone": request.POST.get("customer_phone", "")[:20]}


def _phone_keep(payment: Payment, phone: forms.CustomerPhoneForm) -> None:
    """Before the method starts: the number the customer gave, kept on the payment (in a
    _checkout_step: a payment moved on meanwhile raises InvalidTransition)."""
    if phone.needed:
        hosted.hosted_customer_phone_set(payment_id=payment.pk, phone=phone.cleaned_data["customer_phone"])
        payment.refresh_from_db()


def _refused(request, payment: Payment, mode: str):
    """The methods page again, saying why, when `payment` cannot be paid by `mode` (a method
    the page shows as not available for this amount, or not at all): the page never offers its
    form, so only a stale tab or a request made by hand gets here. 400, and nothing is written.
    None when `mode` may go ahead (or the payment has moved on: the step then shows where)."""
    if payment.status != S.PENDING:
        return None
    why = refusal(payment, mode)
    if why is None:
        return None
    return render_methods(request, payment, open_method=mode, errors={"mode": [why]}, status=400)


def _calm_when_spent(view):
    """A checkout page that may ask the acquirer: past the session's or the attempt's budget of
    calls (payments.services.call_budget) no call was made, and the customer sees the calm
    page, in the checkout's look and language: what to do now, and nothing alarming. 429,
    with Retry-After."""

    @wraps(view)
    def calm(request, payment_id: str, *args, **kwargs):
        try:
            return view(request, payment_id, *args, **kwargs)
        except CallBudgetSpent as spent:
            payment = granted_payment(request, payment_id)
            payment.refresh_from_db()
            context = page_context(payment, scope=spent.scope, back_url=reverse("checkout:page", args=[payment_id]))
            response = render(request, "checkout/calm.html", {**context, "words": _calm_words(spent, context)},
                              status=429)
            for name, value in spent.headers.items():
                response[name] = value
            return response

    return calm


def _calm_words(spent: CallBudgetSpent, context: dict) -> str:
    """What the calm page says of a spent budget: the attempt's answer is awaited, or the
    session has asked enough. The card fields' script shows the same words (card_fields)."""
    if spent.scope == "attempt":
        return _("We asked the bank about this payment a moment ago, and we are waiting for its answer. "
                 "Wait a minute, then check again.")
    return _("This payment has been tried many times, so we have stopped asking the bank for now. To pay, "
             "go back to %(merchant_name)s and start again.") % {"merchant_name": context["merchant_name"]}


# --- pages ----------------------------------------------------------------------------------

set_language = checkout_page(require_POST(i18n_views.set_language))


@checkout_page
@require_GET
def page(request, payment_id: str):
    """The checkout page. With ?clientSecret=: check it, grant access, and continue without
    it. Without: the methods while PENDING, else wherever the payment's state leads."""
    secret = request.GET.get("clientSecret")
    if secret is not None:
        grant_by_secret(request, payment_id, secret)
        return HttpResponseRedirect(reverse("checkout:page", args=[payment_id]), status=303)
    payment = granted_payment(request, payment_id)
    # ?method=NEFT opens that method (the link "Pay by NEFT instead" of a method that cannot
    # take this amount: no JavaScript needed).
    opened = request.GET.get("method", "")
    return go_on(payment, here=request.path) or render_methods(
        request, payment, open_method=opened if opened in Payment.Mode.values else "")


@checkout_page
@_calm_when_spent
@require_POST
def upi(request, payment_id: str):
    """UPI collect: the customer's UPI app is asked to approve; the waiting page follows."""
    payment = granted_payment(request, payment_id)
    if (refused := _refused(request, payment, M.UPI)) is not None:
        return refused
    if not payment.merchant.upi_collect_allowed:
        # Collect (a typed UPI ID) is off for this merchant (NPCI, 2026): the page offers the app
        # and the QR only, so a stale tab or a forged form gets here. Nothing is sent.
        return render_methods(request, payment, open_method=M.UPI, status=400, errors={"vpa": [
            _("Paying by UPI ID is not available here. Pay with a UPI app or scan the QR code.")]})
    form = forms.UpiForm(request.POST)
    typed = {"vpa": request.POST.get("vpa", "")[:320], **_typed_phone(request)}  # not card data
    errors, phone = _with_phone(request, payment, form)
    if errors:
        return render_methods(request, payment, open_method=M.UPI, errors=errors, values=typed)
    from payments.services.upi import upi_pay

    with _checkout_step(show_errors=True, vpa=form.cleaned_data["vpa"]) as step:
        _phone_keep(payment, phone)
        upi_pay(payment_id=payment.pk, payer_vpa=form.cleaned_data["vpa"])
    if step.error is not None:
        return render_methods(request, payment, open_method=M.UPI, errors={"vpa": [step.error]}, values=typed)
    return go_on(payment)


@checkout_page
@_calm_when_spent
@require_POST
def upi_intent(request, payment_id: str):
    """UPI by app or QR: the attempt's link from the acquirer (payments.services.upi,
    hosted_upi_intent), then the waiting page, which shows it as a QR on a wide screen and as
    app buttons on a phone, and follows the payment to the end."""
    payment = granted_payment(request, payment_id)
    if (refused := _refused(request, payment, M.UPI)) is not None:
        return refused
    phone = forms.CustomerPhoneForm(request.POST, payment=payment)
    if not phone.is_valid():
        return render_methods(request, payment, open_method=M.UPI, errors=phone.errors, values=_typed_phone(request))
    from payments.services.upi import hosted_upi_intent

    with _checkout_step(show_errors=True) as step:
        _phone_keep(payment, phone)
        hosted_upi_intent(payment_id=payment.pk)
    if step.error is not None:
        return render_methods(request, payment, open_method=M.UPI, errors={"upi": [step.error]})
    return go_on(payment)


@checkout_page
@sensitive_post_parameters("card_number", "card_expiry", "card_cvv")
@sensitive_variables("form")
@require_POST
def card(request, payment_id: str):
    """Card details in, 3-D Secure challenge (or the decline) out. The number and CVV go to the
    acquirer and nowhere else: on a validation error the page is shown again without them."""
    payment = granted_payment(request, payment_id)
    if (refused := _refused(request, payment, M.CARD)) is not None:
        return refused
    if settings.CARD_FORM_MODE == "processor":
        # Cards are the processor's fields' here (card_fields): a number posted to our form
        # anyway (a stale tab, a forged form) is neither kept nor sent on.
        return render_methods(request, payment, open_method=M.CARD, status=400, errors={
            "card_number": [_("Enter your card in the card fields below.")]})
    form = forms.CardForm(request.POST)
    errors, phone = _with_phone(request, payment, form)
    if errors:
        return render_methods(request, payment, open_method=M.CARD, errors=errors, values=_typed_phone(request))
    # The consent checkbox exists in staging only; a forged one in production is ignored.
    save_card = form.cleaned_data["save_card"] and not settings.IS_PRODUCTION
    with _checkout_step():
        _phone_keep(payment, phone)
        started = hosted.hosted_card_start(payment=payment, card=form.cleaned_data["card"], save_card=save_card)
        if started.link:  # 3-D Secure on the issuer's own page; back through acquirer_return
            return HttpResponseRedirect(started.link, status=303)
    return go_on(payment)


# What our own card form calls its fields: never posted to the processor's fields' view.
OWN_CARD_FIELDS = ("card_number", "card_expiry", "card_cvv")


@checkout_page
@require_POST
def card_fields(request, payment_id: str):
    """CARD_FORM_MODE=processor: the customer pressed Pay beside the processor's own card fields
    (static/checkout/card-fields.js). The attempt opens at the processor (hosted_card_fields_open)
    and the page gets, as JSON, what the fields pay with and where the customer comes back to;
    the fields then send the card from the browser to the processor. Nothing of the card is
    posted here: a request carrying a field of our own card form is refused unread."""
    payment = granted_payment(request, payment_id)
    if any(name in request.POST for name in OWN_CARD_FIELDS):
        return JsonResponse({"errors": {"card": [_("Card details are not taken here.")]}}, status=400)
    if payment.status == S.PENDING and (why := refusal(payment, M.CARD)) is not None:
        return JsonResponse({"errors": {"card": [why]}}, status=400)
    phone = forms.CustomerPhoneForm(request.POST, payment=payment)
    if not phone.is_valid():
        return JsonResponse({"errors": {name: [str(message) for message in messages]
                                        for name, messages in phone.errors.items()}}, status=400)
    try:
        with _checkout_step(show_errors=True) as step:
            _phone_keep(payment, phone)
            session = hosted.hosted_card_fields_open(payment=payment)
    except CallBudgetSpent as spent:  # the calm page's words, where the fields' script shows errors
        return JsonResponse({"errors": {"card": [_calm_words(spent, page_context(payment))]}}, status=429,
                            headers=spent.headers)
    if step.error is not None:
        return JsonResponse({"errors": {"card": [step.error]}}, status=400)
    if step.moved_on:  # another tab went on meanwhile: the page for where it is now
        payment.refresh_from_db()
        return JsonResponse({"next": step_url(payment) if not payment.is_final
                             else reverse("checkout:result", args=[payment_id])}, status=409)
    return JsonResponse({"paymentSessionId": session,
                         "back": reverse("checkout:acquirer-return", args=[payment_id])})


@checkout_page
@sensitive_post_parameters("card_cvv")
@sensitive_variables("form")
@require_POST
def card_saved(request, payment_id: str):
    """The saved card of a session created with tokenId (staging beta): CVV in, the same 3-D
    Secure challenge as a typed card out. The CVV goes to the card network and nowhere else."""
    payment = granted_payment(request, payment_id)
    if (refused := _refused(request, payment, M.CARD)) is not None:
        return refused
    token = token_for_checkout(payment_pk=payment.pk, merchant_id=payment.merchant_id)
    if token is None:
        return render_methods(request, payment, open_method=M.CARD, errors={
            "saved_card": [_("This saved card is no longer available. Pay with a card or another method.")]})
    form = forms.SavedCardForm(request.POST, network=token.network)
    if not form.is_valid():
        return render_methods(request, payment, open_method=M.CARD, errors=form.errors)
    with _checkout_step(show_errors=True) as step:
        hosted.hosted_saved_card_pay(payment=payment, cvv=form.cleaned_data["card_cvv"])
    if step.error is not None:
        return render_methods(request, payment, open_method=M.CARD, errors={"saved_card": [step.error]})
    return go_on(payment)


@checkout_page
@require_http_methods(["GET", "POST"])
def card_otp(request, payment_id: str):
    """The 3-D Secure 2.x challenge: the issuer's one-time password."""
    payment = granted_payment(request, payment_id)
    here = reverse("checkout:card-otp", args=[payment_id])
    redirect = go_on(payment, here=here)
    if redirect is not None:
        return redirect
    errors = {}
    if request.method == "POST":
        form = forms.OtpForm(request.POST)
        if form.is_valid():
            with _checkout_step(show_errors=True) as step:
                hosted.hosted_card_verify_otp(payment=payment, otp=form.cleaned_data["otp"])
            if step.error is not None:
                errors = {"otp": [step.error]}
            elif not step.moved_on:
                return go_on(payment)
        else:
            errors = form.errors
    return render(request, "checkout/challenge.html",
                  page_context(payment, errors=errors, test_otp=get_acquirer().test_otp, action=here))


def _bank_start(request, payment_id: str, mode: str, form_class, field: str):
    payment = granted_payment(request, payment_id)
    if (refused := _refused(request, payment, mode)) is not None:
        return refused
    # The banks or wallets of the acquirer the method would be carried by, as the page listed them.
    form = form_class(request.POST, codes=method_choices(payment, mode))
    errors, phone = _with_phone(request, payment, form)
    if errors:
        return render_methods(request, payment, open_method=mode, errors=errors, values=_typed_phone(request))
    with _checkout_step():
        _phone_keep(payment, phone)
        started = hosted.hosted_bank_open(payment=payment, mode=mode, bank_code=form.cleaned_data[field])
        if started.link:  # the bank's or wallet's own page; back through acquirer_return
            return HttpResponseRedirect(started.link, status=303)
    return go_on(payment)


@checkout_page
@_calm_when_spent
@require_POST
def netbanking(request, payment_id: str):
    """The customer picked a bank: on to the bank's page."""
    return _bank_start(request, payment_id, M.NB, forms.BankForm, "bank")


@checkout_page
@_calm_when_spent
@require_POST
def wallet(request, payment_id: str):
    """The customer picked a wallet: on to the wallet's page."""
    return _bank_start(request, payment_id, M.WALLET, forms.WalletForm, "wallet")


@checkout_page
@_calm_when_spent
@require_POST
def transfer_start(request, payment_id: str):
    """NEFT, RTGS or cash challan: a reference is issued and the challan shown."""
    payment = granted_payment(request, payment_id)
    form = forms.TransferForm(request.POST)
    mode = request.POST.get("mode", "")
    if mode in hosted.TRANSFER_MODES and (refused := _refused(request, payment, mode)) is not None:
        return refused
    errors, phone = _with_phone(request, payment, form)
    if errors:
        if "mode" in errors:
            return render_methods(request, payment, errors={"mode": [_("Choose NEFT, RTGS or cash challan.")]})
        return render_methods(request, payment, open_method=form.cleaned_data["mode"], errors=errors,
                              values=_typed_phone(request))
    with _checkout_step():
        _phone_keep(payment, phone)
        hosted.hosted_transfer_start(payment=payment, mode=form.cleaned_data["mode"])
    return go_on(payment)


@checkout_page
@_calm_when_spent
@require_GET
def transfer(request, payment_id: str):
    """The printable challan: where to pay, the reference to quote, and until when."""
    payment = granted_payment(request, payment_id)
    redirect = go_on(payment, here=reverse("checkout:transfer", args=[payment_id]))
    if redirect is not None:
        return redirect
    try:
        details = hosted.transfer_details(payment)
    except AcquirerError as exc:
        raise ServiceUnavailable("the bank did not give the account to pay into; try again in a moment") from exc
    return render(request, "checkout/transfer.html", page_context(
        payment, transfer=details, mode_label=TRANSFER_LABELS[payment.payment_mode],
        status_url=reverse("checkout:status", args=[payment_id]),
        sandbox_url=reverse("checkout:sandbox-transfers") + f"?reference={details['reference']}",
    ))


@checkout_page
@require_GET
def status(request, payment_id: str):
    """The waiting page: reloads itself every few seconds until the payment is final, then the
    reload lands on the redirect to the merchant. While PENDING it shows the UPI QR code
    (the customer chose to scan it)."""
    payment = granted_payment(request, payment_id)
    payment.refresh_from_db()
    payment = hosted.hosted_expire_if_due(payment)
    # After a failed attempt the methods page says why; the QR waits there too.
    waiting_here = (payment.status == S.PENDING and not payment.attempt_error) or (
        payment.status == S.PROCESSING and payment.payment_mode in (M.UPI, *hosted.BANK_MODES)
    ) or hosted.acquirer_page_open(payment)
    if not waiting_here:
        return go_on(payment)
    from payments.services.upi import upi_intent_of

    upi_link = (upi_link_of(payment) if payment.status == S.PENDING and M.UPI in offered_methods(payment)
                and get_acquirer().gateway_upi_link_payable else None)
    # Paying by app or QR (hosted_upi_intent): the attempt's link, a QR on a wide screen and app
    # buttons on a phone, until the payment is final.
    intent = upi_intent_of(payment)
    if intent is not None:
        upi_link = intent["link"]
    return render(request, "checkout/status.html", page_context(
        payment, refresh_seconds=STATUS_REFRESH_SECONDS, upi_link=upi_link,
        upi_qr=qr_data_uri(upi_link) if upi_link else None, upi_intent=intent,
        upi_apps=upi_app_buttons(intent) if intent else [],
        back_url=reverse("checkout:page", args=[payment_id]),
        change_method_url=reverse("checkout:upi-change-method", args=[payment_id]),
    ))


@checkout_page
@_calm_when_spent
@require_GET
def acquirer_return(request, payment_id: str):
    """Where the acquirer brings the customer back from its own page (the issuer's 3-D Secure
    page, the bank's, the wallet's): the acquirer's status query decides what became of the
    payment (hosted_customer_return: asked once in a while, however often the customer
    reloads); the redirect's own parameters decide nothing (a processor's signed words among them
    are checked, and a return carrying forged ones is not acted on). Then the result page, or the
    waiting page while the acquirer has no final answer yet."""
    payment = granted_payment(request, payment_id)
    with _checkout_step(show_errors=True):  # being confirmed already, or moved on: go_on shows where
        hosted.hosted_customer_return(payment=payment, said=_said(request))
    return go_on(payment)


def _said(request) -> dict[str, str]:
    """The return's parameters, bounded, as the processor's card fields may have said something
    there (their signed payment: Acquirer.card_fields_said): checked by the acquirer, decided by
    its status query, never taken at their word."""
    return {name[:64]: value[:256] for name, value in list(request.GET.items())[:16]}


@checkout_page
@require_POST
def upi_change_method(request, payment_id: str):
    """The customer stops waiting for the UPI app and goes back to the methods (the request is
    cancelled at the acquirer; payments.services.upi.upi_change_method, which past the call
    budget leaves the request uncancelled rather than raise: no calm page here)."""
    payment = granted_payment(request, payment_id)
    from payments.services.upi import upi_change_method as change

    payment.refresh_from_db()
    if payment.status == S.PROCESSING and payment.payment_mode == M.UPI:
        with _checkout_step():  # approved, expired or being confirmed meanwhile: go_on shows which
            change(payment=payment)
    return go_on(payment)


@checkout_page
@require_http_methods(["GET", "POST"])
def cancel(request, payment_id: str):
    """Cancelling asks once (issue 26: one tap used to end the payment). GET is the question,
    a page of its own, so it needs no JavaScript: "No, continue paying" goes back to the
    methods, "Yes, cancel" posts here. POST is the answer: the customer gives up before a
    method is in flight, FAILED, and back to the merchant."""
    payment = granted_payment(request, payment_id)
    if request.method == "GET":
        payment.refresh_from_db()
        if hosted.hosted_expire_if_due(payment).status != S.PENDING:
            return go_on(payment)  # final, or a method in flight: nothing to cancel from here
        return render(request, "checkout/cancel.html", page_context(
            payment, back_url=reverse("checkout:page", args=[payment_id])))
    link = payment_link_of(payment)
    with _checkout_step():
        if link is None:
            hosted.hosted_cancel(payment=payment)
        else:
            # A payment link's cancel is the customer's, audited as theirs (payments.services.links).
            payment_link_customer_cancel(link=link, viewer=request.user, address=client_ip(request))
    return go_on(payment)


@checkout_page
@require_GET
def payment_link(request, token: str):
    """A payment link's address (payments.services.links). While the link is open: this
    browser is given its payment and sent to the checkout. Once final, and when the checkout
    sends the customer back here at the end: what became of the link."""
    link = grant_by_link(request, token)
    payment = hosted.hosted_expire_if_due(link.payment)
    if not payment.is_final:
        return HttpResponseRedirect(reverse("checkout:page", args=[payment.payment_id]), status=303)
    return render(request, "checkout/link.html", page_context(payment, link_state=link.state))


@require_GET
def brand_logo(request, merchant_code: str, digest: str):
    """A merchant's logo as gateway.platform.brand stored it (a PNG Pillow wrote). Its address carries the
    image's digest, so it may be cached for good; a replaced logo has a new address. Public:
    a logo is meant to be seen, and nothing else of the merchant is here."""
    brand = (MerchantBrand.objects.filter(merchant__code=merchant_code, logo_sha256__startswith=digest)
             .exclude(logo_sha256="").only("logo_png").first()) if len(digest) == 16 else None
    if brand is None:
        raise NotFound()
    response = HttpResponse(bytes(brand.logo_png), content_type="image/png")
    response["Cache-Control"] = "public, max-age=31536000, immutable"
    response["Content-Security-Policy"] = "default-src 'none'"
    return response


@checkout_page
@require_GET
def result(request, payment_id: str):
    """Our own page for a final payment: the outcome, the amount, the merchant, our reference
    and what to do next, then on to the merchant after CHECKOUT_RESULT_REDIRECT_SECONDS (a
    meta refresh, no JavaScript needed) or at once by its button. Reading it writes nothing,
    so reloading it adds nothing to the payment's story."""
    payment = granted_payment(request, payment_id)
    redirect = go_on(payment, here=reverse("checkout:result", args=[payment_id]))
    if redirect is not None:
        return redirect
    return render(request, "checkout/result.html", page_context(
        payment, outcome=result_outcome(payment), mode_label=mode_label(payment.payment_mode),
        return_url=reverse("checkout:return", args=[payment_id]),
        redirect_seconds=settings.CHECKOUT_RESULT_REDIRECT_SECONDS,
    ))


@checkout_page
@require_GET
def return_to_merchant(request, payment_id: str):
    """The signed redirect to the merchant's returnUrl (CONTRACT.md), built now so its
    timestamp is fresh; the first one is recorded in the payment's story."""
    payment = granted_payment(request, payment_id)
    payment.refresh_from_db()
    if not payment.is_final:
        return go_on(payment)
    return HttpResponseRedirect(hosted.hosted_redirect(payment), status=303)


# --- sandbox pages (staging only: SandboxGateMiddleware answers 404 under /sandbox/ in production)

@checkout_page
@require_http_methods(["GET", "POST"])
def sandbox_bank(request, payment_id: str):
    """Stands in for the bank's (or wallet's) own page: the tester approves or declines."""
    payment = granted_payment(request, payment_id)
    here = reverse("checkout:sandbox-bank", args=[payment_id])
    redirect = go_on(payment, here=here)
    if redirect is not None:
        return redirect
    errors = {}
    if request.method == "POST":
        form = forms.SandboxBankForm(request.POST)
        if form.is_valid():
            with _checkout_step(show_errors=True) as step:
                hosted.hosted_bank_complete(payment=payment, approved=form.cleaned_data["decision"] == "approve")
            if step.error is None:
                return go_on(payment)
            errors = {"decision": [step.error]}  # being confirmed already (another tab), or the bank did not answer
    is_wallet = payment.payment_mode == M.WALLET
    provider = method_choices(payment, payment.payment_mode).get(payment.bank_code, payment.bank_code)
    return render(request, "checkout/sandbox_bank.html",
                  page_context(payment, provider=provider, is_wallet=is_wallet, action=here, errors=errors))


@checkout_page
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
            # Not _checkout_step: here a payment already final (InvalidTransition) is news for
            # the tester, shown like any other error, not a page to move on to.
            try:
                result = hosted.hosted_transfer_received(reference=reference)
            except GatewayError as exc:
                errors = {"reference": [plain(exc)]}
        else:
            errors = form.errors
    return render(request, "checkout/sandbox_transfers.html",
                  {"reference": reference, "result": result, "errors": errors,
                   "result_amount": format_inr(result.amount) if result else "", "sandbox": True,
                   "action": reverse("checkout:sandbox-transfers")},
                  status=400 if errors else 200)
