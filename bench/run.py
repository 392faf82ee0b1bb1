"""`make bench`: end-to-end ingestion throughput of Floe on this machine (issue 2 baseline).

W1 (`--workload w1`, the default): ~300-byte Avro records (Confluent framing) preloaded into a
4-partition topic on the local KRaft broker; Floe drains it into one table. W4 (`--workload
w4`, bench/w4.py): ~1.2 KB plain JSON order events (no framing) with their JSON Schema
registered under `w4-value`, read with `value.format: json`. Reported: records per Floe CPU-second
(utime + stime of the Floe process from start until the commit covering the last offset),
wall-clock records/s and MB/s, peak RSS, data and metadata bytes written per input byte,
files per commit. `--formats iceberg,delta` measures the same with the Delta log written after
each commit (the clock stops at the Iceberg commit covering the last offset; Delta's entry
follows within the same commit cycle). Results go to bench/results/<date>[-w4][-<formats>].json;
the seeded generator makes runs comparable. No assertion on any number: benchmarks measure,
tests check.
"""
from __future__ import annotations

import argparse
import datetime as dt
import io
import json
import os
import pathlib
import platform
import random
import statistics
import struct
import sys
import time

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "integration"))

import fastavro  # noqa: E402

from harness import procs  # noqa: E402
from harness.floe import FloeRun, default_table_name  # noqa: E402
from harness.kafka import start_kafka  # noqa: E402
from harness.registry import start_registry  # noqa: E402
from harness.wire import zigzag_varint  # noqa: E402

W1_SCHEMA = {
    "type": "record", "name": "Order", "namespace": "bench",
    "fields": [
        {"name": "order_id", "type": "long"},
        {"name": "customer_id", "type": "long"},
        {"name": "customer", "type": "string"},
        {"name": "email", "type": "string"},
        {"name": "status", "type": {"type": "enum", "name": "S", "symbols": ["NEW", "PAID", "SHIPPED", "DONE"]}},
        {"name": "amount", "type": {"type": "bytes", "logicalType": "decimal", "precision": 12, "scale": 2}},
        {"name": "currency", "type": "string"},
        {"name": "created_at", "type": {"type": "long", "logicalType": "timestamp-micros"}},
        {"name": "note", "type": ["null", "string"], "default": None},
        {"name": "address", "type": {"type": "record", "name": "A", "fields": [
            {"name": "street", "type": "string"}, {"name": "city", "type": "string"},
            {"name": "zip", "type": "string"}, {"name": "country", "type": "string"}]}},
        {"name": "items", "type": {"type": "array", "items": "string"}},
        {"name": "score", "type": "double"},
    ],
}


W1_HEAD = ["customer_id", "customer", "email", "status", "amount", "currency"]  # before created_at
W1_TAIL = ["note", "address", "items", "score"]  # after created_at
W1_BASE_MICROS = 1_796_083_200_000_000  # 2026-12-01T00:00:00Z


def _mix(i: int, salt: int) -> int:
    """A fixed 32-bit hash of (i, salt): which pooled segment record i uses."""
    x = (i * 0x9E3779B1 + salt) & 0xFFFFFFFF
    x ^= x >> 16
    x = (x * 0x85EBCA6B) & 0xFFFFFFFF
    return x ^ (x >> 13)


class W1Records:
    """Seeded ~290-byte W1 records, Confluent-framed (magic 0 + 4-byte id + Avro body);
    `values(i)` is record i, the same bytes on every run and in every process.

    Record i has its own order_id (i) and created_at (a fixed base + 50 µs × i); the other
    fields come as two segments, the fields before created_at and those after it, each
    picked by a hash of i from a seeded pool of `pool` encodings. So no partition sees a
    repeating sequence of records (the first generator cycled through 16,384 records, and
    Parquet compressed each partition's period), while column cardinalities stay bounded
    like a real table's customers, addresses and SKUs. Avro encodes a record as its fields
    back to back, so each segment is encoded as a record of just its fields."""

    def __init__(self, schema_id: int, pool: int = 1 << 16):
        rnd = random.Random(1234)
        fields = {f["name"]: f for f in W1_SCHEMA["fields"]}
        words = ["alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel"]
        import decimal

        def encoder(names):
            schema = fastavro.parse_schema({"type": "record", "name": "Seg", "namespace": "bench",
                                            "fields": [fields[n] for n in names]})

            def encode(rec: dict) -> bytes:
                buf = io.BytesIO()
                fastavro.schemaless_writer(buf, schema, rec)
                return buf.getvalue()
            return encode

        head, tail = encoder(W1_HEAD), encoder(W1_TAIL)
        self.heads, self.tails = [], []
        for k in range(pool):
            self.heads.append(head({
                "customer_id": rnd.randrange(1 << 40),
                "customer": " ".join(rnd.choices(words, k=3)),
                "email": f"user{rnd.randrange(10**6)}@example.com",
                "status": rnd.choice(["NEW", "PAID", "SHIPPED", "DONE"]),
                "amount": decimal.Decimal(rnd.randrange(10**8)).scaleb(-2),
                "currency": rnd.choice(["EUR", "USD", "GBP"])}))
            self.tails.append(tail({
                "note": None if k % 5 == 0 else " ".join(rnd.choices(words, k=8)),
                "address": {"street": f"{rnd.randrange(999)} {rnd.choice(words)} street",
                            "city": rnd.choice(words).title() + "ville",
                            "zip": f"{rnd.randrange(10**5):05d}", "country": "Neverland"},
                "items": [f"sku-{rnd.randrange(10**6)}-{rnd.choice(words)}"
                          for _ in range(rnd.randint(5, 9))],
                "score": rnd.random()}))
        self.prefix = b"\x00" + struct.pack(">I", schema_id)
        self.mask = pool - 1
        assert pool & self.mask == 0, "pool must be a power of two"

    def __call__(self, i: int) -> bytes:
        return b"".join((self.prefix, zigzag_varint(i), self.heads[_mix(i, 1) & self.mask],
                         zigzag_varint(W1_BASE_MICROS + 50 * i),
                         self.tails[_mix(i, 2) & self.mask]))


def cycle(values: list[bytes]):
    """`values(i)` over a fixed list of payloads (W4 cycles through its documents)."""
    return lambda i: values[i % len(values)]


def preload(bootstrap: str, topic: str, values, n: int, partitions: int) -> int:
    """Produces values(0) .. values(n-1), record i to partition i % partitions."""
    from confluent_kafka import Producer
    p = Producer({"bootstrap.servers": bootstrap, "linger.ms": 50, "batch.size": 1 << 20,
                  "compression.type": "none", "queue.buffering.max.messages": 1_000_000,
                  "acks": "1"})
    total = 0
    for i in range(n):
        v = values(i)
        total += len(v)
        while True:
            try:
                p.produce(topic, value=v, partition=i % partitions)
                break
            except BufferError:
                p.poll(0.05)
        if i % 10000 == 0:
            p.poll(0)
    assert p.flush(120) == 0
    return total


def cpu_model() -> str:
    for line in pathlib.Path("/proc/cpuinfo").read_text().splitlines():
        if line.startswith("model name"):
            return line.split(":", 1)[1].strip()
    return platform.machine()


def cpu_seconds(pid: int) -> float:
    fields = pathlib.Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    ticks = os.sysconf("SC_CLK_TCK")
    return (int(fields[11]) + int(fields[12])) / ticks


def peak_rss_mib(pid: int) -> float:
    for line in pathlib.Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def stored_bytes(run, s3) -> tuple[int, int]:
    """(data, metadata) bytes the run wrote: Parquet data files; Iceberg manifests, lists and
    metadata JSON, Delta log JSON and checkpoints."""
    if s3 is None:
        files = [(f.name, f.stat().st_size) for f in run.warehouse.rglob("*") if f.is_file()]
    else:
        import pyarrow.fs as pafs
        prefix = run.warehouse_uri.removeprefix("s3://")
        files = [(i.base_name, i.size) for i in s3.fs().get_file_info(
            pafs.FileSelector(prefix, recursive=True, allow_not_found=True))
            if i.type == pafs.FileType.File]
    checkpoints = sum(n for name, n in files if name.endswith(".checkpoint.parquet"))
    data = sum(n for name, n in files if name.endswith(".parquet")) - checkpoints
    meta = sum(n for name, n in files if name.endswith((".avro", ".json"))) + checkpoints
    return data, meta


def s3_config(s3, prefix: str) -> dict:
    """The config of a run whose warehouse is s3://<bucket>/<prefix> on the local store."""
    return {"warehouse": s3.uri(prefix),
            "s3": {"endpoint": f"http://{s3.endpoint}", "region": s3.region,
                   "access.key.id": s3.access_key, "secret.access.key": s3.secret_key}}


def one_run(kafka, registry_url: str, topic: str, work: pathlib.Path, hwm: dict, input_bytes: int,
            formats: list[str], topic_config: dict | None = None,
            commit_interval_ms: int = 1000, overrides: dict | None = None, s3=None):
    extra = s3_config(s3, work.name) if s3 is not None else None
    run = FloeRun(work, kafka.bootstrap, registry_url,
                  [{"name": topic, "formats": formats, **(topic_config or {})}],
                  defaults={"commit.interval.ms": commit_interval_ms}, extra=extra, s3=s3)
    run.warehouse_uri = extra["warehouse"] if extra else None
    if overrides:
        apply_overrides(run, overrides)
    t0 = time.monotonic()
    run.start()
    pid = run.proc.pid
    cpu = rss = 0.0
    timeline = []  # (wall s, CPU s, records committed) at each new commit seen
    last_loc = None
    while True:
        cpu, rss = cpu_seconds(pid), peak_rss_mib(pid)
        pos = run.table_positions(default_table_name(topic), topic)
        loc = run.metadata_location(default_table_name(topic))
        if loc != last_loc and pos:
            last_loc = loc
            timeline.append((round(time.monotonic() - t0, 3), cpu,
                             sum(min(pos.get(p, 0), v) for p, v in hwm.items())))
        if pos and all(pos.get(p, 0) >= v for p, v in hwm.items()):
            break
        if not run.proc.running():
            raise RuntimeError(run.log())
        time.sleep(0.02)
    wall = time.monotonic() - t0
    run.stop()
    md = run.metadata(default_table_name(topic))
    snaps = md["snapshots"]
    n = sum(hwm.values())
    data, meta = stored_bytes(run, s3)
    files = int(snaps[-1]["summary"]["total-data-files"]) if snaps else 0
    return {"records": n, "cpu_s": cpu, "wall_s": wall, "records_per_cpu_s": n / cpu,
            "records_per_wall_s": n / wall, "mb_per_wall_s": input_bytes / wall / 1e6,
            "peak_rss_mib": rss, "data_bytes_per_input_byte": data / input_bytes,
            "metadata_bytes_per_input_byte": meta / input_bytes, "commits": len(snaps),
            "files_per_commit": files / max(1, len(snaps)),
            "after_warmup": after_warmup(timeline, n, cpu, wall), "timeline": timeline}


def after_warmup(timeline: list, n: int, cpu: float, wall: float, warmup_s: float = 30.0):
    """Records per CPU-second without the first `warmup_s`: from the first commit seen at or
    after warmup_s to the end. Records processed but not yet committed at that commit were paid
    for before it, so this overstates the steady rate by at most one commit interval's worth
    of records; `timeline` lets a reader recompute any window."""
    later = [t for t in timeline if t[0] >= warmup_s]
    if not later or later[0][2] >= n or cpu <= later[0][1]:
        return None
    t, c, r = later[0]
    return {"from_wall_s": t, "records": n - r, "cpu_s": cpu - c, "wall_s": wall - t,
            "records_per_cpu_s": (n - r) / (cpu - c)}


def parse_overrides(items: list[str]) -> dict:
    """`--set kafka.queued.min.messages=20000 --set memory.budget.bytes=67108864`: the first
    dotted component names a top-level config section (or key), the rest is the key inside it;
    values are parsed as YAML scalars."""
    import yaml
    out: dict = {}
    for item in items:
        key, _, value = item.partition("=")
        if not key or not _:
            raise SystemExit(f"--set wants key=value, got {item!r}")
        out[key] = yaml.safe_load(value)
    return out


def apply_overrides(run, overrides: dict) -> None:
    import yaml
    cfg = yaml.safe_load(run.config_path.read_text())
    for key, value in overrides.items():
        section, _, rest = key.partition(".")
        if rest and isinstance(cfg.get(section), dict):
            cfg[section][rest] = value
        else:
            cfg[key] = value
    run.config_path.write_text(yaml.safe_dump(cfg, sort_keys=False))


WORKLOADS = {"w1": "W1 Avro", "w1e": "W1 Avro, a new schema version every 500,000",
             "w1w": "W1 Avro with nine more nullable fields, all null", "w4": "W4 JSON"}
W1E_EVERY = 500_000


def w1_version(k: int) -> dict:
    """W1 with `k` extra nullable string fields at the end (schema version 1 + k)."""
    extra = [{"name": f"extra_{j}", "type": ["null", "string"], "default": None}
             for j in range(1, k + 1)]
    return {**W1_SCHEMA, "fields": W1_SCHEMA["fields"] + extra}


class W1Evolving:
    """W1 where record i is written with version 1 + i // W1E_EVERY of the W1 schema
    (`w1_version`): the version-1 body plus k null-branch bytes, under that version's id."""

    def __init__(self, client, subject: str, records: int):
        from confluent_kafka.schema_registry import Schema
        self.versions = (records - 1) // W1E_EVERY + 1
        self.ids = [client.register_schema(subject, Schema(json.dumps(w1_version(k)), "AVRO"))
                    for k in range(self.versions)]
        self.plain = W1Records(self.ids[0])

    def __call__(self, i: int) -> bytes:
        k = i // W1E_EVERY
        return b"\x00" + self.ids[k].to_bytes(4, "big") + self.plain(i)[5:] + b"\x00" * k


def prepare(kafka, registry, workload: str, records: int, partitions: int = 4):
    """Registers the workload's schema, creates topic `workload` and preloads it. Returns
    (topic, Floe topic config, high watermarks by partition, input bytes)."""
    from confluent_kafka.schema_registry import Schema, SchemaRegistryClient
    client = SchemaRegistryClient({"url": registry.url})
    topic = workload
    if workload == "w1":
        sid = client.register_schema(f"{topic}-value", Schema(json.dumps(W1_SCHEMA), "AVRO"))
        values, topic_config = W1Records(sid), {}
    elif workload == "w1w":  # the width of w1e's last version, without a schema change
        sid = client.register_schema(f"{topic}-value",
                                     Schema(json.dumps(w1_version(9)), "AVRO"))
        plain = W1Records(sid)
        values, topic_config = (lambda i: plain(i) + b"\x00" * 9), {}
    elif workload == "w1e":
        values, topic_config = W1Evolving(client, f"{topic}-value", records), {}
    else:
        import w4
        client.register_schema(f"{topic}-value", Schema(json.dumps(w4.SCHEMA), "JSON"))
        values, topic_config = cycle(w4.payloads()), {"value.format": "json"}
    kafka.create_topic(topic, partitions=partitions)
    print(f"[bench] preloading {records} {WORKLOADS[workload]} records "
          f"(~{statistics.mean(len(values(i)) for i in range(4096)):.0f} B each) ...", flush=True)
    input_bytes = preload(kafka.bootstrap, topic, values, records, partitions)
    hwm = {p: hi for p, (lo, hi) in kafka.watermarks(topic).items()}
    return topic, topic_config, hwm, input_bytes


def machine() -> dict:
    return {"cores": os.cpu_count(), "cpu": cpu_model(), "kernel": platform.release()}


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--floe", required=True)
    ap.add_argument("--workload", choices=sorted(WORKLOADS), default="w1")
    ap.add_argument("--records", type=int, default=0,
                    help="records to preload (default: $FLOE_BENCH_RECORDS, else 5,000,000 "
                         "for W1 and 2,000,000 for W4, the issue's minimums)")
    ap.add_argument("--runs", type=int, default=5,
                    help="runs; the figures are the median run's, with the range of all")
    ap.add_argument("--formats", default="iceberg",
                    help="table formats, comma-separated (iceberg | iceberg,delta)")
    ap.add_argument("--commit-interval-ms", type=int, default=1000)
    ap.add_argument("--partitions", type=int, default=4,
                    help="partitions of the preloaded topic (results tagged -p<N> unless 4)")
    ap.add_argument("--storage", choices=["local", "s3", "local,s3"], default="local",
                    help="where the warehouse lives: local disk, S3 (a local SeaweedFS), or "
                         "both, interleaved run by run (results tagged -s3, with the ratio of "
                         "the S3 median to the local one)")
    ap.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                    help="override a Floe config key for an experiment (kafka.<prop>, "
                         "memory.budget.bytes, ...); results are then tagged -exp and kept "
                         "out of the summary")
    args = ap.parse_args()
    if not args.records:
        args.records = int(os.environ.get("FLOE_BENCH_RECORDS", 0)) or (
            5_000_000 if args.workload == "w1" else 2_000_000)
    os.environ["FLOE_BUILD_DIR"] = str(pathlib.Path(args.floe).resolve().parents[3])
    work = ROOT / "build" / "bench-work"
    if work.exists():
        import shutil
        shutil.rmtree(work)
    work.mkdir(parents=True)
    try:
        kafka = start_kafka(work / "kafka")
        registry = start_registry(work)
        topic, topic_config, hwm, input_bytes = prepare(kafka, registry, args.workload,
                                                        args.records, args.partitions)
        storages = args.storage.split(",")
        s3 = None
        if "s3" in storages:
            from harness.s3 import start_s3
            s3 = start_s3(work / "s3")
        by_storage: dict[str, list] = {st: [] for st in storages}
        for i in range(args.runs):
            for st in storages:
                r = one_run(kafka, registry.url, topic, work / f"run{i}-{st}", hwm, input_bytes,
                            args.formats.split(","), topic_config, args.commit_interval_ms,
                            parse_overrides(args.set), s3 if st == "s3" else None)
                print(f"[bench] run {i + 1} ({st}): {r['records_per_cpu_s']:,.0f} records/CPU-s, "
                      f"{r['records_per_wall_s']:,.0f} records/s wall, peak RSS "
                      f"{r['peak_rss_mib']:.0f} MiB", flush=True)
                by_storage[st].append(r)
        results = by_storage[storages[-1]]
        med = sorted(results, key=lambda r: r["records_per_cpu_s"])[len(results) // 2]
        compared = None
        if len(storages) == 2:
            local = by_storage["local"]
            local_med = sorted(local, key=lambda r: r["records_per_cpu_s"])[len(local) // 2]
            ratios = sorted(b["records_per_cpu_s"] / a["records_per_cpu_s"]
                            for a, b in zip(local, results))
            compared = {"local_median_records_per_cpu_s": local_med["records_per_cpu_s"],
                        "local_median_peak_rss_mib": local_med["peak_rss_mib"],
                        "ratio_of_medians": med["records_per_cpu_s"] /
                        local_med["records_per_cpu_s"],
                        "ratio_per_pair": ratios, "local_runs": local}
        name = WORKLOADS[args.workload]
        out = {"date": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
               "machine": machine(),
               "floe": str(pathlib.Path(args.floe)),
               "workload": {"name": name, "records": args.records,
                            "formats": args.formats.split(","),
                            "avg_record_bytes": input_bytes / args.records,
                            "partitions": args.partitions,
                            "commit_interval_ms": args.commit_interval_ms,
                            "overrides": parse_overrides(args.set),
                            "storage": storages[-1]},
               "runs": results, "median": med, "compared_to_local": compared,
               "range": {k: [min(r[k] for r in results), max(r[k] for r in results)]
                         for k in ("records_per_cpu_s", "records_per_wall_s", "peak_rss_mib")}}
        res_dir = ROOT / "bench" / "results"
        res_dir.mkdir(exist_ok=True)
        tag = "" if args.workload == "w1" else "-" + args.workload
        tag += "" if args.formats == "iceberg" else "-" + args.formats.replace(",", "-")
        tag += "" if args.partitions == 4 else f"-p{args.partitions}"
        tag += "-s3" if storages[-1] == "s3" else ""
        tag += "-exp" if args.set else ""
        path = res_dir / f"{dt.date.today().isoformat()}{tag}.json"
        path.write_text(json.dumps(out, indent=2))
        print(f"[bench] {name} ~{input_bytes / args.records:.0f} B/record, {args.records} records: "
              f"median of {len(results)} {med['records_per_cpu_s']:,.0f} records per Floe "
              f"CPU-second (range {out['range']['records_per_cpu_s'][0]:,.0f}-"
              f"{out['range']['records_per_cpu_s'][1]:,.0f}; {med['mb_per_wall_s']:.1f} MB/s wall, peak RSS {med['peak_rss_mib']:.0f} MiB, "
              f"{med['files_per_commit']:.2f} files/commit) → {path}")
        if compared:
            print(f"[bench] S3 / local on the same run: ratio of medians "
                  f"{compared['ratio_of_medians']:.3f}, per pair "
                  f"{statistics.median(compared['ratio_per_pair']):.3f} "
                  f"({compared['ratio_per_pair'][0]:.3f}-{compared['ratio_per_pair'][-1]:.3f}); "
                  f"local median {compared['local_median_records_per_cpu_s']:,.0f}")
        return 0
    finally:
        procs.kill_all()


if __name__ == "__main__":
    sys.exit(main())
