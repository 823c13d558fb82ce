import pytest
from django.test import override_settings


@pytest.mark.parametrize("method", ["get", "post"])
@pytest.mark.parametrize("path", ["/sandbox/upi", "/sandbox/upi/pay", "/sandbox/transfers", "/sandbox/anything"])
def test_every_sandbox_path_is_not_found_in_production_whatever_the_method(client, db, method, path):
    with override_settings(IS_PRODUCTION=True, GATEWAY_ENV="production"):
        response = getattr(client, method)(path)
    assert response.status_code == 404
    assert response.json()["errorCode"] == "NOT_FOUND"


def test_sandbox_upi_page_is_served_in_staging(client, db):
    assert client.get("/sandbox/upi").status_code == 200
