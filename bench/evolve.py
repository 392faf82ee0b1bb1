"""`make bench`, schema evolution cost (issue 16): W1 with a schema change every 500,000
records against plain W1, on the same machine in the same invocation.

Two topics are preloaded with the same W1 records (bench/run.py): `w1` with one schema, and
`w1e` where record i is written with version 1 + i // 500,000 of the W1 schema, each version
adding one nullable field (`extra_1`, `extra_2`, ...) at the end; the new fields are null, so a
version-k payload is the version-1 body plus k null-branch bytes. Floe evolves the table at
each new version (a schema-only commit, the rows before it committed with the old schema,
decoders compiled for the new id). Runs alternate (plain, evolving, plain, ...) so a drift of
the machine's speed hits both alike; reported: records per Floe CPU-second of each run, the
medians, the ratio of medians and of each pair, and the schema count of the evolved table.
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
from harness.floe import default_table_name  # noqa: E402
from harness.kafka import start_kafka  # noqa: E402
from harness.registry import start_registry  # noqa: E402

EVERY = 500_000


def schema_version(k: int) -> dict:
    """W1 with `k` extra nullable string fields at the end (version 1 + k)."""
    extra = [{"name": f"extra_{j}", "type": ["null", "string"], "default": None}
             for j in range(1, k + 1)]
    return {**bench.W1_SCHEMA, "fields": bench.W1_SCHEMA["fields"] + extra}


def table_schemas(run_dir: pathlib.Path) -> int:
    """The number of schemas in the newest metadata file of the run's table."""
    newest = max((run_dir / "warehouse").rglob("*.metadata.json"), key=lambda f: f.stat().st_mtime)
    return len(json.loads(newest.read_text())["schemas"])


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--floe", required=True)
    ap.add_argument("--records", type=int, default=0,
                    help="records per topic (default $FLOE_BENCH_RECORDS, else 5,000,000)")
    ap.add_argument("--pairs", type=int, default=5)
    args = ap.parse_args()
    n = args.records or int(os.environ.get("FLOE_BENCH_RECORDS", 0)) or 5_000_000
    os.environ["FLOE_BUILD_DIR"] = str(pathlib.Path(args.floe).resolve().parents[3])
    work = bench.ROOT / "build" / "bench-work"
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    try:
        from confluent_kafka.schema_registry import Schema, SchemaRegistryClient
        kafka = start_kafka(work / "kafka")
        registry = start_registry(work)
        client = SchemaRegistryClient({"url": registry.url})
        versions = (n - 1) // EVERY + 1
        ids = [client.register_schema("w1e-value", Schema(json.dumps(schema_version(k)), "AVRO"))
               for k in range(versions)]
        plain_id = client.register_schema("w1-value", Schema(json.dumps(bench.W1_SCHEMA), "AVRO"))
        plain = bench.W1Records(plain_id)

        def evolving(i: int) -> bytes:
            k = i // EVERY
            body = plain(i)[5:]
            return b"\x00" + ids[k].to_bytes(4, "big") + body + b"\x00" * k

        topics = {}
        for topic, values in (("w1", plain), ("w1e", evolving)):
            kafka.create_topic(topic, partitions=4)
            print(f"[bench] preloading {n} records into {topic} ...", flush=True)
            size = bench.preload(kafka.bootstrap, topic, values, n, 4)
            topics[topic] = ({p: hi for p, (lo, hi) in kafka.watermarks(topic).items()}, size)
        runs = {"w1": [], "w1e": []}
        schemas = 0
        for i in range(args.pairs):
            for topic in ("w1", "w1e"):
                hwm, size = topics[topic]
                r = bench.one_run(kafka, registry.url, topic, work / f"{topic}-{i}", hwm, size,
                                  ["iceberg"])
                r.pop("timeline", None)
                runs[topic].append(r)
                print(f"[bench] pair {i + 1} {topic}: {r['records_per_cpu_s']:,.0f} "
                      f"records/CPU-s", flush=True)
                if topic == "w1e":
                    schemas = table_schemas(work / f"{topic}-{i}")
        med = {t: statistics.median(r["records_per_cpu_s"] for r in rs) for t, rs in runs.items()}
        pair_ratios = [e["records_per_cpu_s"] / p["records_per_cpu_s"]
                       for p, e in zip(runs["w1"], runs["w1e"])]
        ratio = med["w1e"] / med["w1"]
        out = {"date": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
               "machine": bench.machine(), "floe": str(pathlib.Path(args.floe)),
               "records": n, "schema_change_every": EVERY, "schema_versions": versions,
               "evolved_table_schemas": schemas,
               "runs": runs, "median_records_per_cpu_s": med, "median_ratio": ratio,
               "pair_ratios": pair_ratios,
               "pair_ratio_median": statistics.median(pair_ratios),
               "pair_ratio_range": [min(pair_ratios), max(pair_ratios)]}
        res = bench.ROOT / "bench" / "results"
        res.mkdir(exist_ok=True)
        path = res / f"{dt.date.today().isoformat()}-w1-evolve.json"
        path.write_text(json.dumps(out, indent=2))
        verdict = "met" if statistics.median(pair_ratios) >= 0.95 else "not met"
        print(f"[bench] W1 {n} records, {versions} schema versions (a change every {EVERY}): "
              f"table schemas {schemas}; median {med['w1e']:,.0f} vs {med['w1']:,.0f} records/CPU-s without changes; "
              f"pair ratios median {statistics.median(pair_ratios):.3f} "
              f"(range {min(pair_ratios):.3f}-{max(pair_ratios):.3f}); within 5%: {verdict} "
              f"→ {path}")
        return 0
    finally:
        procs.kill_all()


if __name__ == "__main__":
    sys.exit(main())
