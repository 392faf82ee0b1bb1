"""W4 side by side (issue 6 item 5): Floe, the Apache Iceberg Kafka Connect sink and a
straightforward pyiceberg consumer drain the same preloaded W4 JSON topic into the same kind of
catalog (local SQLite), zstd Parquet, the same commit interval; prints Floe's ratio to each
peer in records per CPU-second and writes bench/results/<date>-w4-peers.json.

    .venv/bin/python bench/peers.py --floe build/release/src/floe/cli/floe --records 2000000
    .venv/bin/python bench/peers.py --peers connect            # one peer, no Floe

How each peer is assembled and run: bench/peers/README.md. Each process is measured alone
(one after the other, never concurrently), from its start to the commit that makes its table
hold every record; `after_warmup` repeats the rate without the first 30 s. A peer that cannot
be assembled or run is recorded with its error instead of numbers.
"""
from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import pathlib
import shutil
import sys
import traceback

HERE = pathlib.Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT / "tests" / "integration"))
sys.path.insert(0, str(HERE / "peers"))

import run as bench  # noqa: E402  (bench/run.py)
import w4  # noqa: E402
from harness import procs  # noqa: E402
from harness.kafka import start_kafka  # noqa: E402
from harness.registry import start_registry  # noqa: E402

PEERS = ("connect", "pyiceberg")


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--floe", help="the floe binary; without it only the peers run")
    ap.add_argument("--peers", default=",".join(PEERS), help="comma-separated: connect,pyiceberg")
    # 3M records keep the Connect sink busy for more than the 2 minutes.
    ap.add_argument("--records", type=int, default=3_000_000)
    ap.add_argument("--commit-interval-ms", type=int, default=10_000)
    ap.add_argument("--runs", type=int, default=3,
                    help="runs per system; each is reported by its median run (records per "
                         "CPU-second), with every run kept in the results")
    args = ap.parse_args()
    peers = [p for p in args.peers.split(",") if p]
    assert all(p in PEERS for p in peers), peers
    if args.floe:
        os.environ["FLOE_BUILD_DIR"] = str(pathlib.Path(args.floe).resolve().parents[3])
    work = ROOT / "build" / "bench-peers-work"
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    results: dict[str, dict] = {}
    try:
        kafka = start_kafka(work / "kafka")
        registry = start_registry(work)
        topic, topic_config, hwm, input_bytes = bench.prepare(kafka, registry, "w4", args.records)
        n = sum(hwm.values())
        schema = w4.iceberg_schema()
        if args.floe:
            runs = []
            for i in range(args.runs):
                print(f"[peers] Floe, run {i + 1}/{args.runs} ...", flush=True)
                r = bench.one_run(kafka, registry.url, topic, work / f"floe{i}", hwm, input_bytes,
                                  ["iceberg"], topic_config, args.commit_interval_ms)
                r["binary"] = args.floe
                report("floe", r)
                runs.append(r)
            results["floe"] = median_run(runs)
        for peer in peers:
            mod = __import__("kafka_connect" if peer == "connect" else "pyiceberg_sink")
            runs = []
            for i in range(args.runs):
                print(f"[peers] {peer}, run {i + 1}/{args.runs} ...", flush=True)
                try:
                    r = mod.run(kafka, topic, n, input_bytes, schema, work / f"{peer}{i}",
                                args.commit_interval_ms)
                except Exception as e:  # recorded, not raised: the other peers still run
                    r = {"error": str(e), "traceback": traceback.format_exc(limit=3)}
                    print(f"[peers] {peer} failed:\n{e}", flush=True)
                    results[peer] = r
                    break
                report(peer, r)
                runs.append(r)
            else:
                results[peer] = median_run(runs)
    finally:
        procs.kill_all()

    ratios = {}
    if "records_per_cpu_s" in results.get("floe", {}):
        f = results["floe"]
        for peer in peers:
            p = results.get(peer, {})
            if "records_per_cpu_s" in p:
                ratios[peer] = {"whole_run": f["records_per_cpu_s"] / p["records_per_cpu_s"]}
                if p.get("after_warmup") and f.get("after_warmup"):
                    ratios[peer]["after_30s"] = (f["after_warmup"]["records_per_cpu_s"] /
                                                 p["after_warmup"]["records_per_cpu_s"])
                print(f"[peers] Floe / {peer}: {ratios[peer]['whole_run']:.2f}x records per "
                      f"CPU-second" + (f" ({ratios[peer]['after_30s']:.2f}x after the first 30 s)"
                                       if "after_30s" in ratios[peer] else ""))
    out = {"date": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
           "machine": bench.machine(),
           "workload": {"name": "W4 JSON", "records": n, "avg_record_bytes": input_bytes / n,
                        "partitions": len(hwm), "commit_interval_ms": args.commit_interval_ms,
                        "catalog": "SQLite (Iceberg JDBC catalog layout)", "codec": "zstd"},
           "versions": versions(), "results": results, "floe_ratio_per_cpu_s": ratios}
    res_dir = HERE / "results"
    res_dir.mkdir(exist_ok=True)
    path = res_dir / f"{dt.date.today().isoformat()}-w4-peers.json"
    path.write_text(json.dumps(out, indent=2))
    print(f"[peers] → {path}")
    return 0


def median_run(runs: list[dict]) -> dict:
    """The run with the median records per CPU-second, carrying every run's figures."""
    ordered = sorted(runs, key=lambda r: r["records_per_cpu_s"])
    med = dict(ordered[len(ordered) // 2])
    med["runs"] = [{k: r.get(k) for k in ("records_per_cpu_s", "cpu_s", "wall_s", "peak_rss_mib",
                                          "after_warmup")} for r in runs]
    return med


def versions() -> dict:
    import re
    import subprocess
    import confluent_kafka
    import pyarrow
    import pyiceberg
    pom = (HERE / "peers" / "pom.xml").read_text()
    java = subprocess.run(["java", "-version"], capture_output=True, text=True).stderr
    return {"kafka_connect": re.search(r"<kafka.version>(.*?)<", pom).group(1),
            "iceberg_kafka_connect": re.search(r"<iceberg.version>(.*?)<", pom).group(1),
            "java": java.splitlines()[0] if java else None,
            "pyiceberg": pyiceberg.__version__, "pyarrow": pyarrow.__version__,
            "confluent_kafka": confluent_kafka.__version__}


def report(name: str, r: dict) -> None:
    aw = r.get("after_warmup")
    print(f"[peers] {name}: {r['records']:,} records, {r['records_per_cpu_s']:,.0f} records/CPU-s "
          f"({r['cpu_s']:.1f} CPU-s, {r['wall_s']:.1f} s wall, peak RSS {r['peak_rss_mib']:.0f} MiB)"
          + (f"; after the first 30 s: {aw['records_per_cpu_s']:,.0f} records/CPU-s" if aw else ""),
          flush=True)


if __name__ == "__main__":
    sys.exit(main())
