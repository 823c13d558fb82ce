"""Create a hosted checkout session and print where to send the customer. Standard library only.

    python create_session.py MERCHANT_ID API_KEY SECRET_KEY [AMOUNT_IN_PAISE]

Base address: GATEWAY_URL (default http://127.0.0.1:8000). scripts/quickstart prints this line
with the demo merchant's values filled in.
"""
import hashlib
import hmac
import json
import os
import sys
import time
import urllib.error
import urllib.request


def create_session(base_url: str, merchant_id: str, api_key: str, secret_key: str, amount: int) -> dict:
    now = int(time.time())
    body = {"merchantId": merchant_id, "merchantTxnId": f"ORDER-{time.time_ns()}", "amount": amount,
            "currency": "INR", "returnUrl": "https://shop.example/payment-done", "timestamp": now,
            "customerName": "Asha Verma", "customerEmail": "asha@example.com", "customerPhone": "9876543210"}
    # The checksum: HMAC-SHA256, keyed with the secret key, of merchantId|merchantTxnId|amount|currency|timestamp.
    base = "|".join(str(body[k]) for k in ("merchantId", "merchantTxnId", "amount", "currency", "timestamp"))
    body["checksum"] = hmac.new(secret_key.encode(), base.encode(), hashlib.sha256).hexdigest()
    request = urllib.request.Request(
        f"{base_url}/api/v2/payments", data=json.dumps(body).encode(), method="POST",
        headers={"Content-Type": "application/json", "X-Api-Key": api_key})
    with urllib.request.urlopen(request, timeout=30) as response:
        return json.load(response)


def main(argv: list[str]) -> int:
    if len(argv) not in (3, 4):
        print(__doc__, file=sys.stderr)
        return 2
    merchant_id, api_key, secret_key = argv[:3]
    amount = int(argv[3]) if len(argv) == 4 else 49900
    base_url = os.environ.get("GATEWAY_URL", "http://127.0.0.1:8000").rstrip("/")
    try:
        session = create_session(base_url, merchant_id, api_key, secret_key, amount)
    except urllib.error.HTTPError as exc:  # the error envelope names what was wrong
        print(exc.read().decode(), file=sys.stderr)
        return 1
    print(json.dumps(session, indent=2))
    print("Send the customer to:", session["checkoutUrl"] + "?clientSecret=" + session["clientSecret"])
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
