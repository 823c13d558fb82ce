"""The merchant's side of the fault run: orders paid, declined, left to expire and refunded,
through the real API, retried the way a careful merchant retries.

    python -m benchmarks.faultload --port 8391 --creds FILE --orders 1400 --rate 8 --out FILE

Order i is one of (i % 7): 0-2 paid then refunded twice at once (60% each: one refund must be
refused), 3 paid, 4-5 declined, 6 left to expire (upiExpiryMinutes=1). Every call that gets no
answer, a 5xx or a 429 is retried with the same idempotency key, merchantTxnId, refundId and
body (re-signed with a fresh timestamp), as CONTRACT.md lets a merchant. The output records
every call (start, end, status) and, per order, every paymentId and refund answer seen.
"""
from __future__ import annotations

import argparse
import hashlib
import hmac
import http.client
import json
import queue
import random
import threading
import time
from urllib.parse import urlencode

AMOUNT = 20000
REFUND = AMOUNT * 6 // 10
STEP_DEADLINE = 240.0


class Api:
    def __init__(self, port: int, creds: dict):
        self.port = port
        self.creds = creds
        self.calls: list[tuple] = []
        self._lock = threading.Lock()

    def call(self, method: str, path: str, label: str, body: dict | None = None, headers: dict | None = None):
        started = time.time()
        status, data = None, None
        try:
            conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=20)
            payload = json.dumps(body).encode() if body is not None else None
            conn.request(method, path, body=payload, headers={"Content-Type": "application/json",
                                                               "X-Api-Key": self.creds["apiKey"], **(headers or {})})
            response = conn.getresponse()
            status = response.status
            raw = response.read()
            conn.close()
            try:
                data = json.loads(raw)
            except ValueError:
                data = None
        except Exception as exc:  # noqa: BLE001 - no answer: retried like a 5xx
            data = {"error": type(exc).__name__}
        with self._lock:
            self.calls.append((started, time.time(), method, label, status))
        return status, data or {}

    def sign(self, *parts) -> str:
        return hmac.new(self.creds["secretKey"].encode(), "|".join(str(p) for p in parts).encode(),
                        hashlib.sha256).hexdigest()


def _retryable(status, data) -> bool:
    if status is None or status >= 500 or status == 429:
        return True
    # Another request with the same key is still in flight (or was cut off): ask again.
    return status == 400 and data.get("errorCode") == "SERVICE_UNAVAILABLE"


def _until(deadline: float, attempt):
    """Call attempt() until it returns something other than None, pausing between tries."""
    pause = 0.3
    while time.time() < deadline:
        result = attempt()
        if result is not None:
            return result
        time.sleep(pause + random.random() * pause)
        pause = min(pause * 1.5, 3.0)
    return None


def run_order(api: Api, i: int, result: dict) -> None:
    code = api.creds["merchantId"]
    kind = ("refunded", "refunded", "refunded", "paid", "declined", "declined", "expired")[i % 7]
    txn = f"F{i:05d}"
    order = result.setdefault(txn, {"kind": kind, "payment_ids": [], "refunds": {}, "steps": []})
    key = f"idem-{txn}"

    def create():
        now = int(time.time())
        body = {"merchantId": code, "merchantTxnId": txn, "amount": AMOUNT, "currency": "INR",
                "customerName": "Asha Rao", "customerEmail": "asha@example.com", "customerPhone": "9876543210",
                "paymentMode": "UPI_QR", "timestamp": now, "upiExpiryMinutes": 1 if kind == "expired" else 30,
                "udf1": txn, "checksum": api.sign(code, txn, AMOUNT, "INR", now)}
        status, data = api.call("POST", "/api/v2/payments/s2s", "s2s", body,
                                {"X-Merchant-Id": code, "X-Idempotency-Key": key})
        if status == 201:
            order["payment_ids"].append(data["paymentId"])
            return data
        if _retryable(status, data):
            return None
        order["steps"].append(f"create refused {status} {data.get('errorCode')}")
        return {}

    created = _until(time.time() + STEP_DEADLINE, create)
    if not created:
        order["steps"].append("create gave up" if created is None else "create refused")
        return
    order["txn_id"] = created["txnId"]
    if kind == "expired":
        return

    vpa = "failure@sandbox" if kind == "declined" else "success@sandbox"

    def pay():
        status, data = api.call("POST", "/sandbox/upi/pay", "upi-pay", {"upiUri": created["upiQrString"],
                                                                         "payerVpa": vpa})
        if status in (200, 202):
            return True
        if _retryable(status, data):
            return None
        # After a retry, "already paying / final" means the first attempt went through.
        order["steps"].append(f"pay answered {status} {data.get('errorMessage', '')[:60]}")
        return True

    if _until(time.time() + STEP_DEADLINE, pay) is None:
        order["steps"].append("pay gave up")
        return
    if kind != "refunded":
        return

    def succeeded():
        status, data = api.call("GET", "/api/v2/payments?" + urlencode({"merchantId": code, "merchantTxnId": txn}),
                                "enquiry")
        if status == 200 and data.get("status") == "SUCCESS":
            return True
        if status == 200 and data.get("status") in ("FAILED", "EXPIRED"):
            return False
        return None

    if not _until(time.time() + STEP_DEADLINE, succeeded):
        order["steps"].append("never SUCCESS")
        return

    def refund(suffix: str):
        refund_id = f"R{txn}{suffix}"

        def attempt():
            status, data = api.call("POST", "/api/v2/refunds", "refund", {
                "merchantId": code, "sabpaisaTxnId": created["txnId"], "refundAmount": REFUND,
                "refundId": refund_id, "reason": "fault run"})
            if _retryable(status, data):
                return None
            order["refunds"].setdefault(refund_id, []).append([status, data.get("errorCode") or data.get("status")])
            return True

        if _until(time.time() + STEP_DEADLINE, attempt) is None:
            order["refunds"].setdefault(refund_id, []).append([None, "gave up"])

    # Two refunds of 60% at once: the payment's lock must let exactly one through.
    pair = [threading.Thread(target=refund, args=(s,)) for s in ("a", "b")]
    for t in pair:
        t.start()
    for t in pair:
        t.join()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--creds", required=True)
    parser.add_argument("--orders", type=int, default=1400)
    parser.add_argument("--rate", type=float, default=8.0, help="orders started per second")
    parser.add_argument("--threads", type=int, default=128)
    parser.add_argument("--out", required=True)
    args = parser.parse_args()
    with open(args.creds) as f:
        api = Api(args.port, json.load(f))
    orders: dict = {}
    todo: queue.Queue = queue.Queue()

    def worker():
        while True:
            i = todo.get()
            if i is None:
                return
            try:
                run_order(api, i, orders)
            except Exception as exc:  # noqa: BLE001 - a driver bug must not hang the run
                orders.setdefault(f"F{i:05d}", {}).setdefault("steps", []).append(f"driver error {exc!r}")

    threads = [threading.Thread(target=worker, daemon=True) for _ in range(args.threads)]
    for t in threads:
        t.start()
    started = time.time()
    for i in range(args.orders):
        delay = started + i / args.rate - time.time()
        if delay > 0:
            time.sleep(delay)
        todo.put(i)
    for _ in threads:
        todo.put(None)
    for t in threads:
        t.join()
    with open(args.out, "w") as f:
        json.dump({"orders": orders, "calls": api.calls, "started": started, "ended": time.time()}, f)


if __name__ == "__main__":
    main()
