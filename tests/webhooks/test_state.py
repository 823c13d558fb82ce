"""webhooks.state.TRANSITIONS: the one table of a delivery's status changes, and the only code
that writes a delivery's status goes through it."""
import ast
from pathlib import Path

import pytest

from webhooks.delivery import delivery_status_set
from webhooks.models import WebhookDelivery
from webhooks.state import TRANSITIONS, InvalidDeliveryTransition, can_transition

D = WebhookDelivery.Status
ROOT = Path(__file__).resolve().parents[2]


def test_every_status_has_a_row():
    assert set(TRANSITIONS) == set(D.values)


@pytest.mark.parametrize("status", list(D.values))
def test_a_person_may_resend_a_delivery_in_any_status(status):
    assert can_transition(status, D.PENDING)


def test_a_delivered_delivery_never_fails_nor_dies_afterwards():
    delivery = WebhookDelivery(status=D.DELIVERED)
    for target in (D.FAILED, D.DEAD, D.DELIVERED):
        with pytest.raises(InvalidDeliveryTransition):
            delivery_status_set(delivery, target)
    assert delivery.status == D.DELIVERED


def test_a_dead_delivery_is_not_retried_without_a_resend():
    with pytest.raises(InvalidDeliveryTransition):
        delivery_status_set(WebhookDelivery(status=D.DEAD), D.FAILED)


def test_the_status_is_written_only_by_delivery_status_set():
    writers = []
    for path in sorted((ROOT / "webhooks").rglob("*.py")):
        tree = ast.parse(path.read_text())
        for function in ast.walk(tree):
            if not isinstance(function, ast.FunctionDef):
                continue
            for node in ast.walk(function):
                targets = node.targets if isinstance(node, ast.Assign) else [node.target] \
                    if isinstance(node, (ast.AugAssign, ast.AnnAssign)) else []
                if any(isinstance(t, ast.Attribute) and t.attr == "status" for t in targets):
                    writers.append(f"{path.relative_to(ROOT)}:{function.name}")
    assert writers == ["webhooks/delivery.py:delivery_status_set"]


def test_only_the_writes_module_uses_the_performance_layer():
    importers = [str(path.relative_to(ROOT)) for path in sorted((ROOT / "webhooks").rglob("*.py"))
                 if "gateway.perf" in path.read_text()]
    assert importers == ["webhooks/writes.py"]
