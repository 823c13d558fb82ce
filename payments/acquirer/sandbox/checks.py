"""The sandbox's settings, checked at start (payments.acquirer.settings_problems)."""
from __future__ import annotations


def problems(values) -> list[str]:
    """What the sandbox cannot honour in `values` (the settings, as attributes)."""
    found = []
    if getattr(values, "SANDBOX_UPI_SUCCESS_DELAY_SECONDS", 0) < 0:
        found.append("SANDBOX_UPI_SUCCESS_DELAY_SECONDS must not be negative")
    if getattr(values, "SANDBOX_UPI_TIMEOUT_SECONDS", 1) <= 0:
        found.append("SANDBOX_UPI_TIMEOUT_SECONDS must be more than 0 (seconds)")
    return found
