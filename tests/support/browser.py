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


# --- Content-Security-Policy violations ---------------------------------------------------------

# Chromium's console words for a violation of an enforced policy (and of a report-only one).
_POLICY_WORDS = ("Content Security Policy", "Content-Security-Policy")

_LISTEN = """
document.addEventListener("securitypolicyviolation", (event) => {
  window.__policyViolation({
    page: document.location.href, directive: event.effectiveDirective || event.violatedDirective,
    blocked: event.blockedURI, source: event.sourceFile, line: event.lineNumber,
    sample: event.sample, disposition: event.disposition,
  });
}, true);
"""


class PolicyViolations:
    """Every Content-Security-Policy violation in one browser context, heard twice over: the
    document's `securitypolicyviolation` event (the directive, what was blocked, where) and
    Chromium's console error, which also names violations no event reports (a blocked inline
    style attribute of an element the parser made before any listener could run is reported by
    both; a violation in a worker only by the console). Both are listened to from before the
    first byte of every page, frames included, through Playwright, which the page's own policy
    cannot block.

        violations = PolicyViolations(context)
        page = context.new_page(); page.goto(...)
        violations.assert_none(page, "the checkout's method list")
    """

    def __init__(self, context):
        self.events: list[dict] = []
        self.console: list[str] = []
        context.expose_binding("__policyViolation", lambda source, found: self.events.append(found))
        context.add_init_script(_LISTEN)
        context.on("console", self._console)

    def _console(self, message) -> None:
        if message.type in ("error", "warning") and any(words in message.text for words in _POLICY_WORDS):
            where = message.location or {}
            self.console.append(f"{where.get('url', '?')}:{where.get('lineNumber', '?')}: {message.text}")

    def __bool__(self) -> bool:
        return bool(self.events or self.console)

    def clear(self) -> None:
        self.events.clear()
        self.console.clear()

    def report(self) -> str:
        lines = [f"{v['page']}: {v['directive']} blocked {v['blocked'] or '(inline)'} at "
                 f"{v['source'] or '?'}:{v['line']} {v['sample'] or ''}".rstrip() for v in self.events]
        return "\n".join(lines + self.console)

    def assert_none(self, page, where: str = "") -> None:
        """Fails naming every violation seen since the last clear(). A round trip to `page`
        first, so that whatever the browser reported before it has been heard."""
        page.evaluate("0")
        assert not self, f"Content-Security-Policy violations{' on ' + where if where else ''}:\n{self.report()}"
