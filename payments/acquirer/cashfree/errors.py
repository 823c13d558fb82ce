"""What can go wrong talking to Cashfree, in three kinds a caller acts on differently.

    CashfreeError
      CashfreeDeclined      the bank or Cashfree said no to the money: a final answer
                            (a future Acquirer adapter: PAYMENT_FAILED)
      CashfreeUnavailable   no usable answer: timeout, connection trouble, 5xx, rate limit,
                            an unreadable reply. The outcome of a create is UNKNOWN: ask
                            again with the same idempotency key, or query the status
                            (SERVICE_UNAVAILABLE)
      CashfreeBadRequest    Cashfree refused the request itself: our data, our credentials,
                            an idempotency key reused with another body (PROCESSING_ERROR)
        CashfreeAuthenticationError   401/403: wrong or missing credentials

Messages carry Cashfree's code and message and its request id, never a request body.
"""
from __future__ import annotations


class CashfreeError(Exception):
    def __init__(self, message: str, *, status: int | None = None, code: str = "",
                 type: str = "", request_id: str = ""):
        super().__init__(message)
        self.message = message
        self.status = status
        self.code = code
        self.type = type
        self.request_id = request_id

    def __str__(self) -> str:
        parts = [self.message]
        if self.status is not None:
            parts.append(f"HTTP {self.status}")
        if self.code:
            parts.append(f"code {self.code}")
        if self.request_id:
            parts.append(f"request id {self.request_id}")
        return "; ".join(parts)


class CashfreeDeclined(CashfreeError):
    """The money was refused: final, do not retry."""


class CashfreeUnavailable(CashfreeError):
    """No usable answer; the outcome of a create is unknown until asked again."""


class CashfreeBadResponse(CashfreeUnavailable):
    """Cashfree answered something we cannot read (not JSON, an amount in fractions of paise)."""


class CashfreeBadRequest(CashfreeError):
    """Cashfree refused the request as sent: retrying it unchanged will not help."""


class CashfreeAuthenticationError(CashfreeBadRequest):
    """The client id / secret were refused."""
