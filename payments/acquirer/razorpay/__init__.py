"""Razorpay: the gateway's Acquirer protocol over Razorpay's Payments API (v1). acquirer.py is the
adapter, client.py the wire; docs/going-live.md ("Razorpay") maps every flow and lists what is
still a guess until a Razorpay test account confirms it."""
