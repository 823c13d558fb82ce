"""Running scripts/quickstart again (issue 26): a run that cannot serve (its port is taken)
must leave the demo merchant's credentials as the first run printed them, and a run that does
issue new keys must say so, since everything holding the old ones then gets 401."""
from __future__ import annotations

import json
import os
import socket
import subprocess
from pathlib import Path

from tests.flows.test_quickstart import Lines, free_port, stop_group

ROOT = Path(__file__).resolve().parents[2]
PYTHON = str(ROOT / ".venv" / "bin" / "python")


def newcomer_env(var: Path, port: int) -> dict[str, str]:
    """Nothing configured, as a newcomer has it: the test run's database, Redis and settings go."""
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("GATEWAY_", "DJANGO_", "DATABASE_", "REDIS_", "CELERY_"))}
    env.update(GATEWAY_PUBLIC_URL=f"http://127.0.0.1:{port}", GATEWAY_VAR_DIR=str(var))
    return env


def manage(env: dict, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([PYTHON, "manage.py", *args], cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=300)


def first_run(var: Path, env: dict) -> dict:
    """What the first quick start left: the DEMO merchant and its credentials file."""
    assert manage(env, "migrate", "--noinput").returncode == 0
    made = manage(env, "demo_merchant")
    assert made.returncode == 0, made.stderr
    (var / "demo-merchant.json").write_text(made.stdout)
    credentials = json.loads(made.stdout)
    assert credentials["credentialsReissued"] is False
    return credentials


def api_key_status(env: dict, api_key: str) -> int:
    """The HTTP status an enquiry with `api_key` gets (404: the key works, 401: refused)."""
    probe = manage(env, "shell", "-c",
                   "from django.test import Client; print(Client().get('/api/v2/payments', "
                   "{'merchantId': 'DEMO', 'merchantTxnId': 'none'}, "
                   f"HTTP_X_API_KEY={api_key!r}).status_code)")
    assert probe.returncode == 0, probe.stderr
    return int(probe.stdout.strip().splitlines()[-1])


def test_a_rerun_whose_port_is_taken_stops_before_touching_the_credentials(tmp_path):
    port = free_port()
    env = newcomer_env(tmp_path, port)
    credentials = first_run(tmp_path, env)
    saved = (tmp_path / "demo-merchant.json").read_text()

    with socket.socket() as squatter:  # another program on the port, not a gateway
        squatter.bind(("127.0.0.1", port))
        squatter.listen()
        rerun = subprocess.run([str(ROOT / "scripts" / "quickstart")], cwd=ROOT, env=env, capture_output=True,
                               text=True, timeout=900)

    assert rerun.returncode == 1
    assert f"Port {port} on 127.0.0.1 is taken" in rerun.stderr and "Nothing was changed" in rerun.stderr
    assert (tmp_path / "demo-merchant.json").read_text() == saved
    assert api_key_status(env, credentials["apiKey"]) == 404  # still the merchant's key


def test_a_rerun_that_issues_new_keys_says_so(tmp_path):
    port = free_port()
    env = newcomer_env(tmp_path, port)
    old = first_run(tmp_path, env)

    process = subprocess.Popen([str(ROOT / "scripts" / "quickstart")], cwd=ROOT, env=env, text=True,
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT, start_new_session=True)
    try:
        output = Lines(process.stdout)
        output.until(r"^NEW KEYS: DEMO existed", timeout=600)
        output.until(r"now gets 401 UNAUTHORIZED \(API key\) or", timeout=10)
        output.until(r"^Three things to try with DEMO", timeout=120)
    finally:
        stop_group(process)
    new = json.loads((tmp_path / "demo-merchant.json").read_text())
    assert new["credentialsReissued"] is True and new["apiKey"] != old["apiKey"]
    assert api_key_status(env, old["apiKey"]) == 401
    assert api_key_status(env, new["apiKey"]) == 404
