"""`make bench`, issue 20: what background compaction costs ingestion.

W1 at a steady load (a fraction of the day's drain rate, 1 s commits, 16 partitions,
bench/freshness.py's producer and poller), run with maintenance off (`maintenance.interval.ms:
0`) and on (a pass every --maintenance-ms, default compaction settings, cpu.percent 25),
alternating off/on so that both see the same machine state. Reported per mode: records per Floe
CPU-second over the whole run (compaction runs in a thread of the Floe process, so its CPU is
in it), freshness p99 after the first 10 s, peak RSS and the compactions the log records; the
median run of --runs with the range of all, and the ingest cost = 1 - on / off of the median
records per CPU-second. Then the compaction rate: `floe maintain` once over each "off" run's
table (large row groups: copied by row group) and over one more run's table ingested with
`compaction.copy.row.group.bytes: 0` (every file decoded and written again), reporting the
rewrite's own MB per CPU-second (the CPU-ms `floe maintain` prints) and the command's peak
RSS. Results go to bench/results/<date>-maintenance-cost.json. No assertion.

Usage: bench/maintenance_cost.py --floe build/release/src/floe/cli/floe [--seconds 90]
           [--maintenance-ms 15000] [--runs 3] [--fraction 0.5 | --rate N]
"""
from __future__ import annotations

import argparse
import datetime as dt
import json
import pathlib
import re
import statistics
import subprocess
import sys
import time

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "integration"))
sys.path.insert(0, str(ROOT / "bench"))

from harness import procs  # noqa: E402
from harness.kafka import start_kafka  # noqa: E402
from harness.registry import start_registry  # noqa: E402
from freshness import W1Pool, fresh_workdir, measure_drain, one_interval  # noqa: E402
from run import machine  # noqa: E402


def summarize(runs: list[dict]) -> dict:
    def stat(key):
        values = sorted(key(r) for r in runs)
        return {"median": statistics.median(values), "min": values[0], "max": values[-1]}
    return {"records_per_cpu_s": stat(lambda r: r["records_per_cpu_s"]),
            "p99_after_10s_s": stat(lambda r: r["after_10s"]["p99_s"]),
            "max_after_10s_s": stat(lambda r: r["after_10s"]["max_s"]),
            "peak_rss_mib": stat(lambda r: r["peak_rss_mib"]),
            "compactions": stat(lambda r: r["compactions"]),
            "sustained_rate": stat(lambda r: r["sustained_rate"])}


def maintain_rate(floe: str, config: pathlib.Path) -> dict:
    """One `floe maintain` over `config`'s tables: compaction's bytes, CPU and peak RSS."""
    out = config.parent / "maintain.out"
    # Peak RSS from the process's own VmHWM, polled: a child's rusage maxrss starts from
    # this (large) Python process's RSS at fork, so wait4's figure is this process's.
    hwm_kib = 0
    with open(out, "w") as f:
        proc = subprocess.Popen([floe, "maintain", "--config", str(config)], stdout=f,
                                stderr=subprocess.STDOUT)
        while proc.poll() is None:
            try:
                for line in pathlib.Path(f"/proc/{proc.pid}/status").read_text().splitlines():
                    if line.startswith("VmHWM:"):
                        hwm_kib = max(hwm_kib, int(line.split()[1]))
            except (FileNotFoundError, ProcessLookupError):
                pass
            time.sleep(0.01)
    text = out.read_text()
    m = re.search(r"compaction rewrote (\d+) small files of \d+ \((\d+) bytes\) into (\d+) "
                  r"files \((\d+) bytes, (\d+) rows; (\d+) inputs copied by row group\) in "
                  r"(\d+) CPU-ms", text)
    if proc.returncode != 0 or not m:
        raise RuntimeError(f"floe maintain gave no compaction:\n{text}")
    files, bytes_in, written, bytes_out, rows, copied, cpu_ms = map(int, m.groups())
    return {"files": files, "bytes_in": bytes_in, "written": written, "bytes_out": bytes_out,
            "rows": rows, "copied": copied, "cpu_ms": cpu_ms,
            "mb_per_cpu_s": bytes_in / 1e6 / max(cpu_ms / 1000, 1e-3),
            "peak_rss_mib": hwm_kib / 1024}


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--floe", required=True)
    ap.add_argument("--seconds", type=float, default=90.0)
    ap.add_argument("--maintenance-ms", type=int, default=15000,
                    help="maintenance.interval.ms of the 'on' runs")
    ap.add_argument("--runs", type=int, default=3, help="runs per mode")
    ap.add_argument("--fraction", type=float, default=0.5)
    ap.add_argument("--rate", type=int, default=0)
    ap.add_argument("--drain-records", type=int, default=2_000_000)
    args = ap.parse_args()
    work = fresh_workdir(args.floe, "bench-maint")
    try:
        kafka = start_kafka(work / "kafka")
        registry = start_registry(work)
        rate = args.rate
        drain = None
        if not rate:
            drain = measure_drain(kafka, registry, work, args.drain_records)
            rate = int(args.fraction * drain)
            print(f"[maint] drain rate {drain:,.0f} records/s; steady load {rate:,} records/s",
                  flush=True)
        from confluent_kafka.schema_registry import SchemaRegistryClient
        pool = W1Pool(SchemaRegistryClient({"url": registry.url}), work / "w1.pool")
        loadgen = str(pathlib.Path(args.floe).resolve().parents[3] / "tools" / "loadgen" /
                      "floe_loadgen")
        modes = {"off": {"maintenance": {"interval.ms": 0}},
                 "on": {"maintenance": {"interval.ms": args.maintenance_ms}}}
        runs: dict[str, list] = {m: [] for m in modes}
        for i in range(args.runs):
            for mode, extra in modes.items():
                name = f"{mode}{i}"
                pool.register(f"fresh{name}")
                r = one_interval(kafka, registry.url, loadgen, pool.path, 1000, rate, args.seconds,
                                 work, name, extra=extra)
                print(f"[maint] run {i + 1}, maintenance {mode}: "
                      f"{r['records_per_cpu_s']:,.0f} records/CPU-s, p99 after 10 s "
                      f"{r['after_10s']['p99_s']:.3f} s (max {r['after_10s']['max_s']:.3f} s), "
                      f"peak RSS {r['peak_rss_mib']:.0f} MiB, {r['compactions']} compactions",
                      flush=True)
                for k in ("per_partition_after_10s",):
                    r.pop(k, None)
                runs[mode].append(r)
        # The compaction rate: each "off" table (files of one large row group: copied), and
        # one more table ingested with copying off (every file decoded and re-encoded).
        rates = {"copy": [maintain_rate(args.floe, work / f"freshoff{i}" / "floe.yaml")
                          for i in range(args.runs)]}
        pool.register("freshdecode0")
        one_interval(kafka, registry.url, loadgen, pool.path, 1000, rate, args.seconds / 2, work,
                     "decode0", extra={"maintenance": {"interval.ms": 0},
                                       "defaults": {"commit.interval.ms": 1000,
                                                    "compaction.copy.row.group.bytes": 0}})
        rates["decode"] = [maintain_rate(args.floe, work / "freshdecode0" / "floe.yaml")]
        for kind, rs in rates.items():
            for r in rs:
                print(f"[maint] compaction ({kind}): {r['files']} files, {r['bytes_in']:,} bytes "
                      f"({r['copied']} copied) in {r['cpu_ms']} CPU-ms: "
                      f"{r['mb_per_cpu_s']:,.1f} MB per CPU-second, peak RSS "
                      f"{r['peak_rss_mib']:.0f} MiB", flush=True)
        summary = {m: summarize(rs) for m, rs in runs.items()}
        cost = 1 - (summary["on"]["records_per_cpu_s"]["median"] /
                    summary["off"]["records_per_cpu_s"]["median"])
        out = {"date": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
               "machine": machine(), "floe": args.floe,
               "workload": "W1 Avro, steady load, 1 s commits, 16 partitions",
               "drain_rate": drain, "rate": rate, "seconds": args.seconds,
               "maintenance_interval_ms": args.maintenance_ms,
               "summary": summary, "ingest_cost": cost, "runs": runs,
               "compaction_rate": {k: {"median_mb_per_cpu_s":
                                       statistics.median(r["mb_per_cpu_s"] for r in rs),
                                       "runs": rs} for k, rs in rates.items()}}
        path = ROOT / "bench" / "results" / f"{dt.date.today().isoformat()}-maintenance-cost.json"
        path.write_text(json.dumps(out, indent=2))
        for m, s in summary.items():
            print(f"[maint] maintenance {m}: median {s['records_per_cpu_s']['median']:,.0f} "
                  f"records/CPU-s ({s['records_per_cpu_s']['min']:,.0f}-"
                  f"{s['records_per_cpu_s']['max']:,.0f}), p99 "
                  f"{s['p99_after_10s_s']['median']:.3f} s ({s['p99_after_10s_s']['min']:.3f}-"
                  f"{s['p99_after_10s_s']['max']:.3f}), compactions "
                  f"{s['compactions']['median']:.0f}")
        print(f"[maint] ingest cost of compaction: {cost:.1%} → {path}")
        return 0
    finally:
        procs.kill_all()


if __name__ == "__main__":
    sys.exit(main())
