"""Cashfree Payment Gateway: the Acquirer (acquirer.py) over its API client (client.py), its
errors (errors.py), paise and rupees (money.py) and inbound webhook verification (webhooks.py).
docs/going-live.md maps every flow."""
