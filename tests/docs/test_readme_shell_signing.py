"""README's curl example signs in a shell with openssl (issue 26). Its two blocks run here as
written: the first must print the known vector, which must be what the service's own signing
code computes; the second, with a real merchant's values, must open a session on a live server."""
from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import pytest

from gateway.core.signing import compute_checksum
from tests.support.factories import make_merchant

ROOT = Path(__file__).resolve().parents[2]
README = (ROOT / "README.md").read_text()


def section(heading: str) -> str:
    start = README.index(f"\n### {heading}\n")
    end = re.compile(r"\n#{2,3} ").search(README, start + 1)
    return README[start:end.start() if end else None]


def shell_blocks() -> list[str]:
    return re.findall(r"```sh\n(.*?)```", section("Example with curl, signed in a shell"), re.S)


def vector() -> dict[str, str]:
    """The README's known-vector table, as its rows say."""
    table = section("Known vector")
    rows = dict(re.findall(r"^\| ([^|]+?) \| (.+) \|$", table, re.M))
    return {"secret": rows["secret key"].strip("`"), "base": rows["base string"].strip("`").replace("\\|", "|"),
            "checksum": rows["checksum"].strip("`")}


def bash(script: str) -> subprocess.CompletedProcess:
    return subprocess.run(["bash", "-euo", "pipefail", "-c", script], capture_output=True, text=True, timeout=60)


def test_the_shell_recipe_prints_the_known_vector_the_service_computes():
    blocks = shell_blocks()
    assert len(blocks) == 2, "README's curl example lost a block"
    done = bash(blocks[0])
    assert done.returncode == 0, done.stderr
    printed = done.stdout.strip()
    known = vector()
    merchant_id, txn, amount, currency, timestamp = known["base"].split("|")
    service = compute_checksum(known["secret"], merchant_id, txn, int(amount), currency, int(timestamp))
    assert printed == known["checksum"] == service
    assert f"this must print {service}" in blocks[0]


def test_the_shell_recipe_signs_a_trailing_newline_differently_than_echo_would():
    # Why the README says printf, not echo: the recipe signs exactly the base string.
    known = vector()
    with_echo = bash(f"echo '{known['base']}' | openssl dgst -sha256 -hmac '{known['secret']}' | awk '{{print $NF}}'")
    assert with_echo.stdout.strip() != known["checksum"]


@pytest.mark.django_db(transaction=True)
def test_the_curl_example_as_written_opens_a_session(live_server):
    tm = make_merchant(code="CURLSHOP")
    first, second = shell_blocks()
    values = {"GATEWAY_URL": live_server.url, "MERCHANT_ID": tm.code, "API_KEY": tm.api_key,
              "SECRET_KEY": tm.secret_key}
    script, filled = [], set()
    for line in second.splitlines():
        name = line.split("=", 1)[0]
        if name in values and not line.startswith(" "):
            line, _ = f"{name}='{values[name]}'", filled.add(name)
        script.append(line)
    assert filled == set(values), f"the curl block no longer sets {set(values) - filled} on a line of its own"
    done = bash(first + "\n".join(script))
    assert done.returncode == 0, done.stderr
    answer = json.loads(done.stdout.strip().splitlines()[-1])
    assert answer["status"] == "PENDING" and "/checkout/pay_" in answer["checkoutUrl"]
