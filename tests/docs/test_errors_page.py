"""docs/errors.md lists every error code the service can answer, with the HTTP statuses it
answers it with, and every merchant guide links to it (issue 26).

The codes the code can raise are found two ways: every GatewayError subclass, once every module
of the product is imported (a code is a class attribute there), and every literal code handed to
`envelope(...)` with its status (the few views that answer without raising)."""
from __future__ import annotations

import importlib
import pkgutil
import re
from pathlib import Path

import pytest

from gateway.core.errors import GatewayError

ROOT = Path(__file__).resolve().parents[2]
PAGE = ROOT / "docs" / "errors.md"
PACKAGES = ("gateway", "payments", "refunds", "tokens", "webhooks")
# The README's merchant guides, less the engineering notes (decisions, testing), plus the two
# guides it links from elsewhere.
ENGINEERING = {"docs/decisions.md", "docs/testing.md", "docs/performance.md", "docs/performance-plans.md"}
ALSO_GUIDES = {"docs/going-live.md", "docs/security.md"}
ENVELOPE_CALL = re.compile(r'\benvelope\(\s*"([A-Z0-9_]+)"[^\n]*?,\s*([1-5]\d\d)\b')


def import_everything() -> None:
    for name in PACKAGES:
        package = importlib.import_module(name)
        for module in pkgutil.walk_packages(package.__path__, prefix=f"{name}."):
            if ".migrations." not in module.name and not module.name.endswith(".migrations"):
                importlib.import_module(module.name)


def subclasses(cls) -> set[type]:
    found = set()
    for sub in cls.__subclasses__():
        found |= {sub} | subclasses(sub)
    return found


def raisable() -> dict[str, set[int]]:
    """errorCode -> the HTTP statuses the code answers it with."""
    import_everything()
    codes: dict[str, set[int]] = {}
    for cls in {GatewayError} | subclasses(GatewayError):
        codes.setdefault(cls.code, set()).add(cls.http_status)
    for package in PACKAGES:
        for source in (ROOT / package).rglob("*.py"):
            for code, status in ENVELOPE_CALL.findall(source.read_text()):
                codes.setdefault(code, set()).add(int(status))
    return codes


def documented() -> dict[str, set[int]]:
    rows = re.findall(r"^\| `([A-Z0-9_]+)` \| ([^|]+) \|", PAGE.read_text(), re.M)
    return {code: {int(s) for s in re.findall(r"\b[1-5]\d\d\b", statuses)} for code, statuses in rows}


@pytest.fixture(scope="module")
def codes():
    return raisable()


def test_the_search_finds_the_codes_it_should(codes):
    # A search that found nothing would pass everything below.
    assert {"VALIDATION_ERROR", "INVALID_SIGNATURE", "DUPLICATE_REFUND", "INTERNAL_ERROR"} <= codes.keys()
    assert 503 in codes["SERVICE_UNAVAILABLE"] and 401 in codes["INVALID_SIGNATURE"]


def test_every_code_the_service_can_answer_is_on_the_page_with_its_statuses(codes):
    page = documented()
    missing = sorted(set(codes) - set(page))
    assert not missing, f"docs/errors.md has no row for {missing}: add one (status, cause, what to do)"
    wrong = {code: sorted(statuses - page[code]) for code, statuses in codes.items() if statuses - page[code]}
    assert not wrong, f"docs/errors.md does not give these statuses in the code's row: {wrong}"


def test_the_page_lists_no_code_the_service_cannot_answer(codes):
    stale = sorted(set(documented()) - set(codes))
    assert not stale, f"docs/errors.md lists codes nothing raises: {stale}"


def test_each_row_says_what_causes_it_and_what_to_do():
    rows = re.findall(r"^\| `[A-Z0-9_]+` \|.*\|$", PAGE.read_text(), re.M)
    for row in rows:
        cells = [cell.strip() for cell in row.strip("|").split("|")]
        assert len(cells) == 4 and all(len(cell) > 2 for cell in cells), row


def merchant_guides() -> list[str]:
    readme = (ROOT / "README.md").read_text()
    table = readme[readme.index("Merchant guides, one per area:"):readme.index("\n## Layout")]
    listed = set(re.findall(r"\]\((docs/[\w-]+\.md)\)", table))
    return sorted((listed - ENGINEERING - {"docs/errors.md"}) | ALSO_GUIDES)


def test_readme_and_every_merchant_guide_link_the_page():
    guides = merchant_guides()
    assert len(guides) >= 10
    assert "](docs/errors.md)" in (ROOT / "README.md").read_text()
    unlinked = [g for g in guides if "](errors.md" not in (ROOT / g).read_text()]
    assert not unlinked, f"these guides do not link docs/errors.md: {unlinked}"
