"""The token endpoints in the OpenAPI document: marked beta, never deprecated, with their bodies."""
import pytest
from drf_spectacular.validation import validate_schema

pytestmark = pytest.mark.django_db


@pytest.fixture
def schema(client):
    response = client.get("/api/schema/?format=json")
    assert response.status_code == 200
    document = response.json()
    validate_schema(document)
    return document


def test_every_token_operation_is_tagged_beta_and_not_deprecated(schema):
    operations = [(method, schema["paths"][path][method]) for path, method in (
        ("/api/v2/tokens", "post"), ("/api/v2/tokens/{tokenId}", "get"), ("/api/v2/tokens/{tokenId}", "delete"))]
    for method, operation in operations:
        assert "beta" in operation["tags"], method
        assert "deprecated" not in operation, method
        assert operation["description"].startswith("Beta, staging only")
        assert "403" in operation["responses"] and "404" in operation["responses"]
        headers = [p for p in operation["parameters"] if p["in"] == "header"]
        assert {"name": "X-Merchant-Id", "required": True} in [
            {"name": p["name"], "required": p.get("required", False)} for p in headers]


def test_the_creation_bodies_are_the_interfaces(schema):
    components = schema["components"]["schemas"]
    request = components["TokenCreateRequest"]
    assert set(request["properties"]) == {"paymentId", "consent"}
    assert set(request["required"]) == {"paymentId", "consent"}
    consent = components[request["properties"]["consent"]["$ref"].rsplit("/", 1)[1]]
    assert set(consent["properties"]) == {"consentGiven", "consentTimestamp", "consentText"}
    # consentGiven must be true (issue 29): the document says so, an enum of the one value.
    given = components[consent["properties"]["consentGiven"]["allOf"][0]["$ref"].rsplit("/", 1)[1]]
    assert given == {"type": "boolean", "enum": [True]}
    assert consent["properties"]["consentTimestamp"]["type"] == "integer"
    ok = schema["paths"]["/api/v2/tokens"]["post"]["responses"]["200"]["content"]["application/json"]["schema"]
    response = components[ok["$ref"].rsplit("/", 1)[1]]
    assert set(response["properties"]) == {"tokenId", "network", "lastFourDigits", "expiryMonth", "expiryYear",
                                           "issuer", "createdAt"}
