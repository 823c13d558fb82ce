"""Settlements: what an acquirer paid out, line by line (docs/settlements.md)."""
