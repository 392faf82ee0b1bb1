"""Trino (one coordinator that also runs the work) for integration tests, queried over its
HTTP client protocol.

    trino = start_trino(work_dir, {"floe": catalog_properties_text})
    trino.query("SELECT count(*) FROM floe.kafka.orders")   # -> (column names, rows)
    trino.stop()

The server is the one scripts/setup.sh unpacks into tools/trino/server (tools/trino/pom.xml):
lib/ and plugin/iceberg/ of the release tarball, nothing else, so the Iceberg connector is the
only plugin it loads. It is started as `java -cp 'lib/*' io.trino.server.TrinoServer` (what
Trino's launcher runs) with every node and server setting in one config.properties under
`work_dir`, on a free loopback port. `catalogs` maps a catalog name to the text of its
properties file, written as given, so a test checks exactly the text a user pastes.

Trino 476 needs Java 24 or newer: FLOE_TRINO_JAVA_HOME, else the newest JDK under
/usr/lib/jvm that is new enough (this machine's Temurin 25). Start-up takes 12-17 s on two
cores, most of it loading the Iceberg plugin and the catalogs.
"""
from __future__ import annotations

import json
import os
import pathlib
import re
import subprocess
import time
import urllib.error
import urllib.request

from . import procs
from .kafka import free_port

ROOT = pathlib.Path(__file__).resolve().parents[3]
SERVER = ROOT / "tools" / "trino" / "server"
MIN_JAVA = 24
START_TIMEOUT_S = 120.0
QUERY_TIMEOUT_S = 120.0
USER = "floe-test"
# From the jvm.config Trino's docs recommend, less what only matters on a big node; C1 only
# (TieredStopAtLevel=1) starts a few seconds sooner on two cores, and the queries are tiny.
JVM_FLAGS = [
    "-Xmx1G", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-XX:+ExitOnOutOfMemoryError",
    "-XX:-OmitStackTraceInFastThrow", "-XX:+EnableDynamicAgentLoading",
    "-Djdk.attach.allowAttachSelf=true", "-Dfile.encoding=UTF-8",
    "--enable-native-access=ALL-UNNAMED",
]


class TrinoError(RuntimeError):
    """A query failed; the message is Trino's error (name and message), `name` its errorName."""

    def __init__(self, message: str, name: str | None = None):
        super().__init__(message)
        self.name = name


def _java_version(java: pathlib.Path) -> int:
    out = subprocess.run([str(java), "-version"], capture_output=True, text=True).stderr
    m = re.search(r'version "(\d+)', out)
    return int(m.group(1)) if m else 0


def java_home() -> pathlib.Path:
    """A JDK that can run Trino; raises RuntimeError naming what was looked at."""
    env = os.environ.get("FLOE_TRINO_JAVA_HOME")
    candidates = [pathlib.Path(env)] if env else sorted(pathlib.Path("/usr/lib/jvm").glob("*"))
    found = [(v, c) for c in candidates if (c / "bin" / "java").exists()
             and (v := _java_version(c / "bin" / "java")) >= MIN_JAVA]
    if not found:
        where = f"FLOE_TRINO_JAVA_HOME={env}" if env else "/usr/lib/jvm"
        raise RuntimeError(f"Trino needs Java {MIN_JAVA}+ and {where} has none: install a "
                           f"JDK {MIN_JAVA}+ or point FLOE_TRINO_JAVA_HOME at one")
    return max(found)[1]


class Trino:
    def __init__(self, proc: procs.Proc, port: int):
        self.proc = proc
        self.uri = f"http://127.0.0.1:{port}"

    def _request(self, method: str, url: str, body: bytes | None = None) -> dict:
        req = urllib.request.Request(url, data=body, method=method,
                                     headers={"X-Trino-User": USER})
        with urllib.request.urlopen(req, timeout=60) as r:
            return json.loads(r.read())

    def query(self, sql: str, timeout: float = QUERY_TIMEOUT_S) -> tuple[list[str], list[list]]:
        """Runs `sql` (POST /v1/statement, then each nextUri until there is none); returns the
        column names and every row (values as Trino's JSON encoding gives them: decimals and
        timestamps as strings). Raises TrinoError when the query fails.

        NO_NODES_AVAILABLE is retried: for a few seconds after start-up, until the node
        manager's periodic refresh has seen the coordinator's own node with its catalogs,
        a query that reads a table fails with it."""
        deadline = time.monotonic() + timeout
        while True:
            try:
                return self._query_once(sql, deadline)
            except TrinoError as e:
                if e.name != "NO_NODES_AVAILABLE" or time.monotonic() > deadline:
                    raise
            time.sleep(0.5)

    def _query_once(self, sql: str, deadline: float) -> tuple[list[str], list[list]]:
        res = self._request("POST", self.uri + "/v1/statement", sql.encode())
        columns: list[str] = []
        rows: list[list] = []
        while True:
            if "error" in res:
                err = res["error"]
                raise TrinoError(f"{err.get('errorName')}: {err.get('message')}",
                                 err.get("errorName"))
            columns = columns or [c["name"] for c in res.get("columns") or []]
            rows.extend(res.get("data") or [])
            nxt = res.get("nextUri")
            if not nxt:
                return columns, rows
            if time.monotonic() > deadline:
                self._request("DELETE", nxt)
                raise TrinoError(f"query did not finish in time: {sql}")
            res = self._request("GET", nxt)

    def log(self, lines: int = 60) -> str:
        return self.proc.tail(lines)

    def stop(self) -> int | None:
        return self.proc.stop(timeout=20)


def start_trino(work_dir: pathlib.Path, catalogs: dict[str, str]) -> Trino:
    """Starts Trino with `catalogs` (name -> properties text) and waits until it runs queries;
    raises RuntimeError with the log tail when it exits or does not get there in time."""
    if not (SERVER / "plugin" / "iceberg").is_dir():
        raise RuntimeError(f"{SERVER} has no plugin/iceberg: run scripts/setup.sh")
    home = java_home()
    work_dir = pathlib.Path(work_dir)
    (work_dir / "catalog").mkdir(parents=True, exist_ok=True)
    for name, text in catalogs.items():
        (work_dir / "catalog" / f"{name}.properties").write_text(text)
    port = free_port()
    config = {
        "node.environment": "test",
        "node.id": "floe-test",
        "node.internal-address": "127.0.0.1",
        "node.bind-ip": "127.0.0.1",
        "coordinator": "true",
        "node-scheduler.include-coordinator": "true",
        "http-server.http.port": str(port),
        "discovery.uri": f"http://127.0.0.1:{port}",
        "catalog.config-dir": str(work_dir / "catalog"),
        "plugin.dir": str(SERVER / "plugin"),
        "query.max-memory": "256MB",
        "query.max-memory-per-node": "256MB",
        # Few threads: two cores, one query at a time.
        "task.concurrency": "2",
        "task.max-worker-threads": "4",
    }
    (work_dir / "config.properties").write_text(
        "".join(f"{k}={v}\n" for k, v in config.items()))
    args = [str(home / "bin" / "java"), *JVM_FLAGS,
            f"-Dconfig={work_dir / 'config.properties'}",
            "-cp", f"{SERVER / 'lib'}/*", "io.trino.server.TrinoServer"]
    env = {**os.environ, "JAVA_HOME": str(home)}
    proc = procs.spawn(args, work_dir / "trino.log", name="trino", cwd=work_dir, env=env)
    trino = Trino(proc, port)
    deadline = time.monotonic() + START_TIMEOUT_S
    while True:
        if not proc.running():
            raise RuntimeError(f"Trino exited with {proc.returncode} while starting:\n"
                               f"{proc.tail()}")
        try:
            if not trino._request("GET", trino.uri + "/v1/info").get("starting", True):
                return trino
        except (OSError, ValueError):
            pass
        if time.monotonic() > deadline:
            proc.stop()
            raise RuntimeError(f"Trino did not finish starting in {START_TIMEOUT_S} s:\n"
                               f"{proc.tail()}")
        time.sleep(0.25)
