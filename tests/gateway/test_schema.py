"""The OpenAPI document at /api/schema/ and its docs page at /api/docs/."""
import pytest
from drf_spectacular.validation import validate_schema

pytestmark = pytest.mark.django_db


def test_schema_is_a_valid_openapi_document(client):
    response = client.get("/api/schema/?format=json")
    assert response.status_code == 200
    schema = response.json()
    assert schema["openapi"].startswith("3.")
    assert schema["info"]["version"] == "2.4.0"
    validate_schema(schema)  # raises on an invalid document


@pytest.mark.urls("tests.gateway.urls")
def test_schema_declares_the_api_key_header(client):
    schema = client.get("/api/schema/?format=json").json()
    schemes = schema.get("components", {}).get("securitySchemes", {})
    assert {"type": "apiKey", "in": "header", "name": "X-Api-Key"} in [
        {k: v for k, v in s.items() if k in ("type", "in", "name")} for s in schemes.values()]


def test_schema_is_yaml_by_default(client):
    response = client.get("/api/schema/")
    assert response.status_code == 200
    assert b"openapi:" in response.content


def test_docs_page_renders(client):
    response = client.get("/api/docs/")
    assert response.status_code == 200
    assert b"/api/schema/" in response.content
