"""Factories shared by every test module: merchants with known credentials, signed bodies."""
from __future__ import annotations

import itertools
import time
from dataclasses import dataclass

from gateway.platform.models import Merchant
from gateway.platform.services import merchant_create
from gateway.core.signing import compute_checksum

_counter = itertools.count(1)


@dataclass
class TestMerchant:
    merchant: Merchant
    code: str
    api_key: str
    secret_key: str
    webhook_secret: str

    @property
    def headers(self) -> dict:
        """Headers for Django's test client (HTTP_ prefixed)."""
        return {"HTTP_X_API_KEY": self.api_key, "HTTP_X_MERCHANT_ID": self.code}

    @property
    def http_headers(self) -> dict:
        """Headers for a real HTTP client (requests/urllib)."""
        return {"X-Api-Key": self.api_key, "X-Merchant-Id": self.code, "Content-Type": "application/json"}

    def checksum(self, *parts) -> str:
        return compute_checksum(self.secret_key, *parts)


def make_merchant(*, code: str | None = None, s2s: bool = True, webhook_url: str = "",
                  rate_limit: int | None = 1000, name: str | None = None) -> TestMerchant:
    code = code or f"M{next(_counter):04d}{int(time.time() * 1000) % 100000}"
    creds = merchant_create(code=code, name=name or f"Merchant {code}", webhook_url=webhook_url,
                            s2s_enabled=s2s, rate_limit=rate_limit)
    return TestMerchant(Merchant.objects.get(code=code), code, creds.apiKey, creds.secretKey, creds.webhookSecret)


def now() -> int:
    return int(time.time())
