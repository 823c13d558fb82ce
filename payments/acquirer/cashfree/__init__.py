"""Cashfree Payment Gateway: the API client (client.py), its errors (errors.py), paise and
rupees (money.py) and inbound webhook verification (webhooks.py). Not yet an Acquirer: the
adapter arrives with issue 22 on issue 21's seam; see docs/going-live.md."""
