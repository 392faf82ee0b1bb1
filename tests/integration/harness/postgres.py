"""A real PostgreSQL server for the tests (Debian's `postgresql` package), on loopback.

    pg = start_postgres(work_dir)        # initdb into a /tmp dir of its own, trust auth;
                                         # its log in work_dir/postgres
    uri = pg.create_database("t1")       # "postgresql://floe@127.0.0.1:PORT/t1"
    pg.sqlalchemy_uri("t1")              # for pyiceberg's SqlCatalog (psycopg2)
    pg.stop()

PostgreSQL refuses to run as root: when the tests run as root, initdb and the server run
as the `postgres` system user (runuser), which owns the data directory. Durability is off
(fsync, full_page_writes): a test never survives a power cut. Its superuser is `floe`.
"""
from __future__ import annotations

import glob
import os
import pathlib
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from typing import Any, Optional

from . import procs

START_TIMEOUT_S = 60.0
USER = "floe"


class PostgresStartError(RuntimeError):
    pass


def _bin(name: str) -> str:
    found = sorted(glob.glob(f"/usr/lib/postgresql/*/bin/{name}"))
    if not found:
        raise PostgresStartError(f"{name} not found under /usr/lib/postgresql: run "
                                 "`make setup` (Debian package postgresql)")
    return found[-1]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _as_server_user(args: list[str]) -> list[str]:
    if os.geteuid() != 0:
        return args
    return ["runuser", "-u", "postgres", "--", *args]


class Postgres:
    def __init__(self, proc: procs.Proc, port: int, home: pathlib.Path, args: list[str]):
        self.proc, self.port, self.home, self.args = proc, port, home, args
        self.host = "127.0.0.1"
        self.log_path = proc.log_path

    def uri(self, database: str = "postgres") -> str:
        return f"postgresql://{USER}@{self.host}:{self.port}/{database}"

    def sqlalchemy_uri(self, database: str) -> str:
        return f"postgresql+psycopg2://{USER}@{self.host}:{self.port}/{database}"

    def psql(self, sql: str, database: str = "postgres") -> str:
        out = subprocess.run([_bin("psql"), "-X", "-q", "-t", "-A", "-v", "ON_ERROR_STOP=1",
                              "-d", self.uri(database), "-c", sql],
                             capture_output=True, text=True, timeout=60)
        if out.returncode != 0:
            raise RuntimeError(f"psql failed: {out.stderr.strip()}")
        return out.stdout.strip()

    def create_database(self, name: str) -> str:
        self.psql(f'CREATE DATABASE "{name}"')
        return self.uri(name)

    def running(self) -> bool:
        return self.proc.running()

    def stop(self, timeout: float = 30.0) -> Optional[int]:
        rc = self.proc.stop(timeout=timeout)
        shutil.rmtree(self.home, ignore_errors=True)
        return rc

    def kill(self) -> Optional[int]:
        return self.proc.kill()

    def go_down(self, timeout: float = 30.0) -> None:
        """An outage: the server stops (its connections drop, new ones are refused) and
        keeps its data for come_back()."""
        self.proc.stop(timeout=timeout, sig=signal.SIGINT)  # fast shutdown

    def come_back(self) -> None:
        """The server again, on the same port and data, accepting connections."""
        self.proc = procs.spawn(self.args, self.log_path, name="postgres")
        self._wait_ready()

    def _wait_ready(self) -> None:
        deadline = time.monotonic() + START_TIMEOUT_S
        while time.monotonic() < deadline:
            if not self.proc.running():
                raise PostgresStartError("postgres exited:\n" +
                                         procs.tail_file(self.proc.log_path))
            ready = subprocess.run([_bin("pg_isready"), "-h", self.host, "-p", str(self.port),
                                    "-U", USER], capture_output=True)
            if ready.returncode == 0:
                return
            time.sleep(0.2)
        self.kill()
        raise PostgresStartError("postgres did not accept connections within "
                                 f"{START_TIMEOUT_S:.0f} s:\n" +
                                 procs.tail_file(self.proc.log_path))

    def __enter__(self) -> "Postgres":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.stop()


def start_postgres(work_dir: str | os.PathLike) -> Postgres:
    """initdb into work_dir/postgres/data and start the server on a free loopback port;
    waits until it accepts connections."""
    work = pathlib.Path(work_dir) / "postgres"
    work.mkdir(parents=True, exist_ok=True)
    # The server's own directory: under /tmp, since the server user cannot pass through a
    # root-only work directory (pytest's are 0700).
    home = pathlib.Path(tempfile.mkdtemp(prefix="floe-pg-"))
    data, sock = home / "data", home / "sock"
    sock.mkdir()
    if os.geteuid() == 0:
        for p in (home, sock):
            shutil.chown(p, "postgres")
    init = subprocess.run(_as_server_user([_bin("initdb"), "-D", str(data), "-U", USER,
                                           "-A", "trust", "--no-sync", "-E", "UTF8"]),
                          capture_output=True, text=True, timeout=120)
    if init.returncode != 0:
        raise PostgresStartError(f"initdb failed: {init.stderr.strip()}")
    port = _free_port()
    args = _as_server_user([
        _bin("postgres"), "-D", str(data), "-p", str(port), "-k", str(sock),
        "-c", "listen_addresses=127.0.0.1", "-c", "fsync=off", "-c", "full_page_writes=off",
        "-c", "synchronous_commit=off", "-c", "max_connections=200"])
    pg = Postgres(procs.spawn(args, work / "postgres.log", name="postgres"), port, home, args)
    pg._wait_ready()
    return pg
