"""Logs are JSON lines carrying the traceId and merchant, and never a key, secret, card
number or CVV."""
import json
import logging

import pytest

from gateway.core.logging import JsonFormatter, mask_pan

pytestmark = [pytest.mark.django_db, pytest.mark.urls("tests.gateway.urls")]


def test_a_request_logs_json_lines_with_its_trace_id_and_merchant_and_never_the_key(api, acme, json_log):
    response = api.get("/t/boom", HTTP_X_API_KEY=acme.api_key, HTTP_X_MERCHANT_ID="ACME")
    assert response.status_code == 500
    text, lines = json_log()
    assert lines, "nothing was logged for a 500"
    for line in lines:
        assert line["traceId"] == response["X-Trace-Id"]
        assert line["merchant"] == "ACME"
        assert {"time", "level", "logger", "message"} <= set(line)
    for secret in (acme.api_key, acme.secret_key, acme.webhook_secret):
        assert secret not in text


def test_djangos_own_error_line_carries_the_trace_id(api, acme, json_log):
    response = api.get("/t/boom", HTTP_X_API_KEY=acme.api_key)
    text, lines = json_log()
    request_lines = [line for line in lines if line["logger"] == "django.request"]
    assert request_lines and all(line["traceId"] == response["X-Trace-Id"] for line in request_lines)


def test_a_failed_authentication_does_not_log_the_key_it_was_given(api, json_log):
    guessed = "gwk_guessed-key-that-must-not-be-logged"
    api.get("/t/whoami", HTTP_X_API_KEY=guessed)
    api.get("/t/boom", HTTP_X_API_KEY=guessed)
    text, _ = json_log()
    assert guessed not in text


def test_card_numbers_are_masked_in_messages_and_tracebacks():
    logger = logging.getLogger("gateway.test")
    record = logger.makeRecord("gateway.test", logging.ERROR, __file__, 1,
                               "card %s failed", ("4111 1111 1111 1111",), None)
    line = json.loads(JsonFormatter().format(record))
    assert "4111" not in line["message"]
    assert mask_pan("pan=4000000000000002 amount=49900") == "pan=[redacted-pan] amount=49900"
    assert mask_pan("card 4111-1111-1111-1111.") == "card [redacted-pan]."


def test_the_fraction_of_a_run_time_is_not_taken_for_a_card_number():
    line = "Task x succeeded in 0.05478903810000012s: None"
    assert mask_pan(line) == line


def test_log_lines_outside_a_request_have_no_stale_trace_id(api, acme, json_log):
    api.get("/t/whoami", HTTP_X_API_KEY=acme.api_key)
    logging.getLogger("gateway.test").warning("after the request")
    _, lines = json_log()
    after = [line for line in lines if line["message"] == "after the request"]
    assert after and after[0]["traceId"] is None and after[0]["merchant"] is None


def test_a_queued_task_carries_the_trace_id_and_merchant_into_the_worker():
    from types import SimpleNamespace

    from gateway import celery

    from gateway.core import tracing

    token, merchant_token = tracing.set_trace_id("abc123"), tracing.set_merchant("ACME")
    try:
        headers = {}
        celery._carry_trace_id(headers=headers)
    finally:
        tracing.reset_merchant(merchant_token)
        tracing.reset_trace_id(token)
    assert headers == {"traceId": "abc123", "merchant": "ACME"}

    task = SimpleNamespace(request=SimpleNamespace(is_eager=False, **headers))
    celery._adopt_trace_id(task=task)
    try:
        assert (tracing._trace_id.get(), tracing.current_merchant()) == ("abc123", "ACME")
    finally:
        celery._drop_trace_id(task=task)
    assert (tracing._trace_id.get(), tracing.current_merchant()) == ("", "")


def test_a_task_queued_outside_a_request_gets_a_trace_id_of_its_own():
    from types import SimpleNamespace

    from gateway import celery

    from gateway.core import tracing

    task = SimpleNamespace(request=SimpleNamespace(is_eager=False, traceId="", merchant=""))
    celery._adopt_trace_id(task=task)
    try:
        assert tracing._trace_id.get()
    finally:
        celery._drop_trace_id(task=task)
