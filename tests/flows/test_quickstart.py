"""Issue 20's done-criterion, as a newcomer lives it: run scripts/quickstart with nothing
configured, copy the line it prints, pay on the checkout page in a real browser, and see the
signed webhook in the demo merchant's inbox; without "database is locked" on the way, and
without leaving anything in the repository for git to pick up."""
from __future__ import annotations

import os
import queue
import re
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from tests.support.browser import shared_chromium

ROOT = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.browser


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def untracked_files() -> set[str]:
    result = subprocess.run(["git", "status", "--porcelain", "--untracked-files=all"], cwd=ROOT,
                            capture_output=True, text=True, check=True)
    return {line[3:] for line in result.stdout.splitlines() if line.startswith("??")}


class Lines:
    """The quick start's output, read on a thread, so that waiting for a line is bounded."""

    def __init__(self, stream):
        self.seen: list[str] = []
        self._queue: queue.Queue[str | None] = queue.Queue()
        threading.Thread(target=self._pump, args=(stream,), daemon=True).start()

    def _pump(self, stream):
        for line in stream:
            self._queue.put(line.rstrip("\n"))
        self._queue.put(None)

    def until(self, pattern: str, *, timeout: float) -> str:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                line = self._queue.get(timeout=1)
            except queue.Empty:
                continue
            if line is None:
                break
            self.seen.append(line)
            if re.search(pattern, line):
                return line
        raise AssertionError(f"the quick start never printed {pattern!r}:\n" + "\n".join(self.seen))


def stop_group(process: subprocess.Popen) -> None:
    """Stop the quick start as its trap expects (TERM to the script, which stops the web
    process and the worker), wait a bounded time for its whole process group, then KILL."""
    os.kill(process.pid, signal.SIGTERM)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        process.poll()
        try:
            os.killpg(process.pid, 0)
        except ProcessLookupError:
            return
        time.sleep(0.2)
    os.killpg(process.pid, signal.SIGKILL)
    process.wait()


@pytest.fixture
def quickstart(tmp_path):
    port = free_port()
    # Nothing configured, as a newcomer has it: the test run's database, Redis and settings go.
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("GATEWAY_", "DJANGO_", "DATABASE_", "REDIS_", "CELERY_"))}
    env.update(GATEWAY_PUBLIC_URL=f"http://127.0.0.1:{port}", GATEWAY_VAR_DIR=str(tmp_path))
    before = untracked_files()
    process = subprocess.Popen([str(ROOT / "scripts" / "quickstart")], cwd=ROOT, env=env, text=True,
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT, start_new_session=True)
    try:
        yield Lines(process.stdout), tmp_path, env
    finally:
        stop_group(process)
    assert untracked_files() == before, "the quick start left files for git to pick up"


def test_a_newcomer_copies_the_printed_line_pays_and_sees_the_signed_webhook(quickstart):
    output, var, env = quickstart
    output.until(r"^Three things to try with DEMO", timeout=300)
    create_line = output.until(r"docs/examples/create_session\.py DEMO gwk_", timeout=10).strip()
    ready_checkout = output.until(r"/checkout/pay_\w+\?clientSecret=", timeout=10).strip()
    inbox = output.until(r"/sandbox/webhooks/[0-9a-f]{32}$", timeout=10).strip()
    output.until(r"manage\.py createsuperuser", timeout=10)
    assert (var / "demo-merchant.json").stat().st_mode & 0o077 == 0  # credentials: owner only

    # The line as printed, in a shell, as the newcomer pastes it.
    created = subprocess.run(create_line, shell=True, cwd=ROOT, env=env, capture_output=True, text=True,
                             timeout=60)
    assert created.returncode == 0, created.stderr
    checkout = created.stdout.strip().splitlines()[-1].removeprefix("Send the customer to: ")
    assert checkout.startswith(env["GATEWAY_PUBLIC_URL"] + "/checkout/pay_") and checkout != ready_checkout

    with shared_chromium() as chromium:
        page = chromium.new_page()
        page.goto(checkout)
        page.click("[data-method=CARD]")
        page.fill("input[name=card_number]", "4111 1111 1111 1111")
        page.fill("input[name=card_expiry]", time.strftime("12/%y", time.gmtime(time.time() + 2 * 365 * 86400)))
        page.fill("input[name=card_cvv]", "123")
        page.locator("form:has(input[name=card_number]) button[type=submit]").click()
        page.fill("input[name=otp]", "123456")
        page.locator("form:has(input[name=otp]) button[type=submit]").click()
        page.close()

        inbox_page = chromium.new_page()
        deadline = time.monotonic() + 60  # a bound only a broken quick start reaches
        while True:
            inbox_page.goto(inbox)
            if inbox_page.locator('article[data-verified="true"]').count():
                break
            assert time.monotonic() < deadline, "no verified webhook reached the inbox:\n" + "\n".join(output.seen)
            time.sleep(1)
        article = inbox_page.locator('article[data-verified="true"]').first.inner_text()
        inbox_page.close()
    assert "payment.success" in article and "Signature verified" in article

    logs = (var / "worker.log").read_text() + (var / "web.log").read_text()
    assert "database is locked" not in logs
