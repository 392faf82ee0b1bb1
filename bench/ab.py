"""Interleaved A/B: two Floe binaries drain the same preloaded topic in alternating runs
(A, B, A, B, ...), so the machine's drift within the hour hits both alike. Reports each
binary's records per Floe CPU-second (median, min-max) and the ratio of the medians.

    .venv/bin/python bench/ab.py --a OLD/floe --b NEW/floe [--workload w1|w4]
                                 [--records N] [--pairs 5]

Results go to bench/results/<date>-ab[-w4].json. Measures, never asserts.
"""
from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import pathlib
import statistics
import subprocess
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))

import run as bench  # noqa: E402

from harness import procs  # noqa: E402
from harness.kafka import start_kafka  # noqa: E402
from harness.registry import start_registry  # noqa: E402


def Describe(binary: pathlib.Path) -> str:
    """The binary as "<commit of its tree>:<path in the tree>": results name no machine path."""
    tree = binary.parents[5]  # <tree>/build/<preset>/src/floe/cli/floe
    commit = subprocess.run(["git", "-C", str(tree), "rev-parse", "--short", "HEAD"],
                            capture_output=True, text=True).stdout.strip() or "unknown"
    return f"{commit}:{binary.relative_to(tree)}"


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--a", required=True, help="the floe binary before the change")
    ap.add_argument("--b", required=True, help="the floe binary after the change")
    ap.add_argument("--workload", choices=sorted(bench.WORKLOADS), default="w1")
    ap.add_argument("--records", type=int, default=2_000_000)
    ap.add_argument("--pairs", type=int, default=5)
    args = ap.parse_args()
    binaries = {"a": pathlib.Path(args.a).resolve(), "b": pathlib.Path(args.b).resolve()}
    work = bench.ROOT / "build" / "bench-work-ab"
    if work.exists():
        import shutil
        shutil.rmtree(work)
    work.mkdir(parents=True)
    rates: dict[str, list[float]] = {"a": [], "b": []}
    try:
        kafka = start_kafka(work / "kafka")
        registry = start_registry(work)
        topic, topic_config, hwm, input_bytes = bench.prepare(kafka, registry, args.workload,
                                                              args.records)
        for i in range(args.pairs):
            for side in ("a", "b") if i % 2 == 0 else ("b", "a"):
                os.environ["FLOE_BUILD_DIR"] = str(binaries[side].parents[3])
                r = bench.one_run(kafka, registry.url, topic, work / f"run{i}{side}", hwm,
                                  input_bytes, ["iceberg"], topic_config)
                rates[side].append(r["records_per_cpu_s"])
                print(f"[ab] pair {i + 1} {side}: {r['records_per_cpu_s']:,.0f} records/CPU-s",
                      flush=True)
    finally:
        procs.kill_all()
    summary = {side: {"binary": Describe(binaries[side]), "runs": v,
                      "median": statistics.median(v), "min": min(v), "max": max(v)}
               for side, v in rates.items()}
    ratio = summary["b"]["median"] / summary["a"]["median"]
    out = {"date": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
           "workload": args.workload, "records": args.records, "pairs": args.pairs,
           "a": summary["a"], "b": summary["b"], "b_over_a": ratio}
    res = bench.ROOT / "bench" / "results"
    res.mkdir(exist_ok=True)
    tag = "" if args.workload == "w1" else "-" + args.workload
    path = res / f"{dt.date.today().isoformat()}-ab{tag}.json"
    path.write_text(json.dumps(out, indent=2))
    for side in ("a", "b"):
        s = summary[side]
        print(f"[ab] {side}: median {s['median']:,.0f} records/CPU-s "
              f"(min {s['min']:,.0f}, max {s['max']:,.0f}) {s['binary']}")
    print(f"[ab] b/a = {ratio:.3f} → {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
