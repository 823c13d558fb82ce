import io
import json
import logging

import pytest

from gateway.core.logging import JsonFormatter
from tests.support.factories import make_merchant


@pytest.fixture
def acme(db):
    """A merchant with a generous rate limit and known credentials."""
    return make_merchant(code="ACME")


@pytest.fixture
def json_log():
    """What the configured JSON log handler writes during the test, as a callable returning
    the parsed lines. Reads the real handler (formatter and trace filter as settings configure
    them), not pytest's capture."""
    handlers = [h for h in logging.getLogger().handlers
                if isinstance(h, logging.StreamHandler) and isinstance(h.formatter, JsonFormatter)]
    assert handlers, "settings.LOGGING no longer configures the JSON console handler"
    stream = io.StringIO()
    previous = [h.setStream(stream) for h in handlers]

    def lines():
        text = stream.getvalue()
        return text, [json.loads(line) for line in text.splitlines() if line.strip()]

    yield lines
    for handler, old in zip(handlers, previous):
        handler.setStream(old)
