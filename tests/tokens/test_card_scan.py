"""The card-data scan the tokenisation tests rely on: it must find what a leak looks like and
not cry wolf at the numbers every database holds."""
from tests.tokens.helpers import find_card_data


def test_finds_a_cvv_stored_as_text_or_as_a_number():
    assert find_card_data('{"note":"cvv 739"}', cvvs=["739"]) == ["CVV 739"]
    assert find_card_data('{"card_cvv":739}', cvvs=["739"]) == ["CVV 739"]
    assert find_card_data('{"id":739}\n{"cvv":"739"}', cvvs=["739"]) == ["CVV 739"]


def test_ignores_row_ids_foreign_keys_and_timestamp_fractions():
    text = '{"id":739,"group_id":739,"permission_id": 739,"created_at":"2026-11-23T10:00:00.739+00:00"}'
    assert find_card_data(text, cvvs=["739"]) == []


def test_finds_card_numbers_however_grouped_and_any_luhn_valid_run():
    assert find_card_data('{"pan":"4111-1111-1111-1111"}') == ["4111-1111-1111-1111"]
    assert find_card_data('{"x":"4539578763621486"}') == ["4539578763621486"]
    assert find_card_data('{"digest":"ab4539578763621486cd"}') == []
