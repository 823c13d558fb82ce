"""The performance layer behind one wall (issue 21): gateway.perf.sql is imported only by each
app's writes module and the platform's key lookup, gateway.perf.cache only by the rate
limiter, and payments imports nothing of refunds (refunds imports payments). Read from the
source's own import statements, function-level imports included."""
from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
APPS = ("payments", "refunds", "tokens", "webhooks", "gateway/platform", "gateway/console", "gateway/core")
# Exactly these: refunds and tokens have no writes module (docs/architecture.md).
SQL_ALLOWED = {"payments/writes.py", "webhooks/writes.py", "gateway/platform/key_lookup.py"}
CACHE_ALLOWED = {"gateway/platform/ratelimit.py"}


def _imports(path: Path) -> set[str]:
    """Every module `path` imports, as dotted names (`from a import b` gives a and a.b)."""
    names = set()
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module)
            names.update(f"{node.module}.{alias.name}" for alias in node.names)
    return names


def _sources():
    for app in APPS:
        for path in sorted((ROOT / app).rglob("*.py")):
            if "migrations" not in path.parts:
                yield path.relative_to(ROOT).as_posix(), _imports(path)


def test_the_sources_are_found():
    found = dict(_sources())
    assert {"payments/writes.py", "payments/services/idempotency.py", "gateway/platform/auth.py"} <= set(found)
    assert "gateway.perf.sql" in found["payments/writes.py"]


def test_only_the_writes_modules_and_the_key_lookup_import_the_statement_compiler():
    users = {name for name, imported in _sources() if "gateway.perf.sql" in imported}
    # Each allowed module exists and uses it: an allowance for a module that is not there would
    # let one appear unseen.
    assert users == SQL_ALLOWED, (users - SQL_ALLOWED, SQL_ALLOWED - users)


def test_only_the_rate_limiter_counts_with_the_perf_cache():
    users = {name for name, imported in _sources() if any(m.startswith("gateway.perf.cache") for m in imported)}
    assert users <= CACHE_ALLOWED, users - CACHE_ALLOWED


def test_payments_imports_nothing_of_refunds():
    importers = {name for name, imported in _sources()
                 if name.startswith("payments/") and any(m == "refunds" or m.startswith("refunds.") for m in imported)}
    assert importers == set(), importers
