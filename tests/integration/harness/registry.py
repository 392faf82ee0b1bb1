"""The in-repo Confluent-compatible Schema Registry (tools/registry/floe_registry.py) for tests.

    reg = start_registry(log_dir)                      # or start_registry(d, basic_auth="u:p")
    reg.url                                            # "http://127.0.0.1:PORT"
    reg.outage(503, count=2)                           # next 2 registry requests fail with 503
    reg.requests()                                     # [{method, path, status}] seen so far
    reg.stop()                                         # SIGTERM to its group; returns exit code

Also a context manager (`with start_registry(d) as reg:`). The server runs in its own process
group (`start_new_session=True`) through harness.procs, which kills the group with killpg on
stop() and, as a safety net, at exit and on SIGTERM/SIGINT of the test run. Its stdout and
stderr (the `LISTENING <port>` line, then the access log) go to registry[-N].log in log_dir.
The /__admin/ helpers are test hooks of this server, not part of the Confluent API.
"""
from __future__ import annotations

import base64
import json
import pathlib
import re
import sys
import time
import urllib.error
import urllib.request
from typing import Any, Optional

from . import procs

ROOT = pathlib.Path(__file__).resolve().parents[3]
SERVER = ROOT / "tools" / "registry" / "floe_registry.py"
START_TIMEOUT_S = 60.0  # a liveness bound: it listens within a second or two
_LISTENING = re.compile(r"^LISTENING (\d+)$", re.MULTILINE)


class RegistryStartError(RuntimeError):
    pass


class Registry:
    """A running floe_registry process. stop() is idempotent."""

    def __init__(self, proc: procs.Proc, host: str, port: int,
                 basic_auth: Optional[str]):
        self.proc = proc
        self.host = host
        self.port = port
        self.basic_auth = basic_auth
        self.url = f"http://{host}:{port}"
        self.log_path = proc.log_path

    # ---- lifecycle -------------------------------------------------------------------------

    def running(self) -> bool:
        return self.proc.running()

    def stop(self, timeout: float = 10.0) -> Optional[int]:
        """SIGTERM to the process group, SIGKILL after `timeout`; returns the exit code
        (0 for a clean shutdown)."""
        return self.proc.stop(timeout=timeout)

    def kill(self) -> Optional[int]:
        """SIGKILL to the group: the registry vanishes as in a crash."""
        return self.proc.kill()

    def __enter__(self) -> "Registry":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.stop()

    def client_conf(self, **extra: Any) -> dict:
        """A confluent_kafka SchemaRegistryClient config for this server."""
        conf: dict[str, Any] = {"url": self.url}
        if self.basic_auth:
            conf["basic.auth.user.info"] = self.basic_auth
        conf.update(extra)
        return conf

    # ---- test hooks (/__admin/, not part of the Confluent API) -----------------------------

    def admin(self, method: str, path: str, body: Any = None) -> Any:
        data = json.dumps(body).encode() if body is not None else None
        req = urllib.request.Request(f"{self.url}/__admin/{path}", data=data, method=method,
                                     headers={"Content-Type": "application/json"})
        with urllib.request.urlopen(req, timeout=10) as resp:
            return json.loads(resp.read() or b"null")

    def outage(self, status: int, count: int = -1, path_prefix: str = "",
               error_code: Optional[int] = None) -> None:
        """The next `count` registry requests (all until cleared if negative) whose path
        starts with `path_prefix` fail with HTTP `status`."""
        body: dict[str, Any] = {"status": status, "count": count, "path_prefix": path_prefix}
        if error_code is not None:
            body["error_code"] = error_code
        self.admin("POST", "outage", body)

    def clear_outage(self) -> None:
        self.admin("POST", "outage", {"status": 0})

    def requests(self) -> list:
        return self.admin("GET", "requests")

    def clear_requests(self) -> None:
        self.admin("DELETE", "requests")

    def reset(self) -> None:
        """Forgets every schema, subject, config, mode, outage and logged request."""
        self.admin("POST", "reset", {})

    # ---- raw HTTP (for the contract test and for tests of Floe's own client) ---------------

    def http(self, method: str, path: str, body: Any = None, *, auth: Optional[str] = "default",
             raw_body: Optional[bytes] = None,
             headers: Optional[dict] = None) -> tuple[int, dict, Any]:
        """One request; returns (status, headers, decoded JSON body, or text if not JSON).
        auth: "default" uses the server's credentials, None sends none, or "user:pass"."""
        if auth == "default":
            auth = self.basic_auth
        data = raw_body if raw_body is not None else (
            json.dumps(body).encode() if body is not None else None)
        hdrs = {"Accept": "application/vnd.schemaregistry.v1+json"}
        if data is not None:
            hdrs["Content-Type"] = "application/vnd.schemaregistry.v1+json"
        if auth:
            hdrs["Authorization"] = "Basic " + base64.b64encode(auth.encode()).decode()
        hdrs.update(headers or {})
        req = urllib.request.Request(self.url + path, data=data, method=method, headers=hdrs)
        try:
            with urllib.request.urlopen(req, timeout=10) as resp:
                status, resp_headers, payload = resp.status, dict(resp.headers), resp.read()
        except urllib.error.HTTPError as e:
            status, resp_headers, payload = e.code, dict(e.headers), e.read()
        text = payload.decode("utf-8", "replace")
        try:
            decoded: Any = json.loads(text)
        except ValueError:
            decoded = text
        return status, resp_headers, decoded


def start_registry(log_dir, basic_auth: Optional[str] = None, *, host: str = "127.0.0.1",
                   compatibility: Optional[str] = None,
                   timeout: float = START_TIMEOUT_S) -> Registry:
    """Starts floe_registry on a free port and waits for its `LISTENING <port>` line.
    compatibility: the initial global level (the server's default is BACKWARD, as Confluent's;
    "NONE" lets a test register any evolution, e.g. to see Floe refuse it)."""
    log_dir = pathlib.Path(log_dir)
    log_dir.mkdir(parents=True, exist_ok=True)
    log_path = log_dir / "registry.log"
    n = 1
    while log_path.exists():
        n += 1
        log_path = log_dir / f"registry-{n}.log"
    args = [sys.executable, "-u", str(SERVER), "--host", host, "--port", "0"]
    if basic_auth is not None:
        args += ["--basic-auth", basic_auth]
    if compatibility is not None:
        args += ["--compatibility", compatibility]
    proc = procs.spawn(args, log_path, name="floe_registry", cwd=ROOT)
    deadline = time.monotonic() + timeout
    try:
        while True:
            try:
                m = _LISTENING.search(log_path.read_text(errors="replace"))
            except OSError:
                m = None
            if m:
                return Registry(proc, host, int(m.group(1)), basic_auth)
            if not proc.running():
                raise RegistryStartError(f"floe_registry exited with {proc.returncode} before "
                                         f"listening; tail of {log_path}:\n{proc.tail()}")
            if time.monotonic() > deadline:
                raise RegistryStartError(f"floe_registry did not print LISTENING within "
                                         f"{timeout}s; tail of {log_path}:\n{proc.tail()}")
            time.sleep(0.05)
    except BaseException:
        proc.stop(timeout=5)
        raise
