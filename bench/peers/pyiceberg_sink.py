"""Peer: a straightforward Python consumer writing Iceberg with pyiceberg (bench/peers/README.md).

    python pyiceberg_sink.py --bootstrap HOST:PORT --topic w4 --catalog-db DB \\
        --warehouse DIR --table w4 --commit-interval-ms 10000

What a Python team would write first: a confluent-kafka Consumer, `json.loads` per record,
the date-time and date strings turned into datetime/date objects (pyarrow does not parse
strings into timestamp columns), `pa.Table.from_pylist` per 10,000 records, and one
`table.append` (zstd Parquet, from the table's properties) plus a synchronous offset commit per
commit interval. Runs until killed; `run()` starts it as its own process and measures it.
"""
from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import pathlib
import sys
import time

ARROW_BATCH = 10_000


def _converters(schema):
    """(path, parse) for every timestamptz/date field reachable through structs only; W4 has
    none inside lists (asserted)."""
    from pyiceberg import types as T
    out = []

    def walk(fields, path, in_list):
        for f in fields:
            t, p = f.field_type, path + (f.name,)
            if isinstance(t, (T.TimestamptzType, T.DateType)):
                assert not in_list, p
                out.append((p, dt.datetime.fromisoformat if isinstance(t, T.TimestamptzType)
                            else dt.date.fromisoformat))
            elif isinstance(t, T.StructType):
                walk(t.fields, p, in_list)
            elif isinstance(t, T.ListType) and isinstance(t.element_type, T.StructType):
                walk(t.element_type.fields, p, True)
    walk(schema.fields, (), False)
    return out


def _convert(doc: dict, converters) -> dict:
    for path, parse in converters:
        d = doc
        for k in path[:-1]:
            d = d.get(k)
            if d is None:
                break
        else:
            v = d.get(path[-1])
            if v is not None:
                d[path[-1]] = parse(v)
    return doc


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--bootstrap", required=True)
    ap.add_argument("--topic", required=True)
    ap.add_argument("--catalog-db", required=True)
    ap.add_argument("--warehouse", required=True)
    ap.add_argument("--table", required=True)
    ap.add_argument("--commit-interval-ms", type=int, default=10_000)
    args = ap.parse_args()

    import pyarrow as pa
    from confluent_kafka import Consumer
    from pyiceberg.catalog.sql import SqlCatalog
    from pyiceberg.io.pyarrow import schema_to_pyarrow

    catalog = SqlCatalog("bench", uri=f"sqlite:///{args.catalog_db}",
                         warehouse=f"file://{args.warehouse}")
    table = catalog.load_table(f"bench.{args.table}")
    arrow_schema = schema_to_pyarrow(table.schema())
    converters = _converters(table.schema())
    consumer = Consumer({"bootstrap.servers": args.bootstrap, "group.id": f"pyiceberg-sink-{args.table}-{os.getpid()}",
                         "auto.offset.reset": "earliest", "enable.auto.commit": False})
    consumer.subscribe([args.topic])
    rows: list[dict] = []
    batches: list = []
    interval = args.commit_interval_ms / 1000
    next_commit = time.monotonic() + interval
    while True:
        for m in consumer.consume(num_messages=1000, timeout=0.2):
            if m.error():
                print(f"consume error: {m.error()}", file=sys.stderr)
                continue
            rows.append(_convert(json.loads(m.value()), converters))
        if len(rows) >= ARROW_BATCH:
            batches.append(pa.Table.from_pylist(rows, schema=arrow_schema))
            rows = []
        if time.monotonic() >= next_commit:
            if rows:
                batches.append(pa.Table.from_pylist(rows, schema=arrow_schema))
                rows = []
            if batches:
                table.append(pa.concat_tables(batches))
                consumer.commit(asynchronous=False)
                batches = []
            next_commit = time.monotonic() + interval


def run(kafka, topic: str, n: int, input_bytes: int, schema, work: pathlib.Path,
        commit_interval_ms: int) -> dict:
    ROOT = pathlib.Path(__file__).resolve().parents[2]
    sys.path.insert(0, str(ROOT / "tests" / "integration"))
    import common
    from harness import procs
    db, warehouse = common.create_table(work, topic, schema)
    cmd = [sys.executable, "-u", __file__, "--bootstrap", kafka.bootstrap, "--topic", topic,
           "--catalog-db", str(db), "--warehouse", str(warehouse), "--table", topic,
           "--commit-interval-ms", str(commit_interval_ms)]
    proc = procs.spawn(cmd, work / "pyiceberg.log", name="pyiceberg-sink")
    try:
        r = common.drain(proc, db, topic, n, input_bytes)
    finally:
        proc.stop(timeout=30)
    r["data_bytes_per_input_byte"] = common.dir_bytes(warehouse, "*.parquet") / input_bytes
    r["metadata_bytes_per_input_byte"] = (common.dir_bytes(warehouse, "*.avro") +
                                          common.dir_bytes(warehouse, "*.json")) / input_bytes
    return r


if __name__ == "__main__":
    sys.exit(main())
