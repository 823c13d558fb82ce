"""docs/architecture.md keeps its promise that a reader can place any file on its floor from
the page alone: every Python file outside tests/ matches a rule of its "Placing a file" table,
and every repository path the page names exists, unless the page marks it *(planned)*. Both
fail naming the file or path, so whoever adds a package (or merges a branch that did) adds
its rule, and whoever lands a planned module drops its mark."""
from __future__ import annotations

import fnmatch
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PAGE = ROOT / "docs" / "architecture.md"
# Not the project's: environments, caches and what runs leave behind.
SKIPPED_DIRS = {"tests", "node_modules", "__pycache__", "var", "artifacts"}
TOP_LEVEL = ("gateway/", "payments/", "refunds/", "tokens/", "webhooks/", "templates/", "static/",
             "locale/", "tests/", "benchmarks/", "scripts/", "docs/")


def project_python_files() -> list[str]:
    found = []
    for path in ROOT.rglob("*.py"):
        parts = path.relative_to(ROOT).parts
        if any(part.startswith(".") or part in SKIPPED_DIRS for part in parts[:-1]):
            continue
        found.append("/".join(parts))
    return sorted(found)


def placing_rules() -> list[str]:
    """The path patterns in the first column of the page's "Placing a file" table."""
    text = PAGE.read_text(encoding="utf-8")
    start = text.index("### Placing a file")
    section = text[start:text.index("\n## ", start)]
    rules = []
    for line in section.splitlines():
        if line.startswith("|") and not line.startswith("|---"):
            first_cell = line.strip("|").split("|")[0]
            rules += re.findall(r"`([^`]+)`", first_cell)
    return rules


def placed(path: str, rules: list[str]) -> bool:
    name = path.rsplit("/", 1)[-1]
    for rule in rules:
        if rule.endswith("/") and path.startswith(rule):
            return True
        if "*" in rule and (fnmatch.fnmatch(path, rule) or ("/" not in rule and fnmatch.fnmatch(name, rule))):
            return True
        if rule == path or ("/" not in rule and rule == name):
            return True
    return False


def test_the_rules_are_read_from_the_page():
    rules = placing_rules()
    assert {"gateway/core/", "payments/checkout/", "*/admin.py", "manage.py"} <= set(rules), rules
    assert not placed("newpackage/module.py", rules)
    assert placed("payments/services/s2s.py", rules)


def test_every_python_file_outside_tests_is_placed_by_a_rule_of_the_architecture_page():
    rules = placing_rules()
    files = project_python_files()
    assert "gateway/settings.py" in files and "payments/services/s2s.py" in files
    missing = [path for path in files if not placed(path, rules)]
    assert not missing, ("docs/architecture.md, \"Placing a file\": no rule places these files; add a row "
                         "(folder, floor, exceptions) for their folder:\n" + "\n".join(missing))


def named_paths(text: str) -> list[tuple[int, str, bool]]:
    """(line, path, marked planned) for every repository path the page writes in code."""
    found = []
    for match in re.finditer(r"`([^`\s]+)`", text):
        path = match.group(1).rstrip(".,;:")
        if not path.startswith(TOP_LEVEL) and path not in ("manage.py", "gunicorn.conf.py"):
            continue
        if any(char in path for char in "*<>"):
            continue  # a pattern, not a path
        # The mark belongs to this path when it follows before the next code span or sentence.
        rest = re.split(r"`|(?<=[.;])\s", text[match.end():], maxsplit=1)[0]
        found.append((text.count("\n", 0, match.start()) + 1, path, "(planned)" in rest))
    return found


def test_every_path_the_architecture_page_names_exists_or_is_marked_planned():
    text = PAGE.read_text(encoding="utf-8")
    paths = named_paths(text)
    assert any(path == "payments/services/s2s.py" for _, path, _ in paths)
    assert named_paths("`payments/a.py` and `payments/b.py` *(planned)*.") == [
        (1, "payments/a.py", False), (1, "payments/b.py", True)]
    missing = [f"line {line}: `{path}`" for line, path, planned in paths
               if not planned and not (ROOT / path).exists()]
    assert not missing, ("docs/architecture.md names paths that do not exist: fix the name, or mark a "
                         "module still to come *(planned)* in the same sentence:\n" + "\n".join(missing))


def test_the_page_names_every_acquirer_package_of_the_table_and_the_inbound_door():
    """An acquirer is one package and one row (payments.acquirer.IMPLEMENTATIONS): the page's
    acquirer paragraph names each package, and no package under payments/acquirer/ lacks a row."""
    from payments.acquirer import IMPLEMENTATIONS

    text = PAGE.read_text(encoding="utf-8")
    packages = sorted(path.name for path in (ROOT / "payments" / "acquirer").iterdir()
                      if (path / "__init__.py").exists())
    assert sorted(IMPLEMENTATIONS) == packages, "every acquirer package has one row of the table, and no more"
    for name in packages:
        assert f"`{name}/`" in text, f"docs/architecture.md does not name the acquirer package {name}/"
    assert "`gateway/inbound/`" in text and "POST /acquirer/<name>/webhooks" in text
    assert "payments/notices" not in text, "the inbound door left payments (gateway/inbound/)"


# --- claims of the page a test can check -----------------------------------------------------

import ast  # noqa: E402

APPS = ("payments", "refunds", "tokens", "webhooks")


def imported_modules(path: Path) -> set[str]:
    """Every module `path` imports, at the top or inside a function."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found |= {node.module, *(f"{node.module}.{alias.name}" for alias in node.names)}
    return found


def test_the_consoles_kit_imports_nothing_of_the_apps_nor_of_the_consoles_pages():
    """"`kit/` ... imports Django and `gateway/core/` only, nothing of the apps": so an app's
    admin that uses the kit reaches no other app through it."""
    kit = sorted((ROOT / "gateway" / "console" / "kit").glob("*.py"))
    assert {path.name for path in kit} >= {"lists.py", "readonly.py", "display.py", "days.py"}
    wrong = {f"{path.relative_to(ROOT)}: {module}" for path in kit for module in imported_modules(path)
             if module.split(".")[0] in APPS
             or (module.startswith("gateway.") and not module.startswith(("gateway.core", "gateway.console.kit")))}
    assert not wrong, sorted(wrong)


def test_the_console_mounts_its_own_pages_and_no_apps_admin_carries_them(db):
    """"The console registers its own pages: `urls.py` mounts `views.py`'s dashboard, queue and
    export under `/admin/console/` ...; no app's admin carries them."""
    from django.contrib import admin
    from django.urls import resolve, reverse

    for name in ("dashboard", "needs_attention", "settlement_export"):
        url = reverse(f"console:{name}")
        assert url.startswith("/admin/console/")
        assert resolve(url).func.__module__ == "gateway.console.views"
    carried = [f"{type(model_admin).__module__}: {pattern.name}"
               for model_admin in admin.site._registry.values() for pattern in model_admin.get_urls()
               if getattr(pattern, "name", None) and "console" in pattern.name]
    assert not carried, carried
    views = [f"{path.relative_to(ROOT)}" for app in APPS for path in (ROOT / app).rglob("admin.py")
             if "gateway.console.views" in imported_modules(path)]
    assert not views, views


def test_no_two_cashfree_test_files_define_the_same_fixture():
    """The Cashfree tests that deliver webhooks over HTTP share one `shop` and one `cashfree`
    (tests/acquirer_cashfree/over_http/conftest.py); two test files defining the same fixture,
    word for word, is the copy this test stops."""
    seen: dict[tuple[str, str], list[str]] = {}
    for path in sorted((ROOT / "tests" / "acquirer_cashfree").rglob("test_*.py")):
        for node in ast.parse(path.read_text(encoding="utf-8")).body:
            decorators = [ast.unparse(d) for d in getattr(node, "decorator_list", [])]
            if isinstance(node, ast.FunctionDef) and any(d.startswith("pytest.fixture") for d in decorators):
                body = ast.dump(ast.Module(body=node.body, type_ignores=[]))
                seen.setdefault((node.name, ast.unparse(node.args), body), []).append(path.name)
    copies = {name: files for (name, _, _), files in seen.items() if len(files) > 1}
    assert not copies, copies


# What an AppConfig.ready() may do (docs/decisions.md, D16): register system checks, connect
# signal receivers, and fill in the one registry, the webhook event types. Anything else it
# calls is a hook by which a higher module hands a lower one data at start.
READY_MAY_CALL = {"checks.register", "post_migrate.connect", "connect_audit_receivers", "event_types_register"}


def test_no_app_fills_in_a_hook_at_start_but_the_event_type_registry():
    """"The one thing filled in at start is the registry of event types": every call an apps.py
    makes in ready() is a check, a signal, or event_types_register; and no module of ours keeps
    a function that installs a module global for someone else to fill (a `global` statement
    outside the one warning flag of gateway/core/clientip.py)."""
    calls = {}
    for path in sorted(ROOT.glob("*/apps.py")) + sorted(ROOT.glob("gateway/*/apps.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.FunctionDef) and node.name == "ready":
                for statement in ast.walk(node):  # the calls made as statements: what ready() does
                    if isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Call):
                        name = ast.unparse(statement.value.func)
                        calls.setdefault(name, set()).add(str(path.relative_to(ROOT)))
    assert "event_types_register" in calls and "checks.register" in calls
    hooks = {name: paths for name, paths in calls.items()
             if name not in READY_MAY_CALL and not name.endswith(".connect")
             and not name.startswith("super(")}
    assert not hooks, f"apps.py fills these in at start; hand the data down instead (D16): {hooks}"
    globals_ = {f"{path.relative_to(ROOT)}:{node.names}" for folder in ("gateway", *APPS)
                for path in (ROOT / folder).rglob("*.py") if "migrations" not in path.parts
                for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))) if isinstance(node, ast.Global)}
    assert globals_ <= {"gateway/core/clientip.py:['_proxy_warned']"}, globals_


def test_the_console_reads_each_app_only_through_its_selectors():
    """"The rest are the pages that read every app, each through that app's `selectors.py`":
    what the console imports of an app is its selectors (reads), or its services and their
    transition errors (the few writes a page makes, such as a late approval settled by hand)."""
    allowed = ("selectors", "services", "state")
    # The services of refunds' settlements package that finance's pages call (one write each).
    settlement_services = {"refunds.settlements.exceptions",   # resolving an exception with a note
                           "refunds.settlements.statements",   # storing an uploaded bank statement
                           "refunds.settlements.reconcile",    # reconciling against it
                           # Disputes (refunds/disputes/): their reads, and finance's answers.
                           "refunds.disputes.selectors", "refunds.disputes.services"}
    wrong = sorted(f"{path.relative_to(ROOT)}: {module}"
                   for path in (ROOT / "gateway" / "console").rglob("*.py") for module in imported_modules(path)
                   if module.split(".")[0] in APPS and "." in module and module.split(".")[1] not in allowed
                   and not any(module == name or module.startswith(name + ".") for name in settlement_services))
    assert not wrong, wrong
