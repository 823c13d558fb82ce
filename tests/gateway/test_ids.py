"""gateway.core.ids.random_string: the right length and alphabet, and every character possible."""
from collections import Counter

from gateway.core.ids import random_string
from payments.models import new_payment_id, new_txn_id


def test_length_and_alphabet():
    for alphabet, length in (("0123456789", 12), ("ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789", 18), ("ab", 1)):
        for _ in range(200):
            value = random_string(alphabet, length)
            assert len(value) == length and set(value) <= set(alphabet)


def test_every_character_turns_up_in_every_position():
    # A base conversion that dropped a digit or favoured a low one would leave gaps: with 3,000
    # draws over 10 digits, a digit missing from a position by chance has odds below 1e-130.
    draws = [random_string("0123456789", 6) for _ in range(3000)]
    for position in range(6):
        counts = Counter(draw[position] for draw in draws)
        assert set(counts) == set("0123456789")
        assert min(counts.values()) > 200  # 300 expected each


def test_ids_keep_their_shape():
    assert new_txn_id().startswith("SP") and len(new_txn_id()) == 20
    assert new_payment_id().startswith("pay_") and len(new_payment_id()) == 24
    assert len({new_payment_id() for _ in range(1000)}) == 1000
