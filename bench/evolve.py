"""`make bench`, schema evolution cost (issue 16): W1 with a schema change every 500,000
records against plain W1, on the same machine in the same invocation.

Three topics are preloaded with the same W1 records (bench/run.py): `w1` with one schema;
`w1e` where record i is written with version 1 + i // 500,000 of the W1 schema, each version
adding one nullable field (`extra_1`, `extra_2`, ...) at the end; the new fields are null, so a
version-k payload is the version-1 body plus k null-branch bytes; and `w1w`, every record with
the last version's schema (nine more null fields) and no change at all. Floe evolves the
table at each new version of `w1e` (a schema-only commit, the rows before it committed with
the old schema, decoders compiled for the new id). `w1w` separates what the changes cost from
what a wider table costs. Each round runs the three once, in an order that rotates from
round to round (w1 w1e w1w, then w1e w1w w1, then w1w w1 w1e), so that neither a drift of the
machine's speed nor a place in the round favours one; reported: records per Floe CPU-second of each run, the medians, the
per-round ratios to w1, and the schema count of the evolved table.
Results go to bench/results/<date>-w1-evolve.json. No assertion: the issue's target (within
5% of the run without changes) is printed as met / not met from the median pair ratio.
"""
from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import pathlib
import shutil
import statistics
import sys

import run as bench  # bench/run.py

from harness import procs  # noqa: E402
from harness.kafka import start_kafka  # noqa: E402
from harness.registry import start_registry  # noqa: E402


# One run of each in every round (the order rotates): plain W1, W1 with a schema change every
# 500,000 records, and W1 at the last version's width (nine more nullable fields) without a
# change.
WORKLOADS = ("w1", "w1e", "w1w")


def table_schemas(run_dir: pathlib.Path) -> int:
    """The number of schemas in the newest metadata file of the run's table."""
    newest = max((run_dir / "warehouse").rglob("*.metadata.json"), key=lambda f: f.stat().st_mtime)
    return len(json.loads(newest.read_text())["schemas"])


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--floe", required=True)
    ap.add_argument("--records", type=int, default=0,
                    help="records per topic (default $FLOE_BENCH_RECORDS, else 5,000,000)")
    ap.add_argument("--pairs", type=int, default=6,
                    help="rounds (one run of each topic; default 6: each order twice)")
    args = ap.parse_args()
    n = args.records or int(os.environ.get("FLOE_BENCH_RECORDS", 0)) or 5_000_000
    os.environ["FLOE_BUILD_DIR"] = str(pathlib.Path(args.floe).resolve().parents[3])
    work = bench.ROOT / "build" / "bench-work"
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    try:
        kafka = start_kafka(work / "kafka")
        registry = start_registry(work)
        topics = {}
        for workload in WORKLOADS:
            topic, _, hwm, size = bench.prepare(kafka, registry, workload, n)
            topics[topic] = (hwm, size)
        versions = (n - 1) // bench.W1E_EVERY + 1
        runs = {t: [] for t in WORKLOADS}
        schemas = 0
        for i in range(args.pairs):
            for topic in WORKLOADS[i % 3:] + WORKLOADS[:i % 3]:
                hwm, size = topics[topic]
                r = bench.one_run(kafka, registry.url, topic, work / f"{topic}-{i}", hwm, size,
                                  ["iceberg"])
                r.pop("timeline", None)
                runs[topic].append(r)
                print(f"[bench] round {i + 1} {topic}: {r['records_per_cpu_s']:,.0f} "
                      f"records/CPU-s", flush=True)
                if topic == "w1e":
                    schemas = table_schemas(work / f"{topic}-{i}")
        med = {t: statistics.median(r["records_per_cpu_s"] for r in rs) for t, rs in runs.items()}

        def ratios(a: str, b: str) -> dict:
            rs = [x["records_per_cpu_s"] / y["records_per_cpu_s"]
                  for x, y in zip(runs[a], runs[b])]
            return {"median": statistics.median(rs), "range": [min(rs), max(rs)], "each": rs}

        evolving, wide = ratios("w1e", "w1"), ratios("w1w", "w1")
        out = {"date": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
               "machine": bench.machine(), "floe": str(pathlib.Path(args.floe)),
               "records": n, "schema_change_every": bench.W1E_EVERY, "schema_versions": versions,
               "evolved_table_schemas": schemas, "runs": runs,
               "median_records_per_cpu_s": med,
               "round_ratio_w1e_to_w1": evolving, "round_ratio_w1w_to_w1": wide}
        res = bench.ROOT / "bench" / "results"
        res.mkdir(exist_ok=True)
        path = res / f"{dt.date.today().isoformat()}-w1-evolve.json"
        path.write_text(json.dumps(out, indent=2))
        verdict = "met" if evolving["median"] >= 0.95 else "not met"
        print(f"[bench] W1 {n} records, {versions} schema versions (a change every "
              f"{bench.W1E_EVERY:,}), table schemas {schemas}: medians w1 {med['w1']:,.0f}, "
              f"w1e {med['w1e']:,.0f}, w1w {med['w1w']:,.0f} records/CPU-s; w1e/w1 per round "
              f"median {evolving['median']:.3f} (range {evolving['range'][0]:.3f}-"
              f"{evolving['range'][1]:.3f}), within 5%: {verdict}; w1w/w1 (the last version's "
              f"width, no change) {wide['median']:.3f} → {path}")
        return 0
    finally:
        procs.kill_all()


if __name__ == "__main__":
    sys.exit(main())
