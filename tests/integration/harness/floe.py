"""Runs the `floe` binary for integration tests and reads back what it committed.

- `FloeRun` writes a YAML config into a work dir and starts `floe run` as its own process
  group (harness.procs), stdout/stderr in `floe.log`.
- `table_positions()` reads the catalog pointer and the metadata JSON directly (sqlite3 +
  json), so waiting on progress costs milliseconds and does not depend on any reader library.
"""
from __future__ import annotations

import json
import re
import os
import pathlib
import sqlite3
import time

import yaml  # pyyaml comes with pyiceberg

from . import paths, procs

ROOT = pathlib.Path(__file__).resolve().parents[3]


def fnv1a64(s: str) -> int:
    h = 0xcbf29ce484222325
    for b in s.encode():
        h ^= b
        h = (h * 0x100000001b3) & 0xFFFFFFFFFFFFFFFF
    return h


def default_table_name(topic: str) -> str:
    """Floe's default table name for a topic (config::DefaultTableName): lower-cased, every
    character outside [a-z0-9_] mapped to '_', plus '_' + 8 hex digits of the FNV-1a 64 hash of
    the topic when the mapping changed the name."""
    base = "".join(c if c.isascii() and (c.islower() or c.isdigit() or c == "_") else "_"
                   for c in topic.lower())
    return base if base == topic else base + "_" + format(fnv1a64(topic), "016x")[:8]


def floe_binary() -> pathlib.Path:
    return paths.build_dir() / "src" / "floe" / "cli" / "floe"


class FloeRun:
    def __init__(self, work_dir: pathlib.Path, bootstrap: str, registry_url: str,
                 topics: list[dict], defaults: dict | None = None, extra: dict | None = None,
                 s3=None, postgres: tuple | None = None, rest: tuple | None = None):
        """`s3`: the harness.s3.S3 store an `s3://` warehouse (set through `extra`) lives on,
        for reading the metadata back. `postgres`: (harness.postgres.Postgres, database): the
        catalog is that PostgreSQL database instead of a SQLite file. `rest`:
        (harness.iceberg_rest.IcebergRest, the `catalog` section): an external REST catalog,
        whose server metadata locations are read from."""
        self.work_dir = pathlib.Path(work_dir)
        self.work_dir.mkdir(parents=True, exist_ok=True)
        self.warehouse = self.work_dir / "warehouse"
        self.catalog_db = self.work_dir / "catalog.db"
        self.config_path = self.work_dir / "floe.yaml"
        self.log_path = self.work_dir / "floe.log"
        cfg = {
            "kafka": {"bootstrap.servers": bootstrap},
            "registry": {"url": registry_url},
            "warehouse": str(self.warehouse),
            "catalog": (rest[1] if rest else
                        {"type": "postgresql", "uri": postgres[0].uri(postgres[1]),
                         "name": "floe"} if postgres else
                        {"type": "sqlite", "uri": str(self.catalog_db), "name": "floe"}),
            # Port 0: each run serves its REST catalog on a free port (rest_uri() reads it).
            "rest": {"listen": "127.0.0.1:0"},
            "defaults": {"commit.interval.ms": 1000, **(defaults or {})},
            "topics": topics,
        }
        cfg.update(extra or {})
        self.config_path.write_text(yaml.safe_dump(cfg, sort_keys=False))
        self.proc: procs.Proc | None = None
        self.s3 = s3
        self.postgres = postgres
        self.rest = rest[0] if rest else None

    def start(self, env: dict | None = None, prefix: list[str] | None = None) -> procs.Proc:
        """`prefix`: a command that execs Floe (e.g. setpriv to run it as another user)."""
        full_env = dict(os.environ)
        full_env.pop("FLOE_CRASH_AT", None)
        full_env.update(env or {})
        offset = self.log_path.stat().st_size if self.log_path.exists() else 0
        self.proc = procs.spawn([*(prefix or []), str(floe_binary()), "run", "--config",
                                 str(self.config_path)],
                                self.log_path, name="floe", env=full_env)
        # Wait for the startup line: signal handlers are installed by then, so a stop() right
        # after start() is a clean SIGTERM, not a kill before the handler exists. It normally
        # comes within a second; 60 s is a liveness bound that a busy core cannot reach.
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and self.proc.running():
            with open(self.log_path, "rb") as f:
                f.seek(offset)
                if b" starting: " in f.read():
                    break
            time.sleep(0.02)
        return self.proc

    def stop(self, timeout: float = 60.0) -> int | None:
        return self.proc.stop(timeout=timeout) if self.proc else None

    def kill(self) -> None:
        if self.proc:
            self.proc.kill()

    def wait_exit(self, timeout: float = 60.0) -> int:
        deadline = time.monotonic() + timeout
        while self.proc.running():
            if time.monotonic() > deadline:
                raise TimeoutError(f"floe did not exit within {timeout}s:\n{self.log()}")
            time.sleep(0.05)
        return self.proc.returncode

    def rest_uri(self, timeout: float = 60.0) -> str:
        """The REST catalog URI this run serves (from its 'listening on' log line)."""
        marker = "REST catalog listening on "
        text = self.wait_for_log(marker, timeout=timeout)
        line = text[text.rindex(marker) + len(marker):].splitlines()[0]
        return line.split()[0]

    def log(self, lines: int = 60) -> str:
        return procs.tail_file(self.log_path, lines)

    def metadata_location(self, table: str, namespace: str = "kafka") -> str | None:
        if self.rest is not None:
            return self.rest.metadata_location(namespace, table)
        if self.postgres:
            import psycopg2
            pg, database = self.postgres
            with psycopg2.connect(pg.uri(database)) as con, con.cursor() as cur:
                try:
                    cur.execute("SELECT metadata_location FROM iceberg_tables WHERE "
                                "catalog_name='floe' AND table_namespace=%s AND table_name=%s",
                                (namespace, table))
                except psycopg2.errors.UndefinedTable:
                    return None
                row = cur.fetchone()
            return row[0] if row else None
        if not self.catalog_db.exists():
            return None
        con = sqlite3.connect(self.catalog_db, timeout=10)
        try:
            row = con.execute("SELECT metadata_location FROM iceberg_tables WHERE catalog_name='floe'"
                              " AND table_namespace=? AND table_name=?", (namespace, table)).fetchone()
        except sqlite3.OperationalError:
            return None
        finally:
            con.close()
        return row[0] if row else None

    def metadata(self, table: str, namespace: str = "kafka") -> dict | None:
        loc = self.metadata_location(table, namespace)
        if loc is None:
            return None
        if loc.startswith("s3://"):
            with self.s3.fs().open_input_stream(loc.removeprefix("s3://")) as f:
                return json.loads(f.read())
        # Hadoop writes "file:/path", Floe "file:///path".
        return json.loads(pathlib.Path(re.sub(r"^file:(//)?", "", loc)).read_text())

    def table_positions(self, table: str, topic: str, namespace: str = "kafka") -> dict[int, int]:
        md = self.metadata(table, namespace)
        if md is None:
            return {}
        offsets = md.get("properties", {}).get("floe.kafka.offsets")
        if not offsets:
            return {}
        return {int(p): v for p, v in json.loads(offsets).get(topic, {}).items()}

    def wait_for_positions(self, table: str, topic: str, expected: dict[int, int],
                           timeout: float = 120.0, namespace: str = "kafka") -> None:
        """Waits until the table's recorded positions reach `expected` for every partition."""
        deadline = time.monotonic() + timeout
        while True:
            pos = self.table_positions(table, topic, namespace)
            if all(pos.get(p, -1) >= v for p, v in expected.items()):
                return
            if self.proc is not None and not self.proc.running():
                raise RuntimeError(f"floe exited with {self.proc.returncode} before reaching "
                                   f"{expected} (at {pos}):\n{self.log()}")
            if time.monotonic() > deadline:
                raise TimeoutError(f"positions {pos} did not reach {expected} in {timeout}s:\n"
                                   f"{self.log()}")
            time.sleep(0.1)

    def wait_for_log(self, needle: str, timeout: float = 60.0) -> str:
        deadline = time.monotonic() + timeout
        while True:
            text = self.log_path.read_text(errors="replace") if self.log_path.exists() else ""
            if needle in text:
                return text
            if time.monotonic() > deadline:
                raise TimeoutError(f"'{needle}' not in floe log after {timeout}s:\n{self.log()}")
            time.sleep(0.1)
