"""A local stand-in for Cashfree's API over TLS, for the connection and burst benchmarks
(benchmarks/acquirer_pool.py, benchmarks/acquirer_burst.py) and their tests.

Its certificate is made at start with `cryptography`, for 127.0.0.1 and signed by a CA made at
the same time; the CA's certificate is written to a temporary folder so that the benchmark can
trust it (SSL_CERT_FILE, read by both http.client and urllib3 when they build their default
TLS settings) in its own process only. Nothing of it is installed anywhere.

It speaks HTTP/1.1 with keep-alive and answers what the benchmarks ask, shaped as Cashfree's
description has it: an order (GET /orders/{id}, POST /orders), an order pay (POST
/orders/sessions), payments of an order. With `limit_per_window`, it enforces a limit as
Cashfree does: per fixed window of `window_seconds`, and past it a 429 with x-ratelimit-*
headers, and it counts the calls it had to refuse ("over the limit": must stay 0 when the
client keeps below the limit).
"""
from __future__ import annotations

import datetime
import ipaddress
import json
import ssl
import tempfile
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID


def _certificate(subject: str, key, issuer_name, issuer_key, *, ca: bool) -> x509.Certificate:
    now = datetime.datetime.now(datetime.timezone.utc)
    builder = (x509.CertificateBuilder()
               .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, subject)]))
               .issuer_name(issuer_name or x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, subject)]))
               .public_key(key.public_key())
               .serial_number(x509.random_serial_number())
               .not_valid_before(now - datetime.timedelta(minutes=5))
               .not_valid_after(now + datetime.timedelta(days=1))
               .add_extension(x509.BasicConstraints(ca=ca, path_length=None), critical=True))
    if ca:
        builder = builder.add_extension(x509.KeyUsage(
            digital_signature=True, key_cert_sign=True, crl_sign=True, content_commitment=False,
            key_encipherment=False, data_encipherment=False, key_agreement=False, encipher_only=False,
            decipher_only=False), critical=True)
    else:
        builder = builder.add_extension(
            x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]), critical=False)
    return builder.sign(issuer_key, hashes.SHA256())


def make_certificates(folder: Path) -> tuple[Path, Path, Path]:
    """A CA and a server certificate for 127.0.0.1 signed by it, in `folder`: (CA certificate,
    server certificate, server key), PEM."""
    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca = _certificate("benchmark CA", ca_key, None, ca_key, ca=True)
    key = ec.generate_private_key(ec.SECP256R1())
    server = _certificate("127.0.0.1", key, ca.subject, ca_key, ca=False)
    paths = folder / "ca.pem", folder / "server.pem", folder / "server-key.pem"
    paths[0].write_bytes(ca.public_bytes(serialization.Encoding.PEM))
    paths[1].write_bytes(server.public_bytes(serialization.Encoding.PEM))
    paths[2].write_bytes(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                           serialization.NoEncryption()))
    return paths


ORDER = {"cf_order_id": "2149460581", "order_id": "", "entity": "order", "order_currency": "INR",
         "order_amount": 22.00, "order_status": "ACTIVE", "payment_session_id": "session_benchmark",
         "customer_details": {"customer_id": "cust_0001", "customer_phone": "9876543210"}}


class TlsDouble:
    """Cashfree's API on https://127.0.0.1:<port>/pg. `ca_file`: the certificate to trust.
    `limit_per_window` None: no limit. Counts: `calls`, `refused` (429s), `connections`."""

    def __init__(self, *, limit_per_window: int | None = None, window_seconds: float = 60.0,
                 tls: bool = True):
        self.limit_per_window = limit_per_window
        self.window_seconds = window_seconds
        self.tls = tls
        self.calls = self.refused = self.connections = 0
        self._lock = threading.Lock()
        self._window_start = time.monotonic()
        self._in_window = 0
        self._folder = tempfile.TemporaryDirectory(prefix="tlsdouble-")
        self.ca_file = None

    def start(self) -> "TlsDouble":
        double = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            # Headers and body go out as two writes: without TCP_NODELAY the body waits for
            # the client's delayed ACK (40 ms), and every figure would be that wait.
            disable_nagle_algorithm = True

            def setup(self):
                super().setup()
                with double._lock:
                    double.connections += 1

            def log_message(self, *args):
                pass

            def do_GET(self):
                self._answer()

            def do_POST(self):
                self._answer()

            def _answer(self):
                length = int(self.headers.get("Content-Length") or 0)
                body = json.loads(self.rfile.read(length) or b"null")
                status, answer, headers = double.answer(self.command, self.path, body)
                data = json.dumps(answer).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.send_header("x-request-id", "req_benchmark")
                for name, value in headers.items():
                    self.send_header(name, value)
                self.end_headers()
                self.wfile.write(data)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        if self.tls:
            ca, cert, key = make_certificates(Path(self._folder.name))
            self.ca_file = str(ca)
            context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
            context.load_cert_chain(cert, key)
            self.server.socket = context.wrap_socket(self.server.socket, server_side=True)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        return self

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()
        self._folder.cleanup()

    @property
    def base_url(self) -> str:
        return f"{'https' if self.tls else 'http'}://127.0.0.1:{self.server.server_address[1]}/pg"

    def _limit_headers(self) -> dict[str, str]:
        remaining = max(0, self.limit_per_window - self._in_window)
        retry = max(1, int(self._window_start + self.window_seconds - time.monotonic()) + 1)
        return {"x-ratelimit-limit": str(self.limit_per_window), "x-ratelimit-remaining": str(remaining),
                "x-ratelimit-retry": str(retry), "x-ratelimit-type": "app"}

    def answer(self, method: str, path: str, body) -> tuple[int, object, dict[str, str]]:
        headers: dict[str, str] = {}
        with self._lock:
            self.calls += 1
            if self.limit_per_window is not None:
                now = time.monotonic()
                if now - self._window_start >= self.window_seconds:
                    self._window_start, self._in_window = now, 0
                self._in_window += 1
                headers = self._limit_headers()
                if self._in_window > self.limit_per_window:
                    self.refused += 1
                    return 429, {"message": "Too many requests", "code": "request_limit_exceeded",
                                 "type": "rate_limit_error"}, headers
        path = path.split("?")[0]
        if method == "POST" and path == "/pg/orders":
            order = {**ORDER, "order_id": body["order_id"], "order_amount": body["order_amount"]}
            return 200, order, headers
        if method == "POST" and path == "/pg/orders/sessions":
            link = "upi://pay?pa=cf.merchant@axis&pn=Benchmark&am=22.00&cu=INR&tr=CF1"
            return 200, {"cf_payment_id": "91235", "payment_method": "upi", "channel": "link", "action": "custom",
                         "data": {"url": None, "payload": {"default": link}}}, headers
        if method == "GET" and path.startswith("/pg/orders/") and path.endswith("/payments"):
            return 200, [], headers
        if method == "GET" and path.startswith("/pg/orders/"):
            return 200, {**ORDER, "order_id": path.rsplit("/", 1)[1]}, headers
        return 404, {"message": "no such path", "code": "not_found", "type": "invalid_request_error"}, headers
