"""`make bench`, compaction (issue 20): what 3,600 one-second commits cost readers, and what
compacting them costs Floe.

A table of 3,600 commits of 100 records each is built through the production committer and
Delta mirror with an injected clock (`floe_maintenance_soak --maintain-every 0`: no
maintenance while it commits). Then, before and after `floe maintain` compacts it:
- pyiceberg planning (`scan().plan_files()`) and full scan (`scan().to_arrow()`) times;
- DuckDB full-scan time through `iceberg_scan` and through `delta_scan`;
each the median of --repeat runs, with min and max. `floe maintain` is run until it finds
nothing to compact; its CPU time (user + system, from the kernel's accounting of the child)
gives the compaction rate in MB of input per CPU-second.
Results go to bench/results/<date>-compaction.json and are printed. No assertion.
"""
from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import pathlib
import re
import resource
import shutil
import statistics
import subprocess
import sys
import time

import yaml

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "integration"))

from pyiceberg.catalog.sql import SqlCatalog  # noqa: E402

from test_core import duckdb_connect  # noqa: E402


def timed(fn, repeat: int) -> dict:
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return {"median_s": statistics.median(times), "min_s": min(times), "max_s": max(times)}


def measure(cat: SqlCatalog, repeat: int) -> dict:
    t = cat.load_table("kafka.soak")
    metadata = t.metadata_location
    root = t.metadata.location.removeprefix("file://")
    con = duckdb_connect()
    con.execute("LOAD iceberg")
    con.execute("LOAD delta")
    files = len(list(t.scan().plan_files()))
    rows = con.execute(f"SELECT count(*) FROM iceberg_scan('{metadata}')").fetchone()[0]
    return {
        "live_files": files,
        "rows": rows,
        "pyiceberg_plan": timed(lambda: list(t.scan().plan_files()), repeat),
        "pyiceberg_scan": timed(lambda: t.scan().to_arrow(), repeat),
        "duckdb_iceberg_scan": timed(
            lambda: con.execute(f"SELECT * FROM iceberg_scan('{metadata}')").fetch_arrow_table(),
            repeat),
        "duckdb_delta_scan": timed(
            lambda: con.execute(f"SELECT * FROM delta_scan('{root}')").fetch_arrow_table(),
            repeat),
    }


def children_cpu_s() -> float:
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--floe", required=True, help="the floe binary (a release build)")
    ap.add_argument("--commits", type=int, default=3600)
    ap.add_argument("--records", type=int, default=100, help="per commit")
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args()
    floe = pathlib.Path(args.floe).resolve()
    soak = floe.parents[3] / "tools" / "maintenance_soak" / "floe_maintenance_soak"
    work = ROOT / "build" / "bench-work" / "compaction"
    shutil.rmtree(work, ignore_errors=True)
    wh = work / "warehouse"
    wh.mkdir(parents=True)
    db = work / "catalog.db"

    t0 = time.monotonic()
    subprocess.run([str(soak), "--warehouse", str(wh), "--catalog", str(db), "--commits",
                    str(args.commits), "--records", str(args.records), "--maintain-every", "0",
                    "--retention-ms", str(args.commits * 1000)],
                   check=True, stdout=subprocess.DEVNULL)
    print(f"[bench] {args.commits} commits of {args.records} records in "
          f"{time.monotonic() - t0:.0f} s", flush=True)
    cat = SqlCatalog("floe", uri=f"sqlite:///{db}", warehouse=f"file://{wh}")
    before = measure(cat, args.repeat)
    print(f"[bench] before: {json.dumps(before)}", flush=True)

    config = work / "floe.yaml"
    config.write_text(yaml.safe_dump({
        "kafka": {"bootstrap.servers": "127.0.0.1:9"},
        "warehouse": str(wh),
        "catalog": {"type": "sqlite", "uri": str(db), "name": "floe"},
    }, sort_keys=False))
    bytes_in = 0
    passes = 0
    rewrite_cpu_s = 0.0
    cpu0 = children_cpu_s()
    wall0 = time.monotonic()
    while passes < 100:
        r = subprocess.run([str(floe), "maintain", "--config", str(config)],
                           capture_output=True, text=True, check=True)
        m = re.search(r"compaction rewrote (\d+) small files of \d+ \((\d+) bytes\).* in "
                      r"(\d+) CPU-ms", r.stdout)
        if not m:
            break
        passes += 1
        bytes_in += int(m.group(2))
        rewrite_cpu_s += int(m.group(3)) / 1000
    cpu = children_cpu_s() - cpu0
    wall = time.monotonic() - wall0
    after = measure(cat, args.repeat)
    print(f"[bench] after: {json.dumps(after)}", flush=True)

    def ratio(key: str) -> float:
        return before[key]["median_s"] / after[key]["median_s"]

    out = {
        "date": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
        "commits": args.commits, "records_per_commit": args.records,
        "before": before, "after": after,
        "speedup": {k: ratio(k) for k in ("pyiceberg_plan", "pyiceberg_scan",
                                          "duckdb_iceberg_scan", "duckdb_delta_scan")},
        # cpu_s: every `floe maintain` process (start-up, expiry, orphan listing and
        # references included); rewrite_cpu_s: compaction's own (choose, rewrite, commit).
        "compaction": {"passes": passes, "input_bytes": bytes_in, "cpu_s": cpu, "wall_s": wall,
                       "rewrite_cpu_s": rewrite_cpu_s,
                       "mb_per_cpu_s": bytes_in / 1e6 / rewrite_cpu_s if rewrite_cpu_s else None,
                       "mb_per_maintain_cpu_s": bytes_in / 1e6 / cpu if cpu > 0 else None},
    }
    results = ROOT / "bench" / "results"
    results.mkdir(exist_ok=True)
    path = results / f"{dt.date.today().isoformat()}-compaction.json"
    path.write_text(json.dumps(out, indent=2) + "\n")
    for k, v in out["speedup"].items():
        print(f"[bench] {k}: {before[k]['median_s']:.3f} s -> {after[k]['median_s']:.3f} s "
              f"({v:.1f}x)")
    print(f"[bench] compaction: {bytes_in / 1e6:.1f} MB in {rewrite_cpu_s:.2f} CPU-s "
          f"({out['compaction']['mb_per_cpu_s']:.1f} MB per CPU-second); the whole of "
          f"`floe maintain` {cpu:.2f} CPU-s, {passes} passes")
    print(f"[bench] results: {path.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
