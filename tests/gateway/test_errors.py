"""Every error path answers with the one envelope, the traceId of X-Trace-Id, and no
stack trace: unknown paths, wrong methods, bad JSON, oversized bodies, crashes, bad keys."""
import pytest
from django.test import override_settings

from tests.gateway.test_signing import signed_body

pytestmark = [pytest.mark.django_db, pytest.mark.urls("tests.gateway.urls")]


def assert_envelope(response, status, code):
    assert response.status_code == status, response.content
    assert response["Content-Type"].startswith("application/json")
    body = response.json()
    assert set(body) == {"success", "errorCode", "errorMessage", "traceId", "error"}
    # issue 17: SabPaisa's clients read error.code and error.message (the 3.0.0 SDK only the latter).
    assert body["error"] == {"code": body["errorCode"], "message": body["errorMessage"]}
    assert body["success"] is False
    assert body["errorCode"] == code
    assert body["errorMessage"]
    assert body["traceId"] and body["traceId"] == response["X-Trace-Id"]
    assert "Traceback" not in response.content.decode()
    return body


def test_every_response_carries_a_fresh_trace_id(api, acme):
    first = api.get("/t/whoami", HTTP_X_API_KEY=acme.api_key)
    second = api.get("/t/whoami", HTTP_X_API_KEY=acme.api_key)
    assert first["X-Trace-Id"] and second["X-Trace-Id"]
    assert first["X-Trace-Id"] != second["X-Trace-Id"]


@pytest.mark.parametrize("path", ["/nope", "/api/v2/nope", "/api/v2/payments/", "/t/whoami/", "/api/v9/payments"])
def test_unknown_path_is_not_found_in_the_envelope(client, path):
    assert_envelope(client.get(path), 404, "NOT_FOUND")


@override_settings(DEBUG=True)
def test_unknown_path_is_in_the_envelope_even_with_debug_on(client):
    assert_envelope(client.get("/api/v2/nope"), 404, "NOT_FOUND")


def test_unknown_path_with_a_valid_key_is_not_found(client, acme):
    response = client.get("/api/v2/nope", HTTP_X_API_KEY=acme.api_key)
    assert_envelope(response, 404, "NOT_FOUND")


def test_wrong_method_on_an_api_view_is_method_not_allowed(api, acme):
    response = api.delete("/t/whoami", HTTP_X_API_KEY=acme.api_key)
    assert_envelope(response, 405, "METHOD_NOT_ALLOWED")
    assert "GET" in response["Allow"]
    assert response["X-RateLimit-Limit"]


def test_wrong_method_on_a_plain_view_is_method_not_allowed(client):
    response = client.post("/healthz")
    assert_envelope(response, 405, "METHOD_NOT_ALLOWED")
    assert response["Allow"] == "GET, HEAD"


def test_malformed_json_is_a_validation_error_naming_the_body(api, acme):
    response = api.post("/t/signed", data='{"merchantId": "ACME",', content_type="application/json",
                        HTTP_X_API_KEY=acme.api_key)
    body = assert_envelope(response, 400, "VALIDATION_ERROR")
    assert body["errorMessage"].startswith("body")


@pytest.mark.parametrize("payload", ["[1, 2]", '"text"', "42", "null", "true"])
def test_json_that_is_not_an_object_is_a_validation_error_naming_the_body(api, acme, payload):
    response = api.post("/t/signed", data=payload, content_type="application/json",
                        HTTP_X_API_KEY=acme.api_key)
    body = assert_envelope(response, 400, "VALIDATION_ERROR")
    assert body["errorMessage"].startswith("body")


def test_wrong_content_type_is_a_validation_error_naming_it(api, acme):
    response = api.post("/t/signed", data="merchantId=ACME", content_type="application/x-www-form-urlencoded",
                        HTTP_X_API_KEY=acme.api_key)
    body = assert_envelope(response, 400, "VALIDATION_ERROR")
    assert body["errorMessage"].startswith("Content-Type")


def test_a_missing_required_field_is_a_validation_error_naming_it(api, acme):
    body = signed_body(acme)
    del body["merchantTxnId"]
    response = api.post("/t/signed", body, format="json", HTTP_X_API_KEY=acme.api_key)
    message = assert_envelope(response, 400, "VALIDATION_ERROR")["errorMessage"]
    assert message.startswith("merchantTxnId")


def test_a_wrong_type_is_a_validation_error_naming_the_field(api, acme):
    response = api.post("/t/signed", signed_body(acme, amount="lots"), format="json",
                        HTTP_X_API_KEY=acme.api_key)
    assert assert_envelope(response, 400, "VALIDATION_ERROR")["errorMessage"].startswith("amount")


def test_an_empty_body_names_the_first_missing_field(api, acme):
    response = api.post("/t/signed", data="", content_type="application/json", HTTP_X_API_KEY=acme.api_key)
    assert_envelope(response, 400, "VALIDATION_ERROR")


@override_settings(API_MAX_BODY_BYTES=1024)
def test_oversized_body_is_a_validation_error_naming_the_body(api, acme):
    big = signed_body(acme, merchantTxnId="x" * 2000)
    response = api.post("/t/signed", big, format="json", HTTP_X_API_KEY=acme.api_key)
    body = assert_envelope(response, 400, "VALIDATION_ERROR")
    assert body["errorMessage"].startswith("body")
    assert "1024" in body["errorMessage"]


def test_default_body_limit_is_64_kib(api, acme):
    big = signed_body(acme, description="x" * (64 * 1024))
    response = api.post("/t/signed", big, format="json", HTTP_X_API_KEY=acme.api_key)
    assert assert_envelope(response, 400, "VALIDATION_ERROR")["errorMessage"].startswith("body")


def test_oversized_body_is_refused_before_authentication(client):
    response = client.post("/t/signed", data="x" * (70 * 1024), content_type="application/json")
    assert_envelope(response, 400, "VALIDATION_ERROR")


def test_unexpected_exception_is_a_500_envelope_without_the_traceback(api, acme, json_log):
    response = api.get("/t/boom", HTTP_X_API_KEY=acme.api_key)
    body = assert_envelope(response, 500, "INTERNAL_ERROR")
    assert "boom" not in response.content.decode()
    assert "RuntimeError" not in response.content.decode()
    assert response["X-RateLimit-Limit"] == "1000"
    # Logged, with the traceId the caller can quote.
    text, lines = json_log()
    logged = [line for line in lines if line.get("exception") and "RuntimeError" in line["exception"]]
    assert logged and all(line["traceId"] == body["traceId"] for line in logged)


def test_unexpected_exception_in_a_plain_view_is_a_500_envelope(client, monkeypatch, json_log):
    from gateway.platform import views

    def explode():
        raise RuntimeError("the database driver fell over")

    monkeypatch.setattr(views, "_database_ok", explode)
    response = client.get("/healthz")
    body = assert_envelope(response, 500, "INTERNAL_ERROR")
    assert "fell over" not in response.content.decode()
    text, lines = json_log()
    assert any("fell over" in (line.get("exception") or "") and line["traceId"] == body["traceId"]
               for line in lines)


def test_missing_api_key_is_unauthorized(api):
    assert_envelope(api.get("/t/whoami"), 401, "UNAUTHORIZED")


def test_wrong_api_key_is_unauthorized(api, acme):
    assert_envelope(api.get("/t/whoami", HTTP_X_API_KEY="gwk_" + "0" * 32), 401, "UNAUTHORIZED")


def test_authentication_comes_before_method_and_body_checks(api):
    """An unauthenticated caller learns nothing about which paths or methods exist."""
    assert_envelope(api.delete("/t/whoami"), 401, "UNAUTHORIZED")
    assert_envelope(api.post("/t/signed", data="{", content_type="application/json"), 401, "UNAUTHORIZED")


def test_an_accept_header_asking_for_html_still_gets_json(api, acme):
    response = api.get("/t/whoami", HTTP_X_API_KEY=acme.api_key, HTTP_ACCEPT="text/html")
    assert response.status_code == 200
    assert response.json() == {"merchantId": "ACME"}


@override_settings(ALLOWED_HOSTS=["testserver"])
def test_a_disallowed_host_is_a_validation_error_in_the_envelope(client):
    response = client.get("/healthz", HTTP_HOST="evil.example")
    body = assert_envelope(response, 400, "VALIDATION_ERROR")
    assert body["errorMessage"].startswith("Host")


def test_a_console_404_is_the_consoles_html_page_not_the_envelope(admin_client):
    # A person reads it (docs/console.md). APPEND_SLASH is off: the admin's catch-all answers
    # 404 for a path without its slash.
    for path in ("/admin/gateway/merchant/1/change", "/admin/gateway/merchant/999999/rotate/api-key/"):
        response = admin_client.get(path)
        assert response.status_code == 404 and response["Content-Type"].startswith("text/html"), path
        assert "Page not found" in response.content.decode()


def test_a_chunked_body_is_refused_naming_content_length(client):
    """Django reads a body only up to Content-Length, so a chunked one would look empty."""
    response = client.post("/t/signed", data=b"", content_type="application/json",
                           HTTP_TRANSFER_ENCODING="chunked")
    assert assert_envelope(response, 400, "VALIDATION_ERROR")["errorMessage"].startswith("Content-Length")
