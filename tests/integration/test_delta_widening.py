"""Issue 16, item 1 (Delta): a type widening evolves both formats.

A topic with `formats: [iceberg, delta]` gets v1 {seq: int, price: float, amount:
decimal(5,2)} records, then v2 {seq: long, price: double, amount: decimal(12,2)}
(BACKWARD-compatible in Avro: the promotions int->long and float->double, and the same
`bytes` under the decimal, so the registry test double takes it) with values that need 64
bits, double precision and more decimal digits. Iceberg widens the columns; the
Delta log records the change as Delta type widening (the `typeWidening` reader and writer
feature, `delta.enableTypeWidening`, `delta.typeChanges` on each widened field, same
column-mapping id and physical name), so the Parquet files written before the change
(INT32 / FLOAT) stay in the table under the wider types.

Readers, each asked for every row: pyiceberg, DuckDB's iceberg_scan, Spark with
delta-spark and DuckDB's delta_scan return the right values; delta-rs 1.6.6 refuses the
table (it does not support the typeWidening reader feature) with a clear error, never
wrong values (docs/type-mapping.md, "Delta type widening").
"""
from __future__ import annotations

import decimal
import json
import pathlib
import struct
import time
import urllib.parse

import deltalake
import pyarrow as pa
from confluent_kafka import Producer
from confluent_kafka.schema_registry import SchemaRegistryClient
from confluent_kafka.schema_registry.avro import AvroSerializer
from confluent_kafka.serialization import MessageField, SerializationContext
from pyiceberg.catalog.sql import SqlCatalog

from harness import spark
from harness.floe import FloeRun, default_table_name
from test_core import duckdb_connect

def dec(precision: int) -> dict:
    return {"type": "bytes", "logicalType": "decimal", "precision": precision, "scale": 2}


V1 = {"type": "record", "name": "Reading", "namespace": "widen", "fields": [
    {"name": "seq", "type": "int"}, {"name": "price", "type": "float"},
    {"name": "amount", "type": dec(5)}, {"name": "payload", "type": "string"}]}
V2 = dict(V1, fields=[{"name": "seq", "type": "long"}, {"name": "price", "type": "double"},
                      {"name": "amount", "type": dec(12)},
                      {"name": "payload", "type": "string"}])
PARTITIONS = 2
PER_VERSION = 40


def f32(x: float) -> float:
    """The value a float column holds for x (what a widened reader must return as double)."""
    return struct.unpack("<f", struct.pack("<f", x))[0]


def v1_value(i: int) -> dict:
    seqs = [2**31 - 1, -2**31, 0, 7]
    amounts = ["999.99", "-999.99", "0.01", "123.45"]
    return {"seq": seqs[i % 4] if i < 4 else i * 1000 - 5,
            "price": 0.1 * i + 0.5, "amount": decimal.Decimal(amounts[i % 4]),
            "payload": f"v1-{i}"}


def v2_value(i: int) -> dict:
    # Outside int32 and beyond float precision (2**53 + 1 is not even a double; use a long
    # that is exact only as a long, and doubles float32 cannot hold).
    seqs = [2**62 + 1, -(2**53) - 3, 2**31, 9]
    return {"seq": seqs[i % 4] if i < 4 else 2**40 * i + 1,
            "price": [1e300, 0.1, -2.5e-310, 123456789.123456789][i % 4] + i,
            "amount": decimal.Decimal(["9999999999.99", "-1234567890.12", "0.10",
                                       "100000.00"][i % 4]),
            "payload": f"v2-{i}"}


def produce(kafka_broker, registry, topic: str, schema: dict, make) -> dict:
    """PER_VERSION records over the partitions; returns payload -> expected value."""
    ser = AvroSerializer(SchemaRegistryClient({"url": registry.url}), json.dumps(schema))
    p = Producer({"bootstrap.servers": kafka_broker.bootstrap})
    ctx = SerializationContext(topic, MessageField.VALUE)
    out = {}
    for i in range(PER_VERSION):
        v = make(i)
        p.produce(topic, value=ser(v, ctx), partition=i % PARTITIONS)
        out[v["payload"]] = v
    assert p.flush(10) == 0
    return out


def hwm(kafka_broker, topic: str) -> dict[int, int]:
    return {p: hi for p, (lo, hi) in kafka_broker.watermarks(topic).items()}


def wait_for_delta(root: pathlib.Path, uuid: str, topic: str, want: dict[int, int]) -> None:
    """The Delta entry follows the Iceberg commit: wait until its txns hold the positions
    (read from the log JSON: delta-rs refuses to open a type-widened table)."""
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        txns = {}
        for f in sorted((root / "_delta_log").glob("*.json")):
            for line in f.read_text().splitlines():
                a = json.loads(line)
                if "txn" in a:
                    txns[a["txn"]["appId"]] = a["txn"]["version"]
        if all(txns.get(f"floe:{uuid}:{topic}:{p}") == v for p, v in want.items()):
            return
        time.sleep(0.2)
    raise AssertionError(f"Delta txns never reached {want}")


def delta_actions(root: pathlib.Path) -> list[dict]:
    out = []
    for f in sorted((root / "_delta_log").glob("*.json")):
        out += [json.loads(line) for line in f.read_text().splitlines() if line]
    return out


def check_rows(rows: list[dict], expected: dict, reader: str) -> None:
    assert len(rows) == len(expected), (reader, len(rows), len(expected))
    got = {r["payload"]: r for r in rows}
    assert set(got) == set(expected), reader
    for payload, e in expected.items():
        r = got[payload]
        assert r["seq"] == e["seq"], (reader, payload, r["seq"], e["seq"])
        want_price = f32(e["price"]) if payload.startswith("v1-") else e["price"]
        assert r["price"] == want_price, (reader, payload, r["price"], want_price)
        assert decimal.Decimal(r["amount"]) == e["amount"], (reader, payload, r["amount"])


def test_int_to_long_and_float_to_double_evolve_iceberg_and_delta(
        kafka_broker, registry, tmp_path):
    topic = "delta-widening"
    kafka_broker.create_topic(topic, partitions=PARTITIONS)
    table = default_table_name(topic)
    run = FloeRun(tmp_path, kafka_broker.bootstrap, registry.url,
                  [{"name": topic, "formats": ["iceberg", "delta"]}],
                  defaults={"commit.interval.ms": 1000})
    run.start()
    expected = produce(kafka_broker, registry, topic, V1, v1_value)
    run.wait_for_positions(table, topic, hwm(kafka_broker, topic), timeout=120)
    md = run.metadata(table)
    root = pathlib.Path(md["location"].removeprefix("file://"))
    wait_for_delta(root, md["table-uuid"], topic, hwm(kafka_broker, topic))
    # Before the change: a plain column-mapped table, which delta-rs reads.
    dt = deltalake.DeltaTable(str(root))
    assert "typeWidening" not in (dt.protocol().reader_features or [])
    check_rows(pa.table(dt.scan()).to_pylist(), expected, "delta-rs before the widening")

    expected.update(produce(kafka_broker, registry, topic, V2, v2_value))
    want = hwm(kafka_broker, topic)
    run.wait_for_positions(table, topic, want, timeout=120)
    wait_for_delta(root, md["table-uuid"], topic, want)
    assert run.stop() == 0, run.log(60)
    log = run.log(400)
    assert "suspended" not in log, log
    assert "widen seq int → long" in log and "widen price float → double" in log, log
    assert "widen amount decimal(5,2) → decimal(12,2)" in log, log

    # Iceberg: the columns were widened.
    md = run.metadata(table)
    current = next(s for s in md["schemas"] if s["schema-id"] == md["current-schema-id"])
    types = {f["name"]: (f["id"], f["type"]) for f in current["fields"]}
    assert types["seq"][1] == "long" and types["price"][1] == "double", types
    assert types["amount"][1].replace(" ", "") == "decimal(12,2)", types

    # Delta: one protocol upgrade with typeWidening in both lists (columnMapping kept), the
    # property, and the type changes on the same column-mapping ids and physical names.
    actions = delta_actions(root)
    protocols = [a["protocol"] for a in actions if "protocol" in a]
    assert len(protocols) == 2, protocols
    for features in ("readerFeatures", "writerFeatures"):
        assert "columnMapping" in protocols[-1][features]
        assert "typeWidening" in protocols[-1][features]
        assert "typeWidening" not in protocols[0][features]
    assert (protocols[-1]["minReaderVersion"], protocols[-1]["minWriterVersion"]) == (3, 7)
    metas = [a["metaData"] for a in actions if "metaData" in a]
    assert len(metas) == 2, metas
    assert metas[-1]["configuration"]["delta.enableTypeWidening"] == "true"
    fields = {f["name"]: f for f in json.loads(metas[-1]["schemaString"])["fields"]}
    before = {f["name"]: f for f in json.loads(metas[0]["schemaString"])["fields"]}
    for name, (old, new) in {"seq": ("integer", "long"), "price": ("float", "double"),
                             "amount": ("decimal(5,2)", "decimal(12,2)")}.items():
        f = fields[name]
        assert before[name]["type"] == old and f["type"] == new, (before[name], f)
        assert f["metadata"]["delta.typeChanges"] == [{"fromType": old, "toType": new}]
        assert f["metadata"]["delta.columnMapping.id"] == types[name][0]
        assert f["metadata"]["delta.columnMapping.physicalName"] == name
        assert before[name]["metadata"]["delta.columnMapping.id"] == types[name][0]

    # The same files back both formats; files of both schemas are there.
    cat = SqlCatalog("floe", uri=f"sqlite:///{run.catalog_db}",
                     warehouse=f"file://{run.warehouse}")
    t = cat.load_table(f"kafka.{table}")
    iceberg_files = {task.file.file_path.removeprefix("file://") for task in t.scan().plan_files()}
    adds, removes = set(), set()
    for a in actions:
        if "add" in a:
            adds.add(str(root / urllib.parse.unquote(a["add"]["path"])))
        if "remove" in a:
            removes.add(str(root / urllib.parse.unquote(a["remove"]["path"])))
    assert iceberg_files == adds - removes

    # pyiceberg
    check_rows(t.scan().to_arrow().to_pylist(), expected, "pyiceberg")

    # DuckDB's iceberg reader
    con = duckdb_connect()
    con.execute("LOAD iceberg")
    cur = con.execute(f"SELECT seq, price, amount::VARCHAR, payload FROM "
                      f"iceberg_scan('{run.metadata_location(table)}')")
    check_rows([dict(zip(("seq", "price", "amount", "payload"), r)) for r in cur.fetchall()],
               expected, "duckdb iceberg_scan")

    # DuckDB's delta reader (delta-kernel-rs inside the pinned 1.4.4 extension) reads the
    # widened columns.
    con = duckdb_connect()
    con.execute("LOAD delta")
    cur = con.execute(f"SELECT seq, price, amount::VARCHAR, payload, typeof(seq), "
                      f"typeof(price), typeof(amount) FROM delta_scan('{root}')")
    rows = cur.fetchall()
    assert {r[4:] for r in rows} == {("BIGINT", "DOUBLE", "DECIMAL(12,2)")}
    check_rows([dict(zip(("seq", "price", "amount", "payload"), r)) for r in rows], expected,
               "duckdb delta_scan")

    # Spark with delta-spark 4.0.1.
    meta, srows = spark.read_delta(root)
    sfields = {f["name"]: f["type"] for f in meta["schema"]["fields"]}
    assert sfields["seq"] == "long" and sfields["price"] == "double", sfields
    assert sfields["amount"] == "decimal(12,2)", sfields
    check_rows(srows, expected, "spark delta")

    # delta-rs: the pinned 1.6.6 does not support the typeWidening reader feature and says
    # so; a later version may read the table, and then it must return the right values.
    try:
        rows = pa.table(deltalake.DeltaTable(str(root)).scan()).to_pylist()
    except Exception as e:  # noqa: BLE001 - deltalake's error classes vary by version
        assert "TypeWidening" in str(e) or "typeWidening" in str(e), repr(e)
    else:
        assert deltalake.__version__ != "1.6.6", "delta-rs 1.6.6 was seen refusing"
        check_rows(rows, expected, "delta-rs")
    if deltalake.__version__ == "1.6.6":
        try:
            deltalake.DeltaTable(str(root)).scan()
        except Exception as e:  # noqa: BLE001
            assert "Unsupported table features required: [TypeWidening]" in str(e), repr(e)
        else:
            raise AssertionError("delta-rs 1.6.6 opened a type-widened table")
