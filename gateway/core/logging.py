"""JSON-lines logging with the traceId and merchant of the current request.

Nothing secret is ever passed to a logger by this code base; as a second line of defence the
formatter masks anything that looks like a card number (13-19 digits) in the message.
"""
import json
import logging
import re
from datetime import datetime, timezone

from gateway.core.tracing import _merchant, _trace_id

# 13 to 19 digits, optionally grouped by single spaces or hyphens (not the separator after
# them), and not the fraction of a decimal number such as a task's run time "0.0547890381000".
_PAN = re.compile(r"(?<![\d.])\d(?:[ -]?\d){12,18}(?!\d)")


def mask_pan(text: str) -> str:
    return _PAN.sub("[redacted-pan]", text)


class TraceFilter(logging.Filter):
    def filter(self, record):
        record.trace_id = _trace_id.get()
        record.merchant = _merchant.get()
        return True


class JsonFormatter(logging.Formatter):
    def format(self, record):
        entry = {
            "time": datetime.fromtimestamp(record.created, tz=timezone.utc).isoformat(timespec="milliseconds"),
            "level": record.levelname,
            "logger": record.name,
            "message": mask_pan(record.getMessage()),
            "traceId": getattr(record, "trace_id", "") or None,
            "merchant": getattr(record, "merchant", "") or None,
        }
        if record.exc_info:
            entry["exception"] = mask_pan(self.formatException(record.exc_info))
        return json.dumps(entry, ensure_ascii=False)
