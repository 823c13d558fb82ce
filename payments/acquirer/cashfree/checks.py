"""Cashfree's settings, checked at start (payments.acquirer.settings_problems): gateway/settings.py
refuses to start with the first problem, and `manage.py check` reports them (payments.E010)."""
from __future__ import annotations

# Cashfree.js v3 as Cashfree's docs give it: the only script of Cashfree's a production checkout
# page loads (docs/security.md, the inventory of the page's scripts).
CASHFREE_JS = "https://sdk.cashfree.com/js/v3/cashfree.js"


def problems(values) -> list[str]:
    """What Cashfree cannot work with in `values` (the settings, as attributes): its account's
    credentials, a bounded timeout (payments.acquirer.base.CALL_TIME_LIMIT is 60 s) and, in
    production, an https:// address and Cashfree's own Cashfree.js (a page that embeds card
    fields loads the processor's script from the processor, never from elsewhere)."""
    found = []
    missing = [name for name in ("CASHFREE_CLIENT_ID", "CASHFREE_CLIENT_SECRET") if not getattr(values, name, "")]
    if missing:
        found.append(f"GATEWAY_ACQUIRER=cashfree needs {' and '.join(missing)}")
    timeout = getattr(values, "CASHFREE_TIMEOUT_SECONDS", 10)
    if not 0 < timeout <= 30:
        found.append("CASHFREE_TIMEOUT_SECONDS must be more than 0 and at most 30 (seconds)")
    if getattr(values, "IS_PRODUCTION", False) and not str(getattr(values, "CASHFREE_BASE_URL", "")).startswith(
            "https://"):
        found.append("CASHFREE_BASE_URL must be an https:// address in production")
    if getattr(values, "IS_PRODUCTION", False) and getattr(values, "CASHFREE_JS_URL", CASHFREE_JS) != CASHFREE_JS:
        found.append(f"CASHFREE_JS_URL must be Cashfree's own {CASHFREE_JS} in production")
    return found
