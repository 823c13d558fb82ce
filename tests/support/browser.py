"""One real Chromium (Playwright's sync API, the system's /usr/bin/chromium; never
`playwright install`) per test process, shared by every test directory that drives a browser.

Playwright's sync API allows one instance per thread: two session-scoped fixtures that each
started their own (say tests/payments/hosted and tests/tokens in one run) would collide. So
every `browser` fixture goes through `shared_chromium()`, which starts Chromium for the first
user and closes it when the last one is done.

    @pytest.fixture(scope="session")
    def browser():
        with shared_chromium() as chromium:
            yield chromium
"""
from __future__ import annotations

import os
from contextlib import contextmanager

CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run"]

_shared = {"users": 0, "manager": None, "chromium": None, "previous_env": None}


@contextmanager
def shared_chromium():
    if _shared["users"] == 0:
        from playwright.sync_api import sync_playwright

        # Playwright's sync API runs an event loop in this thread; Django refuses ORM calls from
        # a thread with a running loop unless told that this is deliberate.
        _shared["previous_env"] = os.environ.get("DJANGO_ALLOW_ASYNC_UNSAFE")
        os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = "true"
        manager = sync_playwright()
        playwright = manager.__enter__()
        try:
            _shared["chromium"] = playwright.chromium.launch(executable_path="/usr/bin/chromium", args=CHROMIUM_ARGS)
        except BaseException:
            manager.__exit__(None, None, None)
            _restore_env()
            raise
        _shared["manager"] = manager
    _shared["users"] += 1
    try:
        yield _shared["chromium"]
    finally:
        _shared["users"] -= 1
        if _shared["users"] == 0:
            try:
                _shared["chromium"].close()
            finally:
                _shared["manager"].__exit__(None, None, None)
                _shared["chromium"] = _shared["manager"] = None
                _restore_env()


def _restore_env() -> None:
    previous = _shared["previous_env"]
    if previous is None:
        os.environ.pop("DJANGO_ALLOW_ASYNC_UNSAFE", None)
    else:
        os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = previous
