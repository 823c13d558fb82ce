"""Which of the seven methods the checkout page shows, which of them the customer may use for
this payment, and, for one they may not, why not in words and which method can.

CONTRACT.md's page carries one control per method (`data-method`, seven of them). The limits
of gateway.platform.methods decide what can be paid; they do not decide what is on the page:

- a method the merchant offers for this amount: shown, with its form;
- a method the merchant offers, but not for this amount (RTGS on a ₹499 order, UPI on a
  ₹5,00,000 one), or one the acquirer behind the gateway cannot carry (a cash challan with
  Cashfree): shown as not available, with the reason and, where one fits, the method that can
  (NEFT for RTGS). It has no form, and a form posted for it anyway is refused by the page
  (`refusal`) before anything is written;
- a method the merchant switched off: not on the page.

And one the customer may use but that is failing right now (`with_degraded_notices`): every
acquirer that would take it for this payment is out of rotation for it
(payments.services.acquirer_health), as Razorpay's downtime notices say. It keeps its form
(routing may still fail over, the acquirer may be probed back in), with a notice saying so and,
where one fits, another method that is not failing.
"""
from __future__ import annotations

from dataclasses import dataclass, replace

from django.utils.translation import gettext
from django.utils.translation import gettext_lazy as _

from gateway.core.money import format_inr
from gateway.platform.methods import method_limits
from payments.models import Payment
from payments.services.acquirer_health import out_of_rotation
from payments.services.acquirer_methods import acquirer_methods
from payments.services.routing import routes_as_set

M = Payment.Mode

# What to offer instead of a method the amount does not fit, in order of preference: the
# first one this payment can be paid with is named. NEFT is the one for RTGS (same bank
# transfer, any amount); a cash challan's above its ceiling is a bank transfer too.
INSTEAD = {
    M.RTGS: (M.NEFT,),
    M.CHALLAN: (M.NEFT, M.RTGS),
    M.UPI: (M.NB, M.CARD, M.NEFT),
    M.WALLET: (M.UPI, M.NB, M.CARD),
    M.CARD: (M.NB, M.UPI),
    M.NB: (M.NEFT, M.CARD),
    M.NEFT: (M.RTGS, M.NB),
}

# How the page names a method inside a sentence (the titles of display.METHODS).
NAMES = {M.UPI: "UPI", M.CARD: _("Card"), M.NB: _("Net banking"), M.WALLET: _("Wallet"), M.NEFT: "NEFT",
         M.RTGS: "RTGS", M.CHALLAN: _("Cash challan")}


@dataclass(frozen=True)
class Availability:
    """One method as the page shows it. `usable`: it has its form. Otherwise `reason` says why
    not (a sentence in the page's language) and `instead` is the code of a method that can
    take this payment, or ''. A usable one that is `degraded` says so in `reason` and `short`,
    and `instead` names a method that is not."""

    code: str
    usable: bool
    reason: str = ""
    short: str = ""  # the reason in a few words, beside the method's name
    instead: str = ""
    degraded: bool = False


def _inr(paise: int) -> str:
    return format_inr(paise)


def methods_on_page(payment: Payment) -> list[Availability]:
    """Every method the page shows for `payment`, in the checkout's order: all seven but those
    the merchant switched off."""
    carried = acquirer_methods(payment.merchant_id)
    limits = [limit for limit in method_limits(payment.merchant.payment_methods) if limit.enabled]
    usable = {limit.code for limit in limits if limit.takes(payment.amount) and limit.code in carried}
    shown = []
    for limit in limits:
        code = limit.code
        if code in usable:
            shown.append(Availability(code, True))
            continue
        name = NAMES[code]
        short = gettext("Not available for this amount")
        if code not in carried:
            reason = gettext("%(method)s cannot be paid at this checkout.") % {"method": name}
            short = gettext("Not available at this checkout")
        elif payment.amount < limit.min:
            reason = gettext("Not available for this amount: %(method)s is for %(minimum)s and above, "
                             "and this payment is %(amount)s.") % {
                "method": name, "minimum": _inr(limit.min), "amount": _inr(payment.amount)}
        else:
            reason = gettext("Not available for this amount: %(method)s takes up to %(maximum)s, "
                             "and this payment is %(amount)s.") % {
                "method": name, "maximum": _inr(limit.max), "amount": _inr(payment.amount)}
        instead = next((other for other in INSTEAD.get(code, ()) if other in usable), "")
        shown.append(Availability(code, False, reason, short, instead))
    return shown


def with_degraded_notices(shown: list[Availability], payment: Payment) -> list[Availability]:
    """`shown` (methods_on_page) with each usable method whose every acquirer for this payment
    is out of rotation marked degraded (the module's docstring). The acquirers: the payment's
    own once it has one (every later attempt goes there), else the merchant's route for the
    method, the lone acquirer of a deployment with one included. Only reads: one query of the
    routes (none with one acquirer) and one read of Redis; no probe is taken."""
    usable = [method.code for method in shown if method.usable]
    if not usable:
        return shown
    routes = ({code: [payment.acquirer] for code in usable} if payment.acquirer
              else routes_as_set(payment.merchant_id, usable))
    out = out_of_rotation([(name, code) for code, names in routes.items() for name in names])
    degraded = {code for code, names in routes.items() if all((name, code) in out for name in names)}
    if not degraded:
        return shown
    healthy = [code for code in usable if code not in degraded]
    marked = []
    for method in shown:
        if method.code not in degraded:
            marked.append(method)
            continue
        preferred = [other for other in INSTEAD.get(method.code, ()) if other in healthy]
        instead = (preferred or healthy or [""])[0]
        reason = (gettext("%(method)s payments are failing more often than usual right now. You can still try, "
                          "or pay by another method.") if instead else
                  gettext("%(method)s payments are failing more often than usual right now. You can still try.")
                  ) % {"method": NAMES[method.code]}
        marked.append(replace(method, degraded=True, reason=reason, short=gettext("Failing often right now"),
                              instead=instead))
    return marked


def usable_methods(payment: Payment) -> list[str]:
    """The codes of the methods `payment` can be paid with (those with a form on the page)."""
    return [method.code for method in methods_on_page(payment) if method.usable]


def refusal(payment: Payment, code: str) -> str | None:
    """None when `payment` may be paid by `code`; else what the page says to a form posted for
    it anyway (the page never offers one: a stale tab, or a request made by hand)."""
    for method in methods_on_page(payment):
        if method.code == code:
            return None if method.usable else method.reason
    return gettext("%(method)s is not offered for this payment. Choose another method.") % {
        "method": NAMES.get(code, code)}
