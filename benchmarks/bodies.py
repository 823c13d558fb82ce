"""Pre-built, pre-signed raw HTTP requests for wrk (benchmarks/wrk.lua) and the open-loop
generator (benchmarks/openloop.py): signing happens here, before the clock starts, so the load
generator only copies bytes. Files hold the requests separated by NUL bytes.

Creation requests carry a fresh timestamp (the gateway refuses one older than 5 minutes), so
each file is written just before the phase that sends it.
"""
from __future__ import annotations

import hashlib
import hmac
import json
import secrets
import time
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlencode


@dataclass(frozen=True)
class Credentials:
    code: str
    api_key: str
    secret_key: str
    webhook_secret: str = ""

    @classmethod
    def from_json(cls, data: dict) -> Credentials:
        return cls(data["merchantId"], data["apiKey"], data["secretKey"], data.get("webhookSecret", ""))


def _checksum(secret: str, *parts) -> str:
    return hmac.new(secret.encode(), "|".join(str(p) for p in parts).encode(), hashlib.sha256).hexdigest()


def raw(method: str, target: str, *, port: int, headers: dict | None = None, body: bytes | None = None) -> bytes:
    lines = [f"{method} {target} HTTP/1.1", f"Host: 127.0.0.1:{port}", "User-Agent: gw-bench"]
    for name, value in (headers or {}).items():
        lines.append(f"{name}: {value}")
    if body is not None:
        lines.append(f"Content-Length: {len(body)}")
    return ("\r\n".join(lines) + "\r\n\r\n").encode() + (body or b"")


def write(path: Path, requests: list[bytes]) -> Path:
    with open(path, "wb") as f:
        f.write(b"\0".join(requests))
    return path


def bare(port: int) -> list[bytes]:
    return [raw("GET", "/bench/bare", port=port)]


def enquiry(port: int, creds: Credentials, merchant_txn_ids: list[str]) -> list[bytes]:
    return [raw("GET", "/api/v2/payments?" + urlencode({"merchantId": creds.code, "merchantTxnId": txn}),
                port=port, headers={"X-Api-Key": creds.api_key})
            for txn in merchant_txn_ids]


def s2s_body(creds: Credentials, txn: str, now: int, *, amount: int = 12345, expiry_minutes: int = 60,
             mode: str = "UPI_QR") -> dict:
    body = {
        "merchantId": creds.code, "merchantTxnId": txn, "amount": amount, "currency": "INR",
        "customerName": "Asha Rao", "customerEmail": "asha@example.com", "customerPhone": "9876543210",
        "paymentMode": mode, "timestamp": now,
        "description": "Order " + txn, "upiExpiryMinutes": expiry_minutes,
        "udf1": "cart-42", "udf2": "web", "metadata": {"order": txn, "channel": "web"},
    }
    body["checksum"] = _checksum(creds.secret_key, creds.code, txn, amount, "INR", now)
    return body


def s2s(port: int, creds: Credentials, count: int, *, prefix: str, expiry_minutes: int = 60) -> list[bytes]:
    """S2S creations, each with its own merchantTxnId and X-Idempotency-Key. The QR / intent
    link is valid for an hour, so none of them expires (and sends a webhook) during the run."""
    now = int(time.time())
    out = []
    for i in range(count):
        txn = f"{prefix}{i:07d}"
        body = json.dumps(s2s_body(creds, txn, now, expiry_minutes=expiry_minutes,
                                   mode=("UPI_QR", "UPI_INTENT")[i % 2]), separators=(",", ":")).encode()
        out.append(raw("POST", "/api/v2/payments/s2s", port=port, body=body, headers={
            "X-Api-Key": creds.api_key, "X-Merchant-Id": creds.code, "Content-Type": "application/json",
            "X-Idempotency-Key": f"idem-{txn}-{secrets.token_hex(4)}"}))
    return out


def hosted(port: int, creds: Credentials, count: int, *, prefix: str) -> list[bytes]:
    now = int(time.time())
    out = []
    for i in range(count):
        txn = f"{prefix}{i:07d}"
        body = {
            "merchantId": creds.code, "merchantTxnId": txn, "amount": 49900, "currency": "INR",
            "returnUrl": "https://shop.example/payment-done", "timestamp": now,
            "customerName": "Asha Rao", "customerEmail": "asha@example.com", "customerPhone": "9876543210",
            "description": "Order " + txn, "metadata": {"order": txn},
        }
        body["checksum"] = _checksum(creds.secret_key, creds.code, txn, 49900, "INR", now)
        out.append(raw("POST", "/api/v2/payments", port=port, body=json.dumps(body, separators=(",", ":")).encode(),
                       headers={"X-Api-Key": creds.api_key, "Content-Type": "application/json"}))
    return out


def upi_pay(port: int, links_and_vpas: list[tuple[str, str]]) -> list[bytes]:
    """The sandbox UPI app paying links: what makes a payment final in staging."""
    return [raw("POST", "/sandbox/upi/pay", port=port, headers={"Content-Type": "application/json"},
                body=json.dumps({"upiUri": link, "payerVpa": vpa}).encode())
            for link, vpa in links_and_vpas]
