"""Razorpay's settings, checked at start (payments.acquirer.settings_problems): gateway/settings.py
refuses to start with the first problem, and `manage.py check` reports them (payments.E010)."""
from __future__ import annotations


def problems(values) -> list[str]:
    """What Razorpay cannot work with in `values` (the settings, as attributes): its key id and
    secret, the webhook secret (a delivery cannot be verified without it), a bounded timeout, an
    https address in production, and a live key in production (a test key moves no money)."""
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
        if str(getattr(values, "RAZORPAY_KEY_ID", "")).startswith("rzp_test_"):
            found.append("RAZORPAY_KEY_ID is a test key (rzp_test_...): production needs a live key (rzp_live_...)")
    return found
