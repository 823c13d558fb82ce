"""A test double of the Acquirer protocol, for tests that need to control when (and whether)
the acquirer answers, and threads that stand for concurrent requests.

ScriptedAcquirer answers exactly as the sandbox does, but a test may hold any method at its
start (`gate`) until it says so, make a method raise instead of answering (`fail`), and read
every call it got (`calls`). Inject it with `use_acquirer(monkeypatch, double)`, which replaces
get_acquirer where the services look it up. The database is never doubled: these tests run on
the real PostgreSQL with committed transactions (transactional_db), one connection per thread.
"""
from __future__ import annotations

import threading
from dataclasses import dataclass, field

from django.db import connection

from payments.acquirer.sandbox.acquirer import SandboxAcquirer

# A generous bound on waiting for another thread, so that a broken test fails instead of
# hanging. It is never what a test asserts on.
DEADLOCK_GUARD_SECONDS = 30


@dataclass
class Gate:
    entered: threading.Event = field(default_factory=threading.Event)
    released: threading.Event = field(default_factory=threading.Event)

    def wait_entered(self) -> None:
        assert self.entered.wait(DEADLOCK_GUARD_SECONDS), "the acquirer was never called"

    def open(self) -> None:
        self.released.set()


class ScriptedAcquirer(SandboxAcquirer):
    def __init__(self):
        self.calls: list[tuple[str, str, str]] = []  # (method, outcome or "error", reference)
        self.kwargs: list[tuple[str, dict]] = []
        self._gates: dict[str, Gate] = {}
        self._errors: dict[str, Exception] = {}

    def gate(self, method: str) -> Gate:
        """Hold the next call of `method` at its start until the returned gate is opened."""
        self._gates[method] = Gate()
        return self._gates[method]

    def fail(self, method: str, error: Exception | None) -> None:
        """Make `method` raise `error` (None: answer normally again)."""
        if error is None:
            self._errors.pop(method, None)
        else:
            self._errors[method] = error

    def open_all(self) -> None:
        """Let every held call answer (a test's teardown: nothing is left waiting)."""
        for gate in list(self._gates.values()):
            gate.open()
        self._gates.clear()

    def called(self, method: str) -> list[tuple[str, str, str]]:
        return [call for call in self.calls if call[0] == method]

    def _around(self, method: str, kwargs: dict, answer):
        self.kwargs.append((method, {k: v for k, v in kwargs.items() if k not in ("card", "payment")}))
        gate = self._gates.get(method)
        if gate is not None and not gate.entered.is_set():
            gate.entered.set()
            assert gate.released.wait(DEADLOCK_GUARD_SECONDS), "the test never let the acquirer answer"
        error = self._errors.get(method)
        if error is not None:
            self.calls.append((method, "error", ""))
            raise error
        result = answer()
        self.calls.append((method, result.outcome.value, result.reference))
        return result

    def card_authorize(self, **kwargs):
        return self._around("card_authorize", kwargs, lambda: super(ScriptedAcquirer, self).card_authorize(**kwargs))

    def card_verify_otp(self, **kwargs):
        return self._around("card_verify_otp", kwargs,
                            lambda: super(ScriptedAcquirer, self).card_verify_otp(**kwargs))

    def bank_authorize(self, **kwargs):
        return self._around("bank_authorize", kwargs, lambda: super(ScriptedAcquirer, self).bank_authorize(**kwargs))

    def transfer_received(self, **kwargs):
        return self._around("transfer_received", kwargs,
                            lambda: super(ScriptedAcquirer, self).transfer_received(**kwargs))

    def upi_pay(self, **kwargs):
        return self._around("upi_pay", kwargs, lambda: super(ScriptedAcquirer, self).upi_pay(**kwargs))

    def call_status(self, **kwargs):
        return self._around("call_status", kwargs, lambda: super(ScriptedAcquirer, self).call_status(**kwargs))

    def reverse(self, **kwargs):
        return self._around("reverse", kwargs, lambda: super(ScriptedAcquirer, self).reverse(**kwargs))


def use_acquirer(monkeypatch, acquirer) -> None:
    """Make every caller of payments.acquirer.get_acquirer() talk to `acquirer`: replaced where
    get_acquirer loads the configured one, so no module that calls it can be missed."""
    monkeypatch.setattr("payments.acquirer._load", lambda name: acquirer)


def scripted_acquirer(monkeypatch):
    """The body of a fixture: a ScriptedAcquirer in use; afterwards every held call is let go
    and every concurrent request finished, so no thread outlives the test (and its database)."""
    double = ScriptedAcquirer()
    use_acquirer(monkeypatch, double)
    yield double
    double.open_all()
    while Request.running:
        Request.running.pop().join(DEADLOCK_GUARD_SECONDS)


class Request(threading.Thread):
    """A concurrent request: runs `target` in its own thread (and its own database connection),
    keeping what it returned or raised."""

    running: list[Request] = []

    def __init__(self, target):
        super().__init__(daemon=True)
        Request.running.append(self)
        self._target_fn = target
        self.result = None
        self.error: BaseException | None = None
        self.start()

    def run(self):
        try:
            self.result = self._target_fn()
        except BaseException as exc:  # noqa: BLE001 - handed to the test
            self.error = exc
        finally:
            connection.close()

    def finish(self):
        """Wait for the request; its result, or re-raise what it raised."""
        self.join(DEADLOCK_GUARD_SECONDS)
        assert not self.is_alive(), "the concurrent request never finished"
        if self.error is not None:
            raise self.error
        return self.result
