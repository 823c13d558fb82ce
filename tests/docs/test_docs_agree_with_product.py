"""Docs that disagreed with the product (issue 26, "what a new user tripped on"), each held to
the code it describes so that they cannot drift apart again."""
from __future__ import annotations

import re
from datetime import timedelta
from pathlib import Path

import pytest
from django.utils import timezone

from gateway.core.errors import ValidationError
from payments.admin import PaymentLinkForm
from payments.services.links import LINK_MAX_VALIDITY, LINK_MIN_VALIDITY, LinkRequest, link_request_check
from refunds.models import Refund
from refunds.selectors import PENDING_STATUS, REFUNDED_STATUS

ROOT = Path(__file__).resolve().parents[2]


def read(name: str) -> str:
    return (ROOT / name).read_text()


# --- payment-link expiry: 1 to 30 days, in the console, the service and the docs ------------------

def test_the_console_and_the_service_take_the_same_link_validity():
    field = PaymentLinkForm.base_fields["valid_days"]
    assert (field.min_value, field.max_value) == (LINK_MIN_VALIDITY.days, LINK_MAX_VALIDITY.days) == (1, 30)


def link_ahead(delta: timedelta) -> LinkRequest:
    return LinkRequest(amount=10_000, description="Invoice", customer_phone="9876543210",
                       expires_at=timezone.now() + delta)


@pytest.mark.parametrize("delta", [timedelta(days=1), timedelta(days=1, seconds=-30), timedelta(days=30)])
def test_the_service_takes_what_the_console_offers(delta):
    # "now + 1 day" as the console computed it a moment before the service's own check runs.
    assert link_request_check(link_ahead(delta)).expires_at


@pytest.mark.parametrize("delta", [timedelta(minutes=15), timedelta(hours=23), timedelta(days=30, minutes=5)])
def test_the_service_refuses_what_the_console_would_not_offer(delta):
    with pytest.raises(ValidationError) as caught:
        link_request_check(link_ahead(delta))
    assert caught.value.field == "expires_at"


def test_the_docs_give_the_same_link_validity():
    for page in ("docs/console.md", "docs/hosted-checkout.md", "docs/decisions.md"):
        assert "1 to 30 days" in read(page), page
    for page in sorted((ROOT / "docs").glob("*.md")) + [ROOT / "README.md"]:
        assert "15 minutes to 30 days" not in page.read_text(), page.name


# --- going live: the variables are the README's production minimum --------------------------------

NUMBERS = {"four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8, "nine": 9, "ten": 10, "eleven": 11}


def readme_production_minimum() -> list[str]:
    text = read("README.md")
    block = re.search(r"A production environment at minimum:\n\n```sh\n(.*?)```", text, re.S).group(1)
    return re.findall(r"^([A-Z_]+)=", block, re.M)


def test_going_live_lists_the_readmes_production_minimum_and_counts_it_right():
    minimum = readme_production_minimum()
    assert len(minimum) == 9
    text = read("docs/going-live.md")
    step = text[text.index("2. **Variables.**"):text.index("3. **Webhooks.**")]
    table = re.findall(r"^\s*\| `([A-Z_]+)` \|", step, re.M)
    assert table == minimum
    said = re.match(r"2\. \*\*Variables\.\*\* (\w+)", step).group(1).lower()
    assert NUMBERS[said] == len(minimum)


# --- refund statuses: the ones the code has ------------------------------------------------------

OLD_REFUND_STATUSES = ("PROCESSED",)


def test_hosted_checkout_names_the_refund_statuses_enquiry_sums():
    rows = {m.group(1): m.group(2) for m in re.finditer(r"^\| `(refund\w*Amount)` \| (.*)$",
                                                         read("docs/hosted-checkout.md"), re.M)}
    assert f"`{REFUNDED_STATUS}` refunds" in rows["refundedAmount"]
    assert f"(`{PENDING_STATUS}`)" in rows["refundPendingAmount"]


def test_no_guide_names_a_refund_status_the_code_does_not_have():
    statuses = set(Refund.Status.values)
    for page in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]:
        for unit in statements(page.read_text()):
            if "refund" not in unit.lower() or re.search(r"\bwas\b|[Uu]ntil migration", unit):
                continue  # what tells the renaming's history may name the old ones
            for old in OLD_REFUND_STATUSES:
                assert old not in unit, f"{page.name}: {unit.strip()[:160]}"
            for named in re.findall(r"`([A-Z]+)` refunds?\b|an? `([A-Z]+)` refund\b", unit):
                assert set(filter(None, named)) <= statuses, f"{page.name}: {unit.strip()[:160]}"


def statements(text: str) -> list[str]:
    """A table row each, and a paragraph each for prose (whose sentences wrap across lines)."""
    units = []
    for paragraph in re.split(r"\n\s*\n", text):
        units.extend(paragraph.splitlines() if paragraph.lstrip().startswith("|") else [paragraph])
    return units


# --- the SDK notes hold no developer's machine; the compat page names the right package ------------

def test_no_doc_holds_paths_of_a_developers_machine():
    machine = re.compile(r"(?<![\w.])/(?:tmp|home|root|Users|work|opt|var/folders)/|[A-Z]:\\\\")
    for page in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]:
        found = machine.findall(page.read_text())
        assert not found, f"{page.name} names paths of a machine: {found}"


def test_upstream_compat_says_which_pypi_package_works():
    text = read("docs/upstream-compat.md")
    assert "**Install `sabpaisa-python`, not `sabpaisa`.**" in text
    assert "The PyPI package named `sabpaisa`" in text and "cannot work with this gateway" in text
    # The versions the page names are the ones the project tests with.
    assert '"sabpaisa-python==3.0.0"' in read("pyproject.toml")
    assert "'sabpaisa-python==1.0.1'" in read("scripts/test")
    assert "sabpaisa-python==3.0.0" in text and "`==1.0.1`" in text
