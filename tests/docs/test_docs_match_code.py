"""The docs say what the code does: every field the API answers with (and every field of the
webhooks it sends) is documented on its area's page, and every setting gateway/settings.py reads from the environment has a row in README's
configuration table. Both fail naming the field or setting and the page to add it to, so that
whoever adds one (or merges a branch that did) can fix the docs in a minute."""
from __future__ import annotations

import ast
import json
import re
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import call_command

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"

# Which page documents which operations: the longest matching path prefix wins. An operation
# under none of these fails the test, asking for its page to be named here.
AREA_PAGES = {
    "/api/v2/payments": "docs/hosted-checkout.md",  # creation, the session read, enquiry
    "/api/v2/payments/s2s": "docs/s2s.md",
    "/api/v2/refunds": "docs/refunds.md",
    "/api/v2/disputes": "docs/disputes.md",
    "/api/v2/settlements": "docs/settlements.md",
    "/api/v2/tokens": "docs/tokens.md",
    "/sandbox/": "docs/sandbox.md",
    "/sandbox/upi": "docs/s2s.md",  # the sandbox UPI app is documented with the S2S flow it pays
}


def page_for(path: str) -> str | None:
    matches = [prefix for prefix in AREA_PAGES if path == prefix or path.startswith(prefix.rstrip("/") + "/")]
    return AREA_PAGES[max(matches, key=len)] if matches else None


def documented_names(page: Path) -> set[str]:
    """Names written as code (`name`, `a.b`, `name=...`) or alone in a table cell."""
    # Examples in fenced blocks show a field without saying what it is: they do not count.
    text = re.sub(r"^```.*?^```", "", page.read_text(encoding="utf-8"), flags=re.S | re.M)
    names = set()
    for code in re.findall(r"`([^`]+)`", text):
        names.update(re.findall(r"[A-Za-z_][A-Za-z0-9_]*", code))
    for cell in re.findall(r"\|\s*([A-Za-z_][A-Za-z0-9_]*)\s*(?=\|)", text):
        names.add(cell)
    # A numbered range, `udf1`..`udf20`, names every field in it.
    for stem, first, last in re.findall(r"`([A-Za-z_]+?)(\d+)`\s*\.\.\s*`\1(\d+)`", text):
        names.update(f"{stem}{n}" for n in range(int(first), int(last) + 1))
    return names


@pytest.fixture(scope="module")
def schema() -> dict:
    out = StringIO()
    call_command("spectacular", "--format", "openapi-json", stdout=out)
    return json.loads(out.getvalue())


def _resolve(schema: dict, node: dict) -> dict:
    while "$ref" in node:
        node = schema["components"]["schemas"][node["$ref"].rsplit("/", 1)[-1]]
    return node


def response_fields(schema: dict, node: dict, prefix: str = "") -> list[tuple[str, str]]:
    """(dotted path, field name) of every property in a response body, nested ones included."""
    node = _resolve(schema, node)
    found = []
    for combined in ("allOf", "oneOf", "anyOf"):
        for part in node.get(combined, []):
            found += response_fields(schema, part, prefix)
    if node.get("type") == "array" and "items" in node:
        found += response_fields(schema, node["items"], prefix + "[]")
    for name, child in node.get("properties", {}).items():
        path = f"{prefix}.{name}" if prefix else name
        found.append((path, name))
        found += response_fields(schema, child, path)
    return found


def test_every_field_the_api_answers_with_is_documented_on_its_areas_page(schema):
    missing, unmapped = [], []
    pages: dict[str, set[str]] = {}
    for path, operations in schema["paths"].items():
        page = page_for(path)
        for method, operation in operations.items():
            if page is None:
                unmapped.append(f"{method.upper()} {path}")
                continue
            names = pages.setdefault(page, documented_names(ROOT / page))
            for status, response in operation.get("responses", {}).items():
                if not status.startswith("2"):
                    continue  # the error envelope: checked against README below
                for media in response.get("content", {}).values():
                    for dotted, name in response_fields(schema, media.get("schema", {})):
                        if name not in names:
                            missing.append(f"{page}: response field `{name}` ({dotted}) of {method.upper()} "
                                           f"{path} ({status}) is not documented")
    assert not unmapped, ("operations with no documentation page: name their page in AREA_PAGES in "
                          f"{Path(__file__).relative_to(ROOT)}: " + ", ".join(unmapped))
    assert not missing, "add each field to the page's response table:\n" + "\n".join(sorted(set(missing)))


def keys_of(value, prefix: str = "") -> list[tuple[str, str]]:
    """(dotted path, key) of every key in a JSON answer, nested ones included."""
    found = []
    if isinstance(value, dict):
        for key, child in value.items():
            path = f"{prefix}.{key}" if prefix else key
            found.append((path, key))
            found += keys_of(child, path)
    elif isinstance(value, list):
        for item in value:
            found += keys_of(item, prefix + "[]")
    return found


@pytest.mark.django_db
def test_every_field_of_real_answers_is_documented_on_its_areas_page(api):
    """The schema can lag behind the code (enquiry's refund fields were missing from both):
    real answers of each operation, every field filled in, are checked as well."""
    from payments.models import Payment
    from refunds.models import Refund
    from tests.support.factories import make_merchant, make_success_payment, refund_body, session_body, signed_body

    tm = make_merchant()
    key = {"HTTP_X_API_KEY": tm.api_key}
    answers = []

    def record(method: str, path: str, response):
        assert 200 <= response.status_code < 300, (method, path, response.content[:500])
        answers.append((method, path, response.json()))

    record("POST", "/api/v2/payments", api.post("/api/v2/payments", session_body(tm), format="json", **key))
    record("POST", "/api/v2/payments/s2s", api.post("/api/v2/payments/s2s", signed_body(tm, merchantTxnId="DOCS-S2S-1"), format="json",
                                                    HTTP_X_MERCHANT_ID=tm.code, **key))
    payment = make_success_payment(tm, amount=10_000)
    refund = api.post("/api/v2/refunds", refund_body(tm, payment, refundAmount=2_500, reason="damaged"),
                      format="json", **key)
    record("POST", "/api/v2/refunds", refund)
    lookup = {"merchantId": tm.code, "merchantTxnId": payment.merchant_txn_id}
    record("GET", "/api/v2/payments", api.get("/api/v2/payments", lookup, **key))
    record("POST", "/api/v2/payments/enquiry", api.post("/api/v2/payments/enquiry", lookup, format="json", **key))
    record("GET", "/api/v2/refunds", api.get("/api/v2/refunds", {"merchantId": tm.code,
                                                                 "sabpaisaTxnId": payment.sabpaisa_txn_id}, **key))
    refund_id = refund.json()["refundId"]
    record("GET", "/api/v2/refunds/{refundId}", api.get(f"/api/v2/refunds/{refund_id}", {"merchantId": tm.code},
                                                        **key))
    assert Payment.objects.filter(merchant=tm.merchant).count() == 3
    # A settlement of the paid payment and its refund, every field filled in.
    from datetime import timedelta

    from django.utils import timezone

    from refunds.models import Settlement, SettlementLine

    paid_at = timezone.now()
    settlement = Settlement.objects.create(
        acquirer="cashfree", merchant=tm.merchant, processor_settlement_id="DOCS-1", utr="UTRDOCS1",
        period_start=paid_at - timedelta(days=1), period_end=paid_at, gross=10_000, fees=200, tax=36,
        refunds=2_500, net=7_264, status="SUCCESS", settled_at=paid_at)
    SettlementLine.objects.create(settlement=settlement, kind="payment", processor_event_id="E1", amount=10_000,
                                  fee=200, tax=36, payment=payment)
    SettlementLine.objects.create(settlement=settlement, kind="refund", processor_event_id="E2", amount=2_500,
                                  payment=payment, refund=Refund.objects.get(refund_id=refund.json()["refundId"]))
    record("GET", "/api/v2/settlements", api.get("/api/v2/settlements", **key))
    record("GET", "/api/v2/settlements/{settlementId}", api.get(f"/api/v2/settlements/{settlement.public_id}", **key))

    # The webhooks these payments and the refund send, each flow's on its own page.
    from payments.services.transitions import payment_mark_succeeded
    from refunds.tasks import refund_process
    from webhooks.models import WebhookEvent
    from webhooks.services import webhook_test_send

    s2s = Payment.objects.get(merchant=tm.merchant, merchant_txn_id="DOCS-S2S-1")
    payment_mark_succeeded(payment_id=s2s.pk, bank_rrn="123456789012")
    refund_process(Refund.objects.get(refund_id=refund_id).pk)
    tm.merchant.webhook_url = "http://127.0.0.1:9/unused"  # a test event needs an address; its answer does not matter
    tm.merchant.save()
    webhook_test_send(merchant=tm.merchant, actor=None)
    flows = dict(Payment.objects.filter(merchant=tm.merchant).values_list("sabpaisa_txn_id", "flow"))
    events = WebhookEvent.objects.filter(merchant=tm.merchant)
    sent = set()
    for event in events:
        if event.event_type.startswith("refund."):
            page = "docs/refunds.md"
        elif event.event_type.startswith("payment."):
            page = "docs/s2s.md" if flows.get(event.subject_id) == Payment.Flow.S2S else "docs/hosted-checkout.md"
        else:
            page = "docs/webhooks.md"
        sent.add(page)
        answers.append((f"webhook {event.event_type} ->", page, event.payload))
    assert sent == {"docs/refunds.md", "docs/s2s.md", "docs/hosted-checkout.md", "docs/webhooks.md"}, sent

    missing = []
    for method, path, body in answers:
        page = path if path.endswith(".md") else page_for(path)
        what = method if path.endswith(".md") else f"{method} {path}"
        names = documented_names(ROOT / page)
        missing += [f"{page}: field `{name}` ({dotted}) of {what} is not documented"
                    for dotted, name in keys_of(body) if name not in names]
    assert not missing, "add each field to the page's response or payload table:\n" + "\n".join(sorted(set(missing)))


def test_the_error_envelope_is_documented_in_the_readme(schema):
    names = documented_names(README)
    envelope = set()
    for operations in schema["paths"].values():
        for operation in operations.values():
            for status, response in operation.get("responses", {}).items():
                if status.startswith(("4", "5")):
                    for media in response.get("content", {}).values():
                        envelope.update(name for _, name in response_fields(schema, media.get("schema", {})))
    assert envelope, "the schema declares no error bodies"
    missing = sorted(envelope - names)
    assert not missing, f"README.md: error envelope field(s) {missing} are not documented under Calling the API"


# --- settings ----------------------------------------------------------------------------

ENV_READERS = {"str", "int", "float", "bool", "list", "db", "json", "url", "path", "dict", "tuple", "cache"}


def settings_read_from_the_environment() -> dict[str, int]:
    """Every variable gateway/settings.py reads through django-environ (env.X("NAME", ...) or
    env("NAME")) or os.environ, with the line that reads it."""
    source = (ROOT / "gateway" / "settings.py").read_text(encoding="utf-8")
    found: dict[str, int] = {}
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, ast.Call) or not node.args:
            continue
        first = node.args[0]
        if not (isinstance(first, ast.Constant) and isinstance(first.value, str)):
            continue
        func = node.func
        is_env = (isinstance(func, ast.Name) and func.id == "env") or (
            isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.value.id == "env"
            and func.attr in ENV_READERS) or (
            isinstance(func, ast.Attribute) and func.attr in ("get", "getenv")
            and ast.unparse(func.value) in ("os.environ", "os"))
        if is_env:
            found.setdefault(first.value, node.lineno)
    return found


def readme_configuration_rows() -> set[str]:
    text = README.read_text(encoding="utf-8")
    section = text[text.index("## Configuration"):]
    section = section[: section.index("\n## ", 1)]
    return set(re.findall(r"^\|\s*`([A-Z][A-Z0-9_]*)`\s*\|", section, re.M))


def test_the_settings_reader_finds_what_settings_py_reads():
    read = settings_read_from_the_environment()
    assert {"DATABASE_URL", "REDIS_URL", "GATEWAY_ENV", "WEBHOOK_RETRY_SCHEDULE", "DJANGO_SECRET_KEY"} <= set(read)


def test_every_setting_read_from_the_environment_is_in_the_readme_configuration_table():
    rows = readme_configuration_rows()
    missing = [f"gateway/settings.py line {line} reads `{name}` from the environment, but README.md's "
               f"configuration table (## Configuration) has no row for it: add "
               f"| `{name}` | what it does | its default |"
               for name, line in sorted(settings_read_from_the_environment().items()) if name not in rows]
    assert not missing, "\n".join(missing)


def test_every_row_of_the_readme_configuration_table_is_a_setting_the_code_reads():
    read = settings_read_from_the_environment()
    stale = sorted(rows for rows in readme_configuration_rows() if rows not in read)
    assert not stale, (f"README.md's configuration table documents {stale}, which gateway/settings.py no longer "
                       "reads from the environment: remove the row or read the setting")
