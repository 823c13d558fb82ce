"""Razorpay's settings, checked at start (payments.acquirer.settings_problems): gateway/settings.py
refuses to start with the first problem, and `manage.py check` reports them (payments.E010)."""
from __future__ import annotations

# Razorpay Standard Checkout as Razorpay's docs give it: the only script of Razorpay's a
# production checkout page loads (docs/security.md, the inventory of the page's scripts).
CHECKOUT_JS = "https://checkout.razorpay.com/v1/checkout.js"


def problems(values) -> list[str]:
    """What Razorpay cannot work with in `values` (the settings, as attributes): its key id and
    secret, the webhook secret (a delivery cannot be verified without it), a bounded timeout, an
    https address in production, a live key in production (a test key moves no money), and
    Razorpay's own checkout.js in production (a page that opens the processor's card frame loads
    its script from the processor, never from elsewhere)."""
    found = []
    missing = [name for name in ("RAZORPAY_KEY_ID", "RAZORPAY_KEY_SECRET", "RAZORPAY_WEBHOOK_SECRET",
                                 "RAZORPAY_BASE_URL") if not getattr(values, name, "")]
    if missing:
        found.append(f"GATEWAY_ACQUIRER=razorpay needs {', '.join(missing)}")
    timeout = getattr(values, "RAZORPAY_TIMEOUT_SECONDS", 10)
    if not 0 < timeout <= 30:
        found.append("RAZORPAY_TIMEOUT_SECONDS must be more than 0 and at most 30 (seconds)")
    if getattr(values, "IS_PRODUCTION", False):
        if not str(getattr(values, "RAZORPAY_BASE_URL", "")).startswith("https://"):
            found.append("RAZORPAY_BASE_URL must be an https:// address in production")
        if getattr(values, "RAZORPAY_CHECKOUT_JS_URL", CHECKOUT_JS) != CHECKOUT_JS:
            found.append(f"RAZORPAY_CHECKOUT_JS_URL must be Razorpay's own {CHECKOUT_JS} in production")
        if str(getattr(values, "RAZORPAY_KEY_ID", "")).startswith("rzp_test_"):
            found.append("RAZORPAY_KEY_ID is a test key (rzp_test_...): production needs a live key (rzp_live_...)")
    return found
