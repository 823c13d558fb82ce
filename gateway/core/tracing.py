"""The traceId of the request (or task) being handled, for responses and log lines."""
import contextvars
import secrets

_trace_id: contextvars.ContextVar[str] = contextvars.ContextVar("trace_id", default="")
_merchant: contextvars.ContextVar[str] = contextvars.ContextVar("merchant", default="")


def new_trace_id() -> str:
    return secrets.token_hex(8)


def current_trace_id() -> str:
    value = _trace_id.get()
    if not value:
        value = new_trace_id()
        _trace_id.set(value)
    return value


def set_trace_id(value: str):
    return _trace_id.set(value)


def reset_trace_id(token) -> None:
    _trace_id.reset(token)


def set_merchant(code: str):
    return _merchant.set(code)


def reset_merchant(token) -> None:
    _merchant.reset(token)


def current_merchant() -> str:
    return _merchant.get()
