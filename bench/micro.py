"""Microbenchmarks (issue 6, item 2), Google Benchmark: each decoder into Arrow (Protobuf also
against a DynamicMessage baseline), a manifest encoded and written, and one commit through the
production Committer (src/floe/table/commit_benchmark.cc), and the Parquet file write.
Runs the release binaries and writes bench/results/<date>-micro.json with, per benchmark,
records/s (data files/s for manifests and commits), commits/s, bytes/s and CPU time per
operation.

Usage: bench/micro.py [--build build/release]
"""
from __future__ import annotations

import argparse
import datetime as dt
import json
import pathlib
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))

from run import machine  # noqa: E402

GOOGLE = [("decode", "avro_decoder_benchmark"), ("decode", "protobuf_decoder_benchmark"),
          ("decode", "json_decoder_benchmark"), ("parquet", "floe_parquet_writer_benchmark"),
          ("table", "commit_benchmark")]


def google_benchmark(binary: pathlib.Path) -> list[dict]:
    out = subprocess.run([str(binary), "--benchmark_format=json",
                          "--benchmark_min_time=1"], capture_output=True, text=True,
                         check=True).stdout
    rows = []
    for b in json.loads(out)["benchmarks"]:
        scale = {"ns": 1e-6, "us": 1e-3, "ms": 1.0, "s": 1e3}[b.get("time_unit", "ns")]
        rows.append({"name": b["name"], "records_per_s": b.get("items_per_second"),
                     "bytes_per_s": b.get("bytes_per_second"),
                     "commits_per_s": b.get("commits_per_s"),
                     "cpu_ms_per_op": b["cpu_time"] * scale,
                     "record_bytes": b.get("record_bytes")})
    return rows


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default=str(ROOT / "build" / "release"))
    args = ap.parse_args()
    build = pathlib.Path(args.build)
    results = []
    for module, name in GOOGLE:
        binary = build / "src" / "floe" / module / name
        if not binary.exists():
            print(f"[micro] {binary} missing (Google Benchmark not found at configure time?)")
            continue
        results += google_benchmark(binary)
    for r in results:
        rps, bps, cps = r.get("records_per_s"), r.get("bytes_per_s"), r.get("commits_per_s")
        print(f"[micro] {r['name']}: "
              + (f"{rps:,.0f} records/s" if rps else "")
              + (f", {cps:,.1f} commits/s" if cps else "")
              + (f", {bps / 1e6:,.1f} MB/s" if bps else ""))
    path = ROOT / "bench" / "results" / f"{dt.date.today().isoformat()}-micro.json"
    path.write_text(json.dumps({"date": dt.datetime.now(dt.timezone.utc).isoformat(
        timespec="seconds"), "machine": machine(), "results": results}, indent=2))
    print(f"[micro] → {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
