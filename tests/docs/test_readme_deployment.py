"""Issue 26, section 3: a deployment done only with the README's documented steps shows the
checkout in Hindi for `language: "hi"`.

The repository's tracked files are copied to an empty folder (what a clone holds: nothing a
script compiled), a new virtual environment is made, and the commands of the README's
"Running it" block are run there as written, in production, with the README's production
minimum (a test's values for the secrets; Cashfree is named but never called: a session and its
page need no acquirer). Then the web process of the README's table serves it, a merchant is
onboarded with the README's command, and a session created with `language: "hi"` is opened as a
browser would, behind the TLS proxy the README asks for (`X-Forwarded-Proto: https`)."""
from __future__ import annotations

import hashlib
import hmac
import json
import os
import re
import shlex
import shutil
import signal
import socket
import subprocess
import time
import urllib.error
import urllib.request
from http.cookies import SimpleCookie
from pathlib import Path
from urllib.parse import urljoin, urlsplit

import pytest

ROOT = Path(__file__).resolve().parents[2]
README = (ROOT / "README.md").read_text()
CATALOGUE = Path("locale/hi/LC_MESSAGES/django.mo")


def readme_section(heading: str) -> str:
    start = README.index(f"\n## {heading}\n")
    end = README.find("\n## ", start + 1)
    return README[start:end if end != -1 else None]


def running_it_commands() -> list[str]:
    """The README's "Running it" shell block, a command a line, comments dropped."""
    block = re.search(r"```sh\n(.*?)```", readme_section("Running it"), re.S).group(1)
    return [line.split("  #")[0].strip() for line in block.splitlines() if line.split("#")[0].strip()]


def web_command() -> str:
    row = next(line for line in readme_section("Running it").splitlines() if line.startswith("| web |"))
    return re.search(r"`(gunicorn [^`]+)`", row).group(1)


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def copy_tracked_files(to: Path) -> None:
    """What `git clone` gives: the tracked files (as this worktree has them), nothing else."""
    listed = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True).stdout
    for name in filter(None, listed.decode().split("\0")):
        source = ROOT / name
        if source.is_file() and not source.is_symlink():
            (to / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, to / name)


def empty_database(url: str, suffix: str) -> str:
    """A fresh PostgreSQL database beside the test run's own (same server and role)."""
    import psycopg

    parts = urlsplit(url)
    name = f"{parts.path.lstrip('/')}_{suffix}"
    with psycopg.connect(parts._replace(path="/postgres").geturl(), autocommit=True) as connection:
        connection.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        connection.execute(f'CREATE DATABASE "{name}"')
    return parts._replace(path=f"/{name}").geturl()


def production_env(folder: Path, venv: Path, port: int) -> dict[str, str]:
    from cryptography.fernet import Fernet

    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("GATEWAY_", "DJANGO_", "DATABASE_", "REDIS_", "CELERY_", "CASHFREE_", "VIRTUAL_ENV"))}
    env.update(
        PATH=f"{venv / 'bin'}{os.pathsep}{env.get('PATH', '')}",
        GATEWAY_ENV="production",
        GATEWAY_PUBLIC_URL=f"https://127.0.0.1:{port}",
        DJANGO_SECRET_KEY="deployment-test-" + "k" * 40,
        GATEWAY_ENCRYPTION_KEYS=Fernet.generate_key().decode(),
        # The README's minimum: PostgreSQL and Redis (production refuses SQLite and a missing
        # REDIS_URL, gateway.E016 and E017); a database of the deployment's own, made empty here.
        DATABASE_URL=empty_database(os.environ["DATABASE_URL"], "deploy"), REDIS_URL=os.environ["REDIS_URL"],
        GATEWAY_VAR_DIR=str(folder / "var"),
        GATEWAY_ACQUIRER="cashfree", CASHFREE_CLIENT_ID="deployment-test", CASHFREE_CLIENT_SECRET="deployment-test",
        TRUSTED_PROXY_COUNT="1",
        DJANGO_SUPERUSER_USERNAME="ops", DJANGO_SUPERUSER_EMAIL="ops@example.com",
        DJANGO_SUPERUSER_PASSWORD="a long deployment password",
    )
    return env


def run(command: str, *, cwd: Path, env: dict, timeout: float = 600) -> subprocess.CompletedProcess:
    return subprocess.run(["bash", "-c", command], cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)


class Browser:
    """Cookies and redirects by hand: the proxy in front speaks HTTPS to the customer, so the
    session cookie is Secure, and the hop from the proxy to gunicorn is plain HTTP."""

    def __init__(self, origin: str):
        self.origin = origin
        self.cookies: dict[str, str] = {}

    def get(self, url: str) -> tuple[int, str]:
        for _ in range(10):
            parts = urlsplit(url)
            request = urllib.request.Request(
                self.origin + parts.path + (f"?{parts.query}" if parts.query else ""),
                headers={"X-Forwarded-Proto": "https", "X-Forwarded-For": "198.51.100.7",
                         "Cookie": "; ".join(f"{k}={v}" for k, v in self.cookies.items())})
            try:
                response = urllib.request.build_opener(NoRedirects).open(request, timeout=30)
            except urllib.error.HTTPError as answer:
                response = answer
            for header in response.headers.get_all("Set-Cookie") or []:
                for name, morsel in SimpleCookie(header).items():
                    self.cookies[name] = morsel.value
            if response.status in (301, 302, 303, 307, 308):
                url = urljoin(url, response.headers["Location"])
                continue
            return response.status, response.read().decode()
        raise AssertionError("too many redirects")


class NoRedirects(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args, **kwargs):
        return None


@pytest.fixture(scope="module")
def deployed(tmp_path_factory):
    base = tmp_path_factory.mktemp("deployment")
    folder, venv, port = base / "gateway", base / "venv", free_port()
    folder.mkdir()
    copy_tracked_files(folder)
    subprocess.run(["python3", "-m", "venv", str(venv)], check=True)
    env = production_env(folder, venv, port)
    for command in running_it_commands():
        if "createsuperuser" in command:
            command += " --noinput"  # the README's step is interactive; the same step, unattended
        done = run(command, cwd=folder, env=env)
        assert done.returncode == 0, f"{command!r} failed:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
    web = web_command().replace("0.0.0.0:8000", f"127.0.0.1:{port}").replace("--workers 4", "--workers 1")
    server = subprocess.Popen(["bash", "-c", f"exec {web}"], cwd=folder, env=env, start_new_session=True,
                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        origin = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + 120  # a bound only a broken start reaches
        while True:
            try:
                urllib.request.urlopen(origin + "/healthz", timeout=10)
                break
            except OSError:  # refused while gunicorn starts; a 503 or a slow answer while it warms up
                assert server.poll() is None, server.stderr.read()[-3000:]
                assert time.monotonic() < deadline, "gunicorn never answered /healthz"
                time.sleep(0.5)
        yield folder, env, origin
    finally:
        os.killpg(server.pid, signal.SIGTERM)
        try:
            server.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(server.pid, signal.SIGKILL)
            server.wait()


def hindi_for(msgid: str) -> str:
    po = (ROOT / "locale/hi/LC_MESSAGES/django.po").read_text()
    return re.search(rf'\nmsgid "{re.escape(msgid)}"\nmsgstr "([^"]+)"', po).group(1)


def test_the_readme_steps_alone_show_the_checkout_in_hindi(deployed):
    folder, env, origin = deployed
    onboarded = run(f"python manage.py create_merchant --code HINDI --name {shlex.quote('Hindi Shop')}", cwd=folder,
                    env=env, timeout=120)
    assert onboarded.returncode == 0, onboarded.stderr
    credentials = json.loads(onboarded.stdout)

    now = int(time.time())
    body = {"merchantId": "HINDI", "merchantTxnId": f"HI-{now}", "amount": 49900, "currency": "INR",
            "returnUrl": "https://shop.example/done", "timestamp": now, "language": "hi"}
    base = "|".join(str(body[k]) for k in ("merchantId", "merchantTxnId", "amount", "currency", "timestamp"))
    body["checksum"] = hmac.new(credentials["secretKey"].encode(), base.encode(), hashlib.sha256).hexdigest()
    request = urllib.request.Request(origin + "/api/v2/payments", data=json.dumps(body).encode(), method="POST",
                                     headers={"Content-Type": "application/json", "X-Api-Key": credentials["apiKey"],
                                              "X-Forwarded-Proto": "https"})
    session = json.load(urllib.request.urlopen(request, timeout=30))

    status, page = Browser(origin).get(session["checkoutUrl"] + "?clientSecret=" + session["clientSecret"])
    assert status == 200
    assert '<html lang="hi">' in page
    assert hindi_for("Secure checkout") in page and "Secure checkout" not in page


def test_production_refuses_to_start_when_an_offered_language_has_no_compiled_catalogue(deployed):
    folder, env, _ = deployed
    checked = run("python manage.py check", cwd=folder, env=env, timeout=120)
    assert checked.returncode == 0, checked.stderr

    (folder / CATALOGUE).rename(folder / CATALOGUE.with_suffix(".moved"))
    try:
        checked = run("python manage.py check", cwd=folder, env=env, timeout=120)
        staging = run("python manage.py check", cwd=folder, env={**env, "GATEWAY_ENV": "staging"}, timeout=120)
    finally:
        (folder / CATALOGUE.with_suffix(".moved")).rename(folder / CATALOGUE)
    assert checked.returncode != 0
    assert "gateway.E001" in checked.stderr and "hi" in checked.stderr and "compilemessages" in checked.stderr
    assert staging.returncode == 0 and "gateway.W002" in staging.stderr
