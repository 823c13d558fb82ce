"""What can go wrong talking to Razorpay, in the three kinds a caller acts on differently (as
Cashfree's errors.py, whose shape this follows):

    RazorpayError
      RazorpayUnavailable   no usable answer: timeout, connection trouble, 5xx, a 429 past the
                            call's time, an unreadable reply. The outcome of a create is UNKNOWN:
                            read before creating again.
        RazorpayBadResponse an answer we cannot read (not JSON, not the shape it should be)
      RazorpayBadRequest    Razorpay refused the request itself (4xx BAD_REQUEST_ERROR): our data,
                            the order's state; sent again unchanged it is refused again.
        RazorpayAuthenticationError   401: the key id / secret were refused.

Messages carry Razorpay's error code, description and field and the request's id, never a
request body or a credential.
"""
from __future__ import annotations


class RazorpayError(Exception):
    def __init__(self, message: str, *, status: int | None = None, code: str = "", field: str = "",
                 request_id: str = ""):
        super().__init__(message)
        self.message = message
        self.status = status
        self.code = code
        self.field = field
        self.request_id = request_id

    def __str__(self) -> str:
        parts = [self.message]
        if self.status is not None:
            parts.append(f"HTTP {self.status}")
        if self.code:
            parts.append(f"code {self.code}")
        if self.field:
            parts.append(f"field {self.field}")
        if self.request_id:
            parts.append(f"request id {self.request_id}")
        return "; ".join(parts)


class RazorpayUnavailable(RazorpayError):
    """No usable answer; the outcome of a create is unknown until read back."""


class RazorpayBadResponse(RazorpayUnavailable):
    """Razorpay answered something we cannot read."""


class RazorpayBadRequest(RazorpayError):
    """Razorpay refused the request as sent."""


class RazorpayAuthenticationError(RazorpayBadRequest):
    """The key id / secret were refused."""
