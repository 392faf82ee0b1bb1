"""Runs Floe's built-in Iceberg REST catalog (`floe catalog serve`) for integration tests.

- `start_catalog(work_dir, tokens=None)` writes a config (SQLite catalog + warehouse in
  `work_dir`, REST on 127.0.0.1 port 0), starts the server as its own process group
  (harness.procs), waits for its `REST catalog listening on http://HOST:PORT` log line and
  returns a `RestCatalogProc` whose `.uri` is that address.
- `pyiceberg_rest(uri, token=None)` opens pyiceberg's `RestCatalog` on it.
- `http(method, url, ...)` is a bare urllib request that never raises on an HTTP status.
"""
from __future__ import annotations

import json
import pathlib
import re
import time
import urllib.error
import urllib.request

import yaml

from . import procs
from .floe import floe_binary

START_TIMEOUT_S = 60.0  # a liveness bound: it listens within a second
CATALOG_NAME = "floe"
_LISTENING = re.compile(rb"REST catalog listening on (http://[^\s\"']+)")


class RestCatalogProc:
    def __init__(self, proc: procs.Proc, uri: str, work_dir: pathlib.Path, config_path: pathlib.Path,
                 tokens: list[str]):
        self.proc = proc
        self.uri = uri.rstrip("/")
        self.work_dir = work_dir
        self.config_path = config_path
        self.warehouse = work_dir / "warehouse"
        self.catalog_db = work_dir / "catalog.db"
        self.log_path = proc.log_path
        self.tokens = tokens

    def stop(self, timeout: float = 30.0) -> int | None:
        return self.proc.stop(timeout=timeout)

    def running(self) -> bool:
        return self.proc.running()

    def log(self, lines: int = 60) -> str:
        return procs.tail_file(self.log_path, lines)

    def __enter__(self) -> "RestCatalogProc":
        return self

    def __exit__(self, *exc) -> None:
        self.stop()


def write_config(work_dir: pathlib.Path, tokens: list[str] | None = None,
                 catalog_db: pathlib.Path | None = None,
                 extra: dict | None = None) -> pathlib.Path:
    work_dir = pathlib.Path(work_dir)
    work_dir.mkdir(parents=True, exist_ok=True)
    (work_dir / "warehouse").mkdir(exist_ok=True)
    catalog_db = pathlib.Path(catalog_db) if catalog_db else work_dir / "catalog.db"
    cfg = {
        # Not used by `catalog serve`; present in case the config loader requires it.
        "kafka": {"bootstrap.servers": "127.0.0.1:9"},
        "warehouse": str(work_dir / "warehouse"),
        "catalog": {"type": "sqlite", "uri": str(catalog_db), "name": CATALOG_NAME},
        "rest": {"listen": "127.0.0.1:0", "auth.tokens": list(tokens or [])},
    }
    for key, value in (extra or {}).items():  # sections are merged, other keys replaced
        if isinstance(value, dict) and isinstance(cfg.get(key), dict):
            cfg[key] = {**cfg[key], **value}
        else:
            cfg[key] = value
    path = work_dir / "floe-rest.yaml"
    path.write_text(yaml.safe_dump(cfg, sort_keys=False))
    return path


def start_catalog(work_dir, tokens: list[str] | None = None,
                  timeout: float = START_TIMEOUT_S,
                  catalog_db: pathlib.Path | None = None,
                  extra: dict | None = None) -> RestCatalogProc:
    """Starts `floe catalog serve` on a free port; raises RuntimeError (with the log tail) if it
    exits or does not log its listening line within `timeout` seconds. `catalog_db`: where the
    SQLite catalog file goes (default `work_dir/catalog.db`). `extra`: config sections merged
    over the defaults (e.g. an `s3://` warehouse with its `s3` and `rest.client.s3.*` keys)."""
    work_dir = pathlib.Path(work_dir)
    config = write_config(work_dir, tokens, catalog_db, extra)
    log_path = work_dir / "floe-rest.log"
    offset = log_path.stat().st_size if log_path.exists() else 0
    proc = procs.spawn([str(floe_binary()), "catalog", "serve", "--config", str(config)],
                       log_path, name="floe-rest")
    deadline = time.monotonic() + timeout
    while True:
        with open(log_path, "rb") as f:
            f.seek(offset)
            m = _LISTENING.search(f.read())
        if m:
            cat = RestCatalogProc(proc, m.group(1).decode(), work_dir, config, list(tokens or []))
            if catalog_db:
                cat.catalog_db = pathlib.Path(catalog_db)
            return cat
        if not proc.running():
            raise RuntimeError(f"floe catalog serve exited with {proc.returncode} before listening:"
                               f"\n{procs.tail_file(log_path)}")
        if time.monotonic() > deadline:
            proc.stop()
            raise RuntimeError(f"floe catalog serve did not log 'REST catalog listening on' within "
                               f"{timeout} s:\n{procs.tail_file(log_path)}")
        time.sleep(0.02)


def pyiceberg_rest(uri: str, token: str | None = None, **props):
    """pyiceberg's RestCatalog on `uri`; `token` is sent as `Authorization: Bearer <token>`."""
    from pyiceberg.catalog.rest import RestCatalog

    if token is not None:
        props["token"] = token
    return RestCatalog(CATALOG_NAME, uri=uri, **props)


class Response:
    def __init__(self, status: int, headers, body: bytes):
        self.status = status
        self.headers = headers
        self.body = body

    def json(self):
        return json.loads(self.body)

    def __repr__(self) -> str:
        return f"<HTTP {self.status} {self.body[:300]!r}>"


def http(method: str, url: str, body=None, headers: dict | None = None,
         token: str | None = None, timeout: float = 30.0) -> Response:
    """One HTTP request; returns the status, headers and body whatever the status."""
    data = None
    hdrs = dict(headers or {})
    if body is not None:
        data = body if isinstance(body, bytes) else json.dumps(body).encode()
        hdrs.setdefault("Content-Type", "application/json")
    if token is not None:
        hdrs["Authorization"] = f"Bearer {token}"
    req = urllib.request.Request(url, data=data, method=method, headers=hdrs)
    try:
        with urllib.request.urlopen(req, timeout=timeout) as r:
            return Response(r.status, r.headers, r.read())
    except urllib.error.HTTPError as e:
        return Response(e.code, e.headers, e.read() if e.fp else b"")
