"""The shapes of Razorpay's answers the gateway reads (razorpay.schema.json, ours, derived from
the vendored fixtures of razorpay/razorpay-python and Razorpay's public docs), as one check:
`shape_errors(kind, body)` says why `body` is not a Razorpay `kind` (empty: it is one)."""
from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path
from typing import Any

import jsonschema

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
SCHEMA = HERE / "razorpay.schema.json"
FIXTURES = ROOT / "vendor" / "razorpay-python-mocks"

# Which fixture stands for which kind: the files the schema was derived from, each held to it.
DERIVED_FROM = {
    "order": ["fake_order.json"],
    "order_collection": ["order_collection.json", "order_collection_with_one_order.json"],
    "payment": ["fake_payment.json", "fake_captured_payment.json", "edit_payment.json"],
    "payment_collection": ["payment_collection.json", "payment_collection_with_one_payment.json"],
    "refund": ["fake_refund.json"],
    "refund_collection": ["refund_collection.json"],
    "error": ["bad_request_error.json"],
    "event": ["fake_payment_authorized_webhook.json"],
    "settlement": ["fake_settlement.json"],
    "settlement_collection": ["settlement_collection.json", "settlement_collection_with_one_settlement.json"],
}


@lru_cache(maxsize=1)
def schema() -> dict:
    return json.loads(SCHEMA.read_text())


@lru_cache(maxsize=None)
def _validator(kind: str) -> jsonschema.Draft202012Validator:
    document = schema()
    if kind not in document["$defs"]:
        raise KeyError(f"no Razorpay shape {kind!r} in {SCHEMA.name}")
    return jsonschema.Draft202012Validator({**document, "$ref": f"#/$defs/{kind}"})


def shape_errors(kind: str, body: Any) -> list[str]:
    return [f"{'/'.join(map(str, error.absolute_path)) or '(body)'}: {error.message}"
            for error in _validator(kind).iter_errors(body)]


def fixture(name: str) -> Any:
    return json.loads((FIXTURES / name).read_text())
