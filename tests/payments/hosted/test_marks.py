"""Card-network and UPI-app marks (issue 19): vendored from simple-icons with their licence and
provenance, harmless as files, and shown on the method list and the card form."""
from __future__ import annotations

import hashlib
import re
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from payments.checkout.display import MARKS

MARKS_DIR = Path(__file__).resolve().parents[3] / "static" / "checkout" / "marks"
SVG = "{http://www.w3.org/2000/svg}"


def vendored() -> list[str]:
    return [slug for marks in MARKS.values() for slug, _ in marks]


def test_every_mark_is_the_file_its_provenance_records_with_the_licence_beside_it():
    provenance = (MARKS_DIR / "PROVENANCE.md").read_text()
    assert "simple-icons" in provenance and "CC0-1.0" in provenance
    assert "CC0 1.0 Universal" in (MARKS_DIR / "LICENSE.md").read_text()
    assert (MARKS_DIR / "DISCLAIMER.md").exists()
    for slug in vendored():
        digest = hashlib.sha256((MARKS_DIR / f"{slug}.svg").read_bytes()).hexdigest()
        assert re.search(rf"\| `{slug}\.svg` \|.*`{digest}` \|", provenance), slug


@pytest.mark.parametrize("slug", vendored())
def test_a_mark_is_a_plain_drawing_with_nothing_that_runs_or_loads(slug):
    root = ET.fromstring((MARKS_DIR / f"{slug}.svg").read_text())
    assert root.tag == f"{SVG}svg" and re.fullmatch(r"#[0-9a-f]{6}", root.get("fill"))
    for element in root.iter():
        assert element.tag in {f"{SVG}svg", f"{SVG}title", f"{SVG}path"}, element.tag
        for name in element.attrib:
            assert not name.lower().startswith("on") and "href" not in name, (slug, name)


@pytest.mark.django_db
def test_the_method_list_and_the_card_form_show_the_marks(client, create_session, shop):
    session = create_session(shop)
    client.get(f"/checkout/{session['paymentId']}?clientSecret={session['clientSecret']}")
    html = client.get(f"/checkout/{session['paymentId']}").content.decode()
    card_summary = re.search(r'<summary data-method="CARD">.*?</summary>', html, re.S).group(0)
    upi_summary = re.search(r'<summary data-method="UPI">.*?</summary>', html, re.S).group(0)
    assert "/static/checkout/marks/visa.svg" in card_summary and "/static/checkout/marks/mastercard.svg" in card_summary
    assert "/static/checkout/marks/phonepe.svg" in upi_summary and "/static/checkout/marks/googlepay.svg" in upi_summary
    # In the card form, with their names for screen readers (in the summary they are decoration).
    assert re.search(r'<p class="marks marks-form">.*alt="Visa".*alt="American Express".*RuPay', html, re.S)

    served = client.get("/static/checkout/marks/visa.svg")
    assert served.status_code == 200 and served["Content-Type"].startswith("image/svg+xml")
