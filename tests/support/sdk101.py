"""The official SabPaisa SDK 1.0.1 (package `sabpaisa_sdk`), run as a merchant runs it.

1.0.1 and 3.0.0 share the distribution name `sabpaisa-python`, so they cannot live in one
environment: 3.0.0 is a dev dependency in `.venv`, and 1.0.1 lives in `.venv-sdk101`
(`scripts/test` makes it). A test hands a snippet of merchant code to `run_sdk101`, which runs
it in that environment's Python, in a subprocess, and returns what the snippet left in `result`,
decoded from JSON:

    def test_something(live_server, shop):
        answer = run_sdk101('''
            session = client.payments.create(merchant_txn_id=txn, amount=50000, ...)
            result = session
        ''', server=live_server, merchant=shop, txn="ORDER-1")
        assert answer["paymentId"]

- With `server=` (a live_server, or any base address) and `merchant=` (a TestMerchant), the
  snippet finds `client`, a `SabPaisaClient(api_key, secret_key, merchant_id=, base_url=,
  max_retries=0)`: exactly what a merchant builds, with only the base address changed. Retries
  are off so that a GET the server refuses is asked once.
- Every other keyword becomes a variable of the snippet (a JSON value), and the names of the
  SDK (`sabpaisa_sdk` and everything it exports) are imported.
- `result` comes back JSON-decoded; pydantic models (the SDK's responses) are dumped with
  their wire names (`by_alias`), dates as ISO strings, Decimals as strings.
- A `SabPaisaError` the snippet does not catch comes back as
  `{"raised": <class name>, "code", "http_status", "message", "trace_id", "response_body"}`, so
  a test can assert on the SDK's own error handling. Anything else raised fails the test with
  the subprocess's stderr.

The subprocess makes real HTTP requests to the live server, which serves them from a thread of
the test process while this one waits: nothing is mocked.
"""
from __future__ import annotations

import json
import os
import subprocess
import textwrap
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
PYTHON = ROOT / ".venv-sdk101" / "bin" / "python"

__all__ = ["PYTHON", "run_sdk101", "sdk101_available"]

_PRELUDE = '''
import json, sys
from datetime import date, datetime
from decimal import Decimal
from enum import Enum

import sabpaisa_sdk
from sabpaisa_sdk import *  # noqa: F403: the snippet is merchant code, written against the SDK's names
from sabpaisa_sdk.errors import SabPaisaError
from pydantic import BaseModel

_values = json.loads(sys.stdin.read())
_server = _values.pop("__server__", None)
_merchant = _values.pop("__merchant__", None)
globals().update(_values)
if _server is not None and _merchant is not None:
    client = sabpaisa_sdk.SabPaisaClient(api_key=_merchant["api_key"], secret_key=_merchant["secret_key"],
                                         merchant_id=_merchant["code"], base_url=_server, max_retries=0)


def _plain(value):
    if isinstance(value, BaseModel):
        return value.model_dump(mode="json", by_alias=True)
    if isinstance(value, (datetime, date)):
        return value.isoformat()
    if isinstance(value, Decimal):
        return str(value)
    if isinstance(value, Enum):
        return value.value
    raise TypeError(f"not JSON: {type(value).__name__}")


result = None
try:
    exec(compile(_SNIPPET, "<snippet>", "exec"))
except SabPaisaError as error:
    result = {"raised": type(error).__name__, "code": getattr(error, "code", None),
              "http_status": getattr(error, "http_status", None), "message": error.message,
              "trace_id": getattr(error, "trace_id", None),
              "response_body": getattr(error, "response_body", None)}
print("\\n__RESULT__" + json.dumps(result, default=_plain))
'''


def sdk101_available() -> bool:
    return PYTHON.exists()


def run_sdk101(snippet: str, *, server: Any = None, merchant: Any = None, timeout: float = 60,
               **values: Any) -> Any:
    """Run `snippet` under SDK 1.0.1 and return its `result` (see the module docstring)."""
    if not sdk101_available():
        raise AssertionError(f"{PYTHON} is missing: scripts/test creates it (sabpaisa-python==1.0.1)")
    if server is not None:
        values["__server__"] = getattr(server, "url", server)
    if merchant is not None:
        values["__merchant__"] = {"code": merchant.code, "api_key": merchant.api_key,
                                  "secret_key": merchant.secret_key}
    program = f"_SNIPPET = {textwrap.dedent(snippet)!r}\n{_PRELUDE}"
    # The SDK reads SABPAISA_* from the environment only in from_env(); keep ours out of it anyway.
    env = {k: v for k, v in os.environ.items() if not k.startswith("SABPAISA_")}
    done = subprocess.run([str(PYTHON), "-c", program], input=json.dumps(values), capture_output=True,
                          text=True, timeout=timeout, env=env, cwd=ROOT)
    marker = done.stdout.rfind("__RESULT__")
    if done.returncode != 0 or marker < 0:
        raise AssertionError(f"SDK 1.0.1 snippet failed (exit {done.returncode}):\n{done.stderr}\n{done.stdout}")
    return json.loads(done.stdout[marker + len("__RESULT__"):])
