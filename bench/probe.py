"""Machine-speed probe (issue 17, item 3): a fixed CPU-bound job, timed in CPU seconds, that
`make bench` runs before and after the suite, so every figure can be read beside the speed
of the machine on the day it was measured.

The job is what dominates Floe's own profile, through the same libraries Floe links (the
pinned pyarrow wheel's Arrow, Parquet and zstd):
  - zstd level 1 over a fixed 32 MiB buffer of seeded, W1-like text;
  - a fixed Parquet encode (dictionary, statistics, zstd level 1) of a seeded 400,000-row
    table with W1's column types.
Each part runs REPEATS times; the probe keeps each part's median and its spread. The score
is REFERENCE_S / today's seconds: 1.0 on the reference day, 1.10 on a machine (or a day)
10% faster. A "normalized" figure is the measured figure divided by the score.

    .venv/bin/python bench/probe.py [--tag before|after]

Writes bench/results/<date>-probe[-tag].json and prints one line.
"""
from __future__ import annotations

import argparse
import datetime as dt
import io
import json
import pathlib
import random
import statistics
import time

import pyarrow as pa
import pyarrow.parquet as pq

ROOT = pathlib.Path(__file__).resolve().parents[1]
REPEATS = 5
# Median CPU seconds of each part on the reference day: the median of three probes on
# 2026-12-04 (this 2-core AMD EPYC machine, nothing else running; zstd 95-112 ms, Parquet
# 199-226 ms: the machine itself moves by about ±10%). Changing the job means measuring
# these again.
REFERENCE_S = {"zstd": 0.102, "parquet": 0.202}


def _text(n_bytes: int) -> bytes:
    rnd = random.Random(1234)
    words = ["alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel",
             "street", "ville", "sku", "user", "example.com", "PAID", "NEW", "EUR"]
    out = io.BytesIO()
    while out.tell() < n_bytes:
        out.write(" ".join(rnd.choices(words, k=12)).encode())
        out.write(f" {rnd.randrange(10**9)} {rnd.random():.6f}\n".encode())
    return out.getvalue()[:n_bytes]


def _table(rows: int) -> pa.Table:
    rnd = random.Random(99)
    words = ["alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel"]
    customers = [" ".join(rnd.choices(words, k=3)) for _ in range(4096)]
    return pa.table({
        "order_id": pa.array(range(rows), pa.int64()),
        "customer_id": pa.array([rnd.randrange(1 << 40) for _ in range(rows)], pa.int64()),
        "customer": pa.array([customers[rnd.randrange(4096)] for _ in range(rows)]),
        "email": pa.array([f"user{rnd.randrange(10**6)}@example.com" for _ in range(rows)]),
        "note": pa.array([None if i % 5 == 0 else " ".join(rnd.choices(words, k=8))
                          for i in range(rows)]),
        "score": pa.array([rnd.random() for _ in range(rows)], pa.float64()),
        "created_at": pa.array([1_796_083_200_000_000 + 50 * i for i in range(rows)],
                               pa.timestamp("us", tz="UTC")),
    })


def _cpu(fn) -> float:
    t0 = time.process_time()
    fn()
    return time.process_time() - t0


def probe(repeats: int = REPEATS) -> dict:
    text = _text(32 << 20)
    codec = pa.Codec("zstd", compression_level=1)
    table = _table(400_000)

    def zstd():
        codec.compress(text)

    def parquet():
        pq.write_table(table, io.BytesIO(), compression="zstd", compression_level=1,
                       use_dictionary=True, write_statistics=True)

    parts = {}
    for name, fn in (("zstd", zstd), ("parquet", parquet)):
        fn()  # warm-up: page faults and first-call setup are not the machine's speed
        runs = [_cpu(fn) for _ in range(repeats)]
        parts[name] = {"median_cpu_s": statistics.median(runs),
                       "range_cpu_s": [min(runs), max(runs)], "runs": runs}
    ratios = [REFERENCE_S[n] / parts[n]["median_cpu_s"] for n in parts if REFERENCE_S[n] > 0]
    score = statistics.mean(ratios) if ratios else None
    return {"parts": parts, "score": score, "reference_s": REFERENCE_S}


def describe(p: dict) -> str:
    parts = ", ".join(f"{n} {v['median_cpu_s'] * 1000:.0f} ms "
                      f"({v['range_cpu_s'][0] * 1000:.0f}-{v['range_cpu_s'][1] * 1000:.0f})"
                      for n, v in p["parts"].items())
    score = "no reference" if p["score"] is None else f"score {p['score']:.3f}"
    return f"machine probe: {parts}; {score} (1.0 = the reference day)"


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--tag", default="", help="before | after (the suite)")
    args = ap.parse_args()
    p = probe()
    p["date"] = dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds")
    res = ROOT / "bench" / "results"
    res.mkdir(exist_ok=True)
    tag = f"-{args.tag}" if args.tag else ""
    path = res / f"{dt.date.today().isoformat()}-probe{tag}.json"
    path.write_text(json.dumps(p, indent=2))
    print(f"[bench] {describe(p)} → {path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
