"""The optional order fields of both creation requests (issue 17): customerId, the addresses,
shippingSameAsBilling, lineItems and orderSummary are checked (VALIDATION_ERROR naming the
field's path), stored as sent in the payment's order_details, and refused or kept whole: a
refused request writes nothing."""
from __future__ import annotations

import json

import pytest

from payments.models import Payment
from tests.payments.hosted.conftest import URL as HOSTED_URL
from tests.payments.s2s.conftest import URL as S2S_URL
from tests.support.factories import session_body, signed_body

pytestmark = pytest.mark.django_db

ADDRESS = {"name": "Asha Rao", "line1": "12 MG Road", "line2": "Flat 4", "landmark": "near the temple",
           "city": "Bengaluru", "state": "Karnataka", "postalCode": "560001", "country": "IN",
           "phone": "9876543210"}
ITEM = {"name": "Masala chai 250 g", "description": "Assam CTC", "sku": "CHAI-250", "category": "tea",
        "hsnCode": "0902", "quantity": 3, "unitPrice": 45000, "discount": 0, "taxPercent": 5, "tax": 6750,
        "imageUrl": "https://shop.example/chai.png", "productUrl": "https://shop.example/chai"}
SUMMARY = {"subtotal": 135000, "shippingAmount": 5000, "shippingMethod": "courier", "discountAmount": 0,
           "discountCode": "", "taxAmount": 6750, "convenienceFee": 3150, "totalAmount": 149900}
ORDER = {"customerId": "CUST-42", "billingAddress": ADDRESS, "shippingSameAsBilling": True,
         "lineItems": [ITEM], "orderSummary": SUMMARY}


def create(api, flow, tm, **fields):
    if flow == "hosted":
        return api.post(HOSTED_URL, session_body(tm, **fields), format="json", HTTP_X_API_KEY=tm.api_key)
    return api.post(S2S_URL, json.dumps(signed_body(tm, **fields)), content_type="application/json", **tm.headers)


@pytest.fixture(params=["hosted", "s2s"])
def flow(request):
    return request.param


def assert_refused(response, field):
    body = response.json()
    assert response.status_code == 400 and body["errorCode"] == "VALIDATION_ERROR", body
    assert body["errorMessage"].startswith(field + ":"), body
    assert Payment.objects.count() == 0


def test_the_order_fields_are_stored_as_sent(api, merchant, flow):
    response = create(api, flow, merchant, **ORDER, shippingAddress={**ADDRESS, "city": "Mysuru"})
    assert response.status_code in (200, 201), response.json()
    payment = Payment.objects.get(payment_id=response.json()["paymentId"])
    assert payment.order_details == {**ORDER, "shippingAddress": {**ADDRESS, "city": "Mysuru"}}


def test_without_order_fields_nothing_is_stored(api, merchant, flow):
    response = create(api, flow, merchant)
    assert Payment.objects.get(payment_id=response.json()["paymentId"]).order_details == {}


def test_null_means_not_sent(api, merchant, flow):
    response = create(api, flow, merchant, customerId=None, billingAddress=None, lineItems=None,
                      orderSummary=None, shippingSameAsBilling=None,
                      shippingAddress={"city": "Pune", "line2": None})
    payment = Payment.objects.get(payment_id=response.json()["paymentId"])
    assert payment.order_details == {"shippingAddress": {"city": "Pune"}}


def test_a_hundred_line_items_are_accepted_and_a_hundred_and_one_refused(api, merchant, flow):
    assert create(api, flow, merchant, lineItems=[ITEM] * 100).status_code in (200, 201)
    Payment.objects.all().delete()
    assert_refused(create(api, flow, merchant, lineItems=[ITEM] * 101), "lineItems")


@pytest.mark.parametrize("fields, path", [
    ({"lineItems": [ITEM, ITEM, ITEM, {**ITEM, "quantity": 0}]}, "lineItems[3].quantity"),
    ({"lineItems": [{**ITEM, "quantity": "2"}]}, "lineItems[0].quantity"),
    ({"lineItems": [{**ITEM, "unitPrice": 450.5}]}, "lineItems[0].unitPrice"),
    ({"lineItems": [{**ITEM, "unitPrice": -1}]}, "lineItems[0].unitPrice"),
    ({"lineItems": [{k: v for k, v in ITEM.items() if k != "name"}]}, "lineItems[0].name"),
    ({"lineItems": [{**ITEM, "hsnCode": "09A2"}]}, "lineItems[0].hsnCode"),
    ({"lineItems": [{**ITEM, "taxPercent": "5"}]}, "lineItems[0].taxPercent"),
    ({"lineItems": [{**ITEM, "taxPercent": True}]}, "lineItems[0].taxPercent"),
    ({"lineItems": [{**ITEM, "taxPercent": 101}]}, "lineItems[0].taxPercent"),
    ({"lineItems": [{**ITEM, "imageUrl": "javascript:alert(1)"}]}, "lineItems[0].imageUrl"),
    ({"lineItems": [{**ITEM, "colour": "red"}]}, "lineItems[0]"),
    ({"lineItems": [ITEM, "chai"]}, "lineItems[1]"),
    ({"lineItems": {"0": ITEM}}, "lineItems"),
    ({"orderSummary": {**SUMMARY, "totalAmount": "1499.00"}}, "orderSummary.totalAmount"),
    ({"orderSummary": {k: v for k, v in SUMMARY.items() if k != "subtotal"}}, "orderSummary.subtotal"),
    ({"orderSummary": [SUMMARY]}, "orderSummary"),
    ({"billingAddress": {**ADDRESS, "postalCode": 560001}}, "billingAddress.postalCode"),
    ({"billingAddress": {**ADDRESS, "city": "x" * 101}}, "billingAddress.city"),
    ({"billingAddress": {**ADDRESS, "line1": "12\x00MG Road"}}, "billingAddress.line1"),
    ({"shippingAddress": {**ADDRESS, "email": "a@b.in"}}, "shippingAddress"),
    ({"shippingSameAsBilling": "yes"}, "shippingSameAsBilling"),
    ({"customerId": 42}, "customerId"),
    ({"customerId": "c" * 101}, "customerId"),
])
def test_a_bad_order_field_is_a_validation_error_naming_its_path(api, merchant, flow, fields, path):
    assert_refused(create(api, flow, merchant, **fields), path)


def test_an_idempotent_replay_compares_the_order_fields_too(api, merchant):
    body = signed_body(merchant, lineItems=[ITEM])
    first = api.post(S2S_URL, json.dumps(body), content_type="application/json", HTTP_X_IDEMPOTENCY_KEY="k",
                     **merchant.headers)
    assert first.status_code == 201
    changed = {**body, "lineItems": [{**ITEM, "quantity": 4}]}
    again = api.post(S2S_URL, json.dumps(changed), content_type="application/json", HTTP_X_IDEMPOTENCY_KEY="k",
                     **merchant.headers)
    assert again.json()["errorCode"] == "IDEMPOTENCY_MISMATCH"
