"""Real processes for the subprocess lane: registry replicas, PostgreSQL, an S3 server, a proxy,
and the ``clawhub`` CLI from npm. Each starts on 127.0.0.1 and is stopped by its owner."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import NoReturn

import httpx
import pytest

REPO = Path(__file__).resolve().parents[3]
#: Set by ``.ci/run``: there a missing PostgreSQL, Chromium or clawhub CLI fails the test
#: instead of skipping it, so CI never passes without the deployment, page and real-client
#: checks.
REQUIRE_ENV = "SKILLBOOK_HUB_REQUIRE_SERVICES"


def unavailable(reason: str) -> NoReturn:
    """Skip for want of an outside program, or fail where CI requires it."""
    if os.environ.get(REQUIRE_ENV) == "1":
        pytest.fail(f"{reason} ({REQUIRE_ENV}=1)")
    pytest.skip(reason)


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def wait_http(url: str, proc: subprocess.Popen[bytes] | None = None, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc is not None and proc.poll() is not None:
            raise RuntimeError(f"{url}: the process exited with {proc.returncode}")
        try:
            if httpx.get(url, timeout=2).status_code < 500:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.1)
    raise RuntimeError(f"{url} did not answer within {timeout} s")


class Process:
    """A child process with its output in a log file; stopped (and waited for) on exit."""

    def __init__(
        self,
        argv: Sequence[str],
        log: Path,
        env: Mapping[str, str] | None = None,
        user: str | None = None,
    ) -> None:
        self.log = log
        self._out = log.open("wb")
        self.proc = subprocess.Popen(
            list(argv),
            stdout=self._out,
            stderr=subprocess.STDOUT,
            env=dict(env) if env is not None else None,
            user=user,
        )

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(15)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(15)
        self._out.close()

    def output(self) -> str:
        return self.log.read_text(errors="replace")


def skillbook(
    *args: str, env: Mapping[str, str], check: bool = True
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "skillbook", *args],
        env=dict(env),
        capture_output=True,
        text=True,
        timeout=120,
        check=check,
    )


def serve_registry(workdir: Path, env: Mapping[str, str], *args: str) -> tuple[Process, str]:
    """``skillbook registry serve`` on a free port; returns the process and its URL."""
    port = free_port()
    argv = [sys.executable, "-m", "skillbook", "registry", "serve", "--port", str(port), *args]
    proc = Process(argv, workdir / f"registry-{port}.log", env)
    url = f"http://127.0.0.1:{port}"
    try:
        wait_http(url + "/healthz", proc.proc)
    except RuntimeError:
        proc.stop()
        raise RuntimeError(proc.output()[-3000:]) from None
    return proc, url


def _pg_bin(name: str) -> str | None:
    found = shutil.which(name)
    if found:
        return found
    for candidate in sorted(Path("/usr/lib/postgresql").glob(f"*/bin/{name}"), reverse=True):
        return str(candidate)
    return None


class Postgres:
    """A throwaway PostgreSQL cluster (initdb in a temp folder) on a loopback port."""

    def __init__(self) -> None:
        initdb, pg_ctl = _pg_bin("initdb"), _pg_bin("pg_ctl")
        if initdb is None or pg_ctl is None:
            raise FileNotFoundError("PostgreSQL is not installed (apt-get install postgresql)")
        self.pg_ctl = pg_ctl
        # initdb refuses to run as root: the cluster belongs to the `postgres` user then.
        self.user = "postgres" if os.geteuid() == 0 else None
        self.root = Path(tempfile.mkdtemp(prefix="skillbook-pg-"))
        self.root.chmod(0o755)
        self.data = self.root / "data"
        self.port = free_port()
        if self.user is not None:
            shutil.chown(self.root, self.user)
        self._run(
            [
                initdb,
                "-D",
                str(self.data),
                "-U",
                "skillbook",
                "--auth=trust",
                "-E",
                "UTF8",
                "--locale=C",
            ]
        )
        options = f"-p {self.port} -k {self.root} -c listen_addresses=127.0.0.1 -c fsync=off"
        self._run(
            [
                pg_ctl,
                "-D",
                str(self.data),
                "-o",
                options,
                "-l",
                str(self.root / "log"),
                "-w",
                "-t",
                "60",
                "start",
            ]
        )
        self.url = f"postgresql+psycopg://skillbook@127.0.0.1:{self.port}/postgres"

    def _run(self, argv: list[str]) -> None:
        proc = subprocess.run(
            argv,
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
            user=self.user,
            cwd=self.root,
        )
        if proc.returncode != 0:
            raise RuntimeError(f"{argv[0]} failed: {proc.stdout}{proc.stderr}")

    def stop(self) -> None:
        try:
            self._run([self.pg_ctl, "-D", str(self.data), "-m", "fast", "-w", "stop"])
        finally:
            shutil.rmtree(self.root, ignore_errors=True)


S3_ENV = {
    "AWS_ACCESS_KEY_ID": "test",
    "AWS_SECRET_ACCESS_KEY": "test",
    "AWS_DEFAULT_REGION": "us-east-1",
}


def moto_server(workdir: Path) -> tuple[Process, str]:
    """An S3-compatible server (moto in server mode) with the bucket ``skills``."""
    port = free_port()
    proc = Process(
        [sys.executable, "-m", "moto.server", "-H", "127.0.0.1", "-p", str(port)],
        workdir / "moto.log",
        {**os.environ, **S3_ENV},
    )
    url = f"http://127.0.0.1:{port}"
    wait_http(url + "/moto-api/", proc.proc)
    import boto3

    boto3.client(
        "s3",
        endpoint_url=url,
        region_name="us-east-1",
        aws_access_key_id="test",
        aws_secret_access_key="test",
    ).create_bucket(Bucket="skills")
    return proc, url


def proxy(workdir: Path, upstreams: Sequence[str]) -> tuple[Process, str]:
    """The round-robin proxy of ``proxy_app.py`` in front of ``upstreams``."""
    port = free_port()
    script = Path(__file__).with_name("proxy_app.py")
    proc = Process([sys.executable, str(script), str(port), *upstreams], workdir / "proxy.log")
    url = f"http://127.0.0.1:{port}"
    wait_http(url + "/healthz", proc.proc)
    return proc, url
