"""Issue 16, renames: an Avro field renamed through `aliases` and a Protobuf field renamed
under the same field number keep their column (same field id, one schema change), with
real Kafka, the registry test double and confluent-kafka's serializers.

Old and new producers are interleaved in one partition (a rolling deploy): every row lands
in the renamed column with its value, read back through pyiceberg, DuckDB's iceberg reader
and, for the Delta mirror (formats iceberg + delta, column mapping `name` mode), delta-rs and
DuckDB's delta reader:
the Delta schema's logical name changes while the physical name (the Parquet column name,
which Floe keeps for a renamed field) and the column-mapping id stay. A restart reads the
table's former names back (`schema.name-mapping.default`), so an old-version record after
it still lands in the renamed column. For Avro, Iceberg's Java reader and Spark's delta
reader check the same values.
"""
from __future__ import annotations

import json
import pathlib
import time

import deltalake
import pyarrow as pa
from confluent_kafka import Producer
from confluent_kafka.schema_registry import SchemaRegistryClient
from confluent_kafka.schema_registry.avro import AvroSerializer
from confluent_kafka.schema_registry.protobuf import ProtobufSerializer
from confluent_kafka.serialization import MessageField, SerializationContext
from google.protobuf import descriptor_pb2, descriptor_pool, message_factory
from pyiceberg.catalog.sql import SqlCatalog

from harness import jvm, spark
from harness.floe import FloeRun, default_table_name
from test_core import duckdb_connect

BOTH = ["iceberg", "delta"]

V1 = {"type": "record", "name": "Order", "namespace": "floe.it.rename",
      "fields": [{"name": "id", "type": "long"}, {"name": "name", "type": "string"}]}
V2 = {"type": "record", "name": "Order", "namespace": "floe.it.rename",
      "fields": [{"name": "id", "type": "long"},
                 {"name": "title", "aliases": ["name"], "type": "string"}]}


def produce(bootstrap: str, topic: str, values: list[bytes]) -> list[int]:
    """Produces to partition 0 in order; returns the offsets."""
    offsets, errors = [], []
    p = Producer({"bootstrap.servers": bootstrap, "enable.idempotence": True, "linger.ms": 5})

    def cb(err, msg):
        if err is not None:
            errors.append(err)
        else:
            offsets.append(msg.offset())

    for v in values:
        p.produce(topic, value=v, partition=0, on_delivery=cb)
        p.poll(0)
    assert p.flush(30) == 0 and not errors, errors[:3]
    return sorted(offsets)


def field_id(schema_json: dict, name: str) -> int | None:
    for f in schema_json["fields"]:
        if f["name"] == name:
            return f["id"]
    return None


def current_schema(md: dict) -> dict:
    return next(s for s in md["schemas"] if s["schema-id"] == md["current-schema-id"])


def delta_schema_string(root: pathlib.Path) -> str:
    """The schema string of the newest metaData in the Delta log's JSON commits."""
    newest = None
    for f in sorted((root / "_delta_log").glob("*.json")):
        for line in f.read_text().splitlines():
            action = json.loads(line)
            if "metaData" in action:
                newest = action["metaData"]["schemaString"]
    assert newest is not None
    return newest


def check_table(run: FloeRun, table: str, old: str, new: str, expected: dict[int, str],
                delta: bool) -> None:
    """The table has column `new` with `old`'s field id and one schema change; every reader
    returns `expected` ({offset: value}) under `new`."""
    md = run.metadata(table)
    first = next(s for s in md["schemas"] if s["schema-id"] == 0)
    cur = current_schema(md)
    assert len(md["schemas"]) == 2, [s["fields"] for s in md["schemas"]]
    assert field_id(cur, old) is None
    assert field_id(cur, new) == field_id(first, old)
    mapping = json.loads(md["properties"]["schema.name-mapping.default"])
    entry = next(m for m in mapping if m["field-id"] == field_id(cur, new))
    assert entry["names"] == [new, old]

    cat = SqlCatalog("floe", uri=f"sqlite:///{run.catalog_db}",
                     warehouse=f"file://{run.warehouse}")
    rows = cat.load_table(f"kafka.{table}").scan().to_arrow().to_pylist()
    assert old not in rows[0]
    got = {r["_kafka"]["offset"]: r[new] for r in rows}
    assert got == expected

    con = duckdb_connect()
    con.execute("LOAD iceberg")
    dd = con.execute(f"SELECT _kafka.offset, {new} FROM iceberg_scan('{run.metadata_location(table)}')"
                     ).fetchall()
    assert dict(dd) == expected

    if delta:
        root = pathlib.Path(md["location"].removeprefix("file://"))
        deadline = time.monotonic() + 60  # liveness only: it follows within a second
        while True:  # the Delta entry follows the Iceberg commit
            dt = deltalake.DeltaTable(str(root))
            drows = pa.table(dt.scan()).to_pylist()
            if len(drows) == len(expected) or time.monotonic() > deadline:
                break
            time.sleep(0.2)
        assert {r["_kafka"]["offset"]: r[new] for r in drows} == expected
        con.execute("LOAD delta")
        dd = con.execute(f"SELECT _kafka.offset, {new} FROM delta_scan('{root}')").fetchall()
        assert dict(dd) == expected
        fields = {f["name"]: f for f in json.loads(delta_schema_string(root))["fields"]}
        assert old not in fields
        meta = fields[new]["metadata"]
        assert meta["delta.columnMapping.id"] == field_id(first, old)
        assert meta["delta.columnMapping.physicalName"] == old


def test_avro_rename_by_alias(kafka_broker, registry, tmp_path):
    topic = "rename-avro"
    table = default_table_name(topic)
    kafka_broker.create_topic(topic, partitions=1)
    client = SchemaRegistryClient({"url": registry.url})
    ser1 = AvroSerializer(client, json.dumps(V1))
    ser2 = AvroSerializer(client, json.dumps(V2))
    ctx = SerializationContext(topic, MessageField.VALUE)
    expected: dict[int, str] = {}

    def send(items):
        values = [(ser1 if v == 1 else ser2)({"id": i, ("name" if v == 1 else "title"): text},
                                            ctx) for v, i, text in items]
        for off, (_, _, text) in zip(produce(kafka_broker.bootstrap, topic, values), items):
            expected[off] = text

    # v1 first (the table is created with `name`), then old and new producers interleaved.
    send([(1, i, f"n{i}") for i in range(5)])
    send([(2 if i % 2 else 1, i, (f"t{i}" if i % 2 else f"n{i}")) for i in range(5, 25)])
    run = FloeRun(tmp_path, kafka_broker.bootstrap, registry.url,
                  [{"name": topic, "formats": BOTH}])
    run.start()
    run.wait_for_positions(table, topic, {0: 25}, timeout=120)
    assert "rename column name → title" in run.log(400), run.log()
    check_table(run, table, "name", "title", expected, delta=True)
    assert run.stop() == 0, run.log()

    # A restart: the former name comes back from the table; an old producer still lands in
    # `title` and nothing is added.
    send([(1, 25, "n25"), (2, 26, "t26"), (1, 27, "n27")])
    run.start()
    run.wait_for_positions(table, topic, {0: 28}, timeout=120)
    check_table(run, table, "name", "title", expected, delta=True)
    assert run.stop() == 0, run.log()

    # The JVM readers: Iceberg's Java libraries (by field id) and Spark's delta reader
    # (by physical name, column mapping `name` mode).
    jrows = jvm.read_table(run.catalog_db, "floe", run.warehouse, f"kafka.{table}")
    assert {r["_kafka"]["offset"]: r["title"] for r in jrows} == expected
    root = pathlib.Path(run.metadata(table)["location"].removeprefix("file://"))
    _, srows = spark.read_delta(root)
    assert {r["_kafka"]["offset"]: r["title"] for r in srows} == expected


def order_class(field_name: str, version: int):
    """message Order { int64 id = 1; string <field_name> = 2; } in its own pool."""
    fdp = descriptor_pb2.FileDescriptorProto(name=f"floe/it/rename_v{version}.proto",
                                             package="floe.it.rename", syntax="proto3")
    msg = fdp.message_type.add(name="Order")
    FDP = descriptor_pb2.FieldDescriptorProto
    msg.field.add(name="id", number=1, type=FDP.TYPE_INT64, label=FDP.LABEL_OPTIONAL)
    msg.field.add(name=field_name, number=2, type=FDP.TYPE_STRING, label=FDP.LABEL_OPTIONAL)
    pool = descriptor_pool.DescriptorPool()
    pool.Add(fdp)
    return message_factory.GetMessageClass(pool.FindMessageTypeByName("floe.it.rename.Order"))


def test_protobuf_rename_under_the_same_number(kafka_broker, registry, tmp_path):
    topic = "rename-proto"
    table = default_table_name(topic)
    kafka_broker.create_topic(topic, partitions=1)
    client = SchemaRegistryClient({"url": registry.url})
    old_cls, new_cls = order_class("name", 1), order_class("title", 2)
    ser1 = ProtobufSerializer(old_cls, client)
    ser2 = ProtobufSerializer(new_cls, client)
    ctx = SerializationContext(topic, MessageField.VALUE)
    expected: dict[int, str] = {}

    def send(items):
        values = [ser1(old_cls(id=i, name=text), ctx) if v == 1 else
                  ser2(new_cls(id=i, title=text), ctx) for v, i, text in items]
        for off, (_, _, text) in zip(produce(kafka_broker.bootstrap, topic, values), items):
            expected[off] = text

    send([(1, i, f"n{i}") for i in range(4)])
    send([(2 if i % 2 else 1, i, (f"t{i}" if i % 2 else f"n{i}")) for i in range(4, 20)])
    run = FloeRun(tmp_path, kafka_broker.bootstrap, registry.url,
                  [{"name": topic, "formats": BOTH}])
    run.start()
    run.wait_for_positions(table, topic, {0: 20}, timeout=120)
    assert "rename column name → title" in run.log(400), run.log()
    md = run.metadata(table)
    numbers = json.loads(md["properties"]["floe.protobuf.field-numbers"])
    assert numbers[str(field_id(current_schema(md), "title"))] == 2
    check_table(run, table, "name", "title", expected, delta=True)
    assert run.stop() == 0, run.log()

    send([(1, 20, "n20"), (2, 21, "t21")])
    run.start()
    run.wait_for_positions(table, topic, {0: 22}, timeout=120)
    check_table(run, table, "name", "title", expected, delta=True)
    assert run.stop() == 0, run.log()
