"""Services and tasks never import each other, not even from inside a function: the work a task
runs lives below it, and the service that queues a task imports the task (issue 21).

Read from the source, every import counted (module level and inside functions), the acquirer
package's too: get_acquirer() loads the configured implementation by name (import_string, no
import statement), and the sandbox's payer's bank (payments.acquirer.sandbox.payer) sends its
approval task (payments.sandbox_upi, above the services) by the task's name, never importing it."""
import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("gateway", "payments", "refunds", "tokens", "webhooks")


def _modules() -> dict[str, Path]:
    found = {}
    for package in PACKAGES:
        for path in (ROOT / package).rglob("*.py"):
            if "migrations" in path.parts:
                continue
            parts = path.relative_to(ROOT).with_suffix("").parts
            found[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return found


def _graph() -> dict[str, set[str]]:
    modules = _modules()

    def ours(name: str) -> str | None:
        while name and name not in modules:
            name = name.rpartition(".")[0]
        return name or None

    edges: dict[str, set[str]] = {name: set() for name in modules}
    for name, path in modules.items():
        tree = ast.parse(path.read_text())
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                targets = [f"{node.module}.{alias.name}" for alias in node.names]
            else:
                continue
            edges[name].update(t for t in map(ours, targets) if t and t != name)
    return edges


def _cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for other in edges[node]:
            if other not in index:
                visit(other)
                low[node] = min(low[node], low[other])
            elif other in on_stack:
                low[node] = min(low[node], index[other])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in edges:
        if node not in index:
            visit(node)
    return found


def _is_service_or_task(module: str) -> bool:
    parts = module.split(".")
    return "services" in parts or parts[-1] == "tasks" or parts[-1].endswith("_tasks")


def test_no_import_cycle_runs_through_a_service_or_a_task():
    assert [cycle for cycle in _cycles(_graph()) if any(map(_is_service_or_task, cycle))] == []


def test_the_check_sees_a_function_level_import():
    assert _cycles({"a.services": {"a.tasks"}, "a.tasks": {"a.services"}}) == [["a.services", "a.tasks"]]
    assert "payments.services.upi" in _graph()["payments.tasks"]
