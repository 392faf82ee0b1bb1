"""What the W4 peers share: the peer table in a local SQLite catalog, and the driver loop that
measures a peer process (CPU from /proc, progress from the catalog) until the table holds every
record of the topic.

The catalog is the same kind Floe uses (the Iceberg JDBC catalog layout in one SQLite file,
which pyiceberg's SqlCatalog and Java's JdbcCatalog both read and write). Progress is read the
way bench/run.py reads Floe's: the catalog pointer, then `total-records` of the current
snapshot in the metadata JSON, with sqlite3 + json only, so polling costs milliseconds and no
library of any peer runs in the driver process.
"""
from __future__ import annotations

import json
import pathlib
import sqlite3
import time
import urllib.parse

CATALOG = "bench"
NAMESPACE = "bench"


def create_table(work: pathlib.Path, table: str, schema) -> tuple[pathlib.Path, pathlib.Path]:
    """Creates `bench.<table>` with `schema` (a pyiceberg Schema), zstd Parquet, in a new
    SQLite catalog under `work`. Returns (catalog db, warehouse dir)."""
    from pyiceberg.catalog.sql import SqlCatalog
    work.mkdir(parents=True, exist_ok=True)
    db, warehouse = work / "catalog.db", work / "warehouse"
    warehouse.mkdir(exist_ok=True)
    cat = SqlCatalog(CATALOG, uri=f"sqlite:///{db}", warehouse=f"file://{warehouse}")
    cat.create_namespace(NAMESPACE)
    cat.create_table(f"{NAMESPACE}.{table}", schema=schema,
                     properties={"write.parquet.compression-codec": "zstd"})
    return db, warehouse


def _path(location: str) -> pathlib.Path:
    return pathlib.Path(urllib.parse.urlparse(location).path)


def table_state(db: pathlib.Path, table: str) -> tuple[str | None, dict | None]:
    """(metadata location, current snapshot) of bench.<table>, or (None, None)."""
    con = sqlite3.connect(db, timeout=10)
    try:
        row = con.execute("SELECT metadata_location FROM iceberg_tables WHERE catalog_name=? AND "
                          "table_namespace=? AND table_name=?",
                          (CATALOG, NAMESPACE, table)).fetchone()
    except sqlite3.OperationalError:
        return None, None
    finally:
        con.close()
    if not row:
        return None, None
    md = json.loads(_path(row[0]).read_text())
    snap_id = md.get("current-snapshot-id")
    snap = next((s for s in md.get("snapshots", []) if s["snapshot-id"] == snap_id), None)
    return row[0], snap


def cpu_seconds(pid: int) -> float:
    import os
    fields = pathlib.Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def peak_rss_mib(pid: int) -> float:
    for line in pathlib.Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def drain(proc, db: pathlib.Path, table: str, n: int, input_bytes: int,
          timeout_s: float = 3600.0, warmup_s: float = 30.0, check=None) -> dict:
    """Samples `proc` (a harness.procs.Proc, started just before) until bench.<table>'s current
    snapshot holds `n` records; returns the same metrics as bench/run.py's Floe runs. The clock
    and the CPU count from the process start (JVM or interpreter start-up included) to the
    commit that makes the table complete. `check()`, if given, is called every poll and raises
    when the peer has failed without exiting (a Connect task dies, the worker lives on)."""
    t0 = time.monotonic()
    timeline = []  # (wall s, CPU s, records committed) at each new commit seen
    last = None
    cpu = rss = 0.0
    while True:
        if not proc.running():
            raise RuntimeError(f"{proc.name} exited with {proc.returncode}; tail of "
                               f"{proc.log_path}:\n{proc.tail(60)}")
        if check is not None:
            check()
        cpu, rss = cpu_seconds(proc.pid), peak_rss_mib(proc.pid)
        loc, snap = table_state(db, table)
        if loc != last and snap is not None:
            last = loc
            timeline.append((round(time.monotonic() - t0, 3), cpu,
                             int(snap["summary"]["total-records"])))
            if timeline[-1][2] >= n:
                break
        if time.monotonic() - t0 > timeout_s:
            raise TimeoutError(f"{proc.name}: {timeline[-1][2] if timeline else 0} of {n} "
                               f"records committed after {timeout_s} s")
        time.sleep(0.05)
    wall = time.monotonic() - t0
    got = timeline[-1][2]
    commits = len(timeline)
    later = [t for t in timeline if t[0] >= warmup_s]
    after = None
    if later and later[0][2] < got and cpu > later[0][1]:
        t, c, r = later[0]
        after = {"from_wall_s": t, "records": got - r, "cpu_s": cpu - c, "wall_s": wall - t,
                 "records_per_cpu_s": (got - r) / (cpu - c)}
    return {"records": got, "cpu_s": cpu, "wall_s": wall, "records_per_cpu_s": got / cpu,
            "records_per_wall_s": got / wall, "mb_per_wall_s": input_bytes / wall / 1e6,
            "peak_rss_mib": rss, "commits_seen": commits, "after_warmup": after,
            "timeline": timeline}


def dir_bytes(path: pathlib.Path, pattern: str) -> int:
    return sum(f.stat().st_size for f in path.rglob(pattern) if f.is_file())
