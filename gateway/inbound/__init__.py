"""The inbound door: where every acquirer delivers its notices (webhooks), at
POST /acquirer/<name>/webhooks, and the one pipeline that takes them (pipeline.py). A face, on
the floor of the console and the checkout: it calls payments' and refunds' services directly,
and knows no acquirer by name (each one's package verifies and parses its own notices)."""
