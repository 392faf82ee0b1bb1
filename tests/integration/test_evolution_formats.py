"""Issue 16 acceptance: "an integration scenario per input format".

For Avro, Protobuf and JSON Schema (Confluent-framed, written by confluent-kafka's own
serializers) one topic with `formats: [iceberg, delta]` (2 partitions) goes through the
schema versions below, registered and produced in order. One logical schema description
(`fields(version)`) is turned into each format's schema, one value generator
(`make_value`) into each format's records, and one checker (`check_step`) serves all three.

| step | change                                                        | Avro | Proto | JSON |
|------|---------------------------------------------------------------|------|-------|------|
| v1   | seq long, count int, ratio float, amount decimal(5,2),        |  x   |   x   |  x   |
|      | label string, info struct{name, score int},                   |      |       |      |
|      | items list<struct{sku, qty int}>                              |      |       |      |
| v2   | + optional top-level `note`                                   |  x   |   x   |  x   |
| v3   | + optional `info.extra` and `items[].tag` (nested)            |  x   |   x   |  x   |
| v4   | - `label` (policy keep: the column stays, becomes optional,   |  x   |   x   |  x   |
|      | new rows null); v3 and v4 producers interleaved record by     |      |       |      |
|      | record in one partition (a rolling deploy)                    |      |       |      |
| v5   | count int->long, ratio float->double, items[].qty int->long;  |  x   |   x   |  -   |
|      | v4 and v5 producers interleaved in one partition              |      |       |      |
| v6   | amount decimal(5,2) -> decimal(12,2)                          |  x   |   -   |  -   |
| v7   | `note` renamed `remark` (Avro: "aliases": ["note"]; Protobuf: |  x   |   x   |  -   |
|      | the same field number 7); the previous version's producer    |      |       |      |
|      | (still writing `note`) interleaved with v7 in one partition   |      |       |      |

Steps that do not apply (docs/type-mapping.md):
- JSON Schema v5: `integer` is already an Iceberg `long` and `number` already a `double`, so
  there is nothing to widen (the JSON values of count/ratio need 64 bits and double precision
  from v1 on, which the test produces to show it).
- JSON Schema and Protobuf v6: neither has a decimal mapping to widen (JSON Schema has no
  decimal; Protobuf's only decimal column, uint64 -> decimal(20,0), has a fixed precision).
  Their v1 has no `amount` column.
- JSON Schema v7: JSON Schema has no aliases or field numbers; a renamed property is an add.
  After v7 every row's `note` value reads under `remark` (same field id; in Delta the same
  column-mapping id and physical name `note`), old producers included.
- Protobuf v5 changes int32 -> int64 and float -> double under the same field numbers (the
  registry test double does not check Protobuf compatibility, so the default BACKWARD level
  lets it through; Floe's rules allow both under BACKWARD).

After each step (Floe committed up to the high watermarks, in Iceberg and in Delta) every row
ever produced is compared value by value (null where its schema had no such column; float
values as the float32 they were written as, exact after the widening; decimals and longs
exact), with its (partition, offset), through pyiceberg, DuckDB `iceberg_scan`, DuckDB
`delta_scan` and delta-rs: delta-rs 1.6.6 reads every step before the widening and refuses
from v5 on with "Unsupported table features required: [TypeWidening]". Spark's delta reader
(about 10 s a call, run in the background while the next steps go on) reads every Avro step,
each at that step's Delta version by `version=` time travel and the last as the latest
version; for Protobuf and JSON it reads v3's version and the last. At the end the JVM reader
(Iceberg Java) reads every row and v1's snapshot (by id) under v1's schema; the metadata
JSON's schema history (IcebergRead prints rows, not schemas) shows one schema id per change,
field ids never reused, fresh ids for new fields, the kept `label` with its first id, and
the Delta column-mapping ids equal to the Iceberg field ids.
"""
from __future__ import annotations

import concurrent.futures
import dataclasses
import decimal
import json
import pathlib
import struct
from typing import Any, Callable

import deltalake
import pyarrow as pa
import pytest
from confluent_kafka import Producer
from confluent_kafka.schema_registry import SchemaRegistryClient
from confluent_kafka.schema_registry.avro import AvroSerializer
from confluent_kafka.schema_registry.json_schema import JSONSerializer
from confluent_kafka.schema_registry.protobuf import ProtobufSerializer
from confluent_kafka.serialization import MessageField, SerializationContext
from google.protobuf import descriptor_pb2, descriptor_pool, json_format, message_factory
from pyiceberg.catalog.sql import SqlCatalog

from harness import jvm, spark
from harness.floe import FloeRun, default_table_name
from test_core import duckdb_connect
from test_delta_widening import wait_for_delta

PARTITIONS = 2
PER_STEP = 12
# A step's producers: the new version, or [old, new] interleaved in partition 0.
STEP_VERSIONS = {1: [1], 2: [2], 3: [3], 4: [3, 4], 5: [4, 5], 6: [6]}
WIDENING_STEP = 5
# v7 renames `note` (Avro: "aliases": ["note"]; Protobuf: the same field number 7). Its step
# interleaves the format's previous version (still writing `note`) with v7.
RENAME_STEP = 7
RENAMED = {"note": "remark"}
SPARK_MIDDLE_STEP = 3  # Protobuf and JSON: Spark reads this step and the last one

# ---- One logical schema per version, mapped to each format ----------------------------------


@dataclasses.dataclass(frozen=True)
class Struct:
    name: str
    fields: tuple  # of (name, type, optional)


@dataclasses.dataclass(frozen=True)
class List:
    element: Any


@dataclasses.dataclass(frozen=True)
class Decimal:
    precision: int  # scale 2


def fields(version: int, with_decimal: bool) -> tuple:
    wide = version >= WIDENING_STEP
    info = [("name", "string", False), ("score", "int", False)]
    item = [("sku", "string", False), ("qty", "long" if wide else "int", False)]
    if version >= 3:
        info.append(("extra", "string", True))
        item.append(("tag", "string", True))
    out = [("seq", "long", False), ("count", "long" if wide else "int", False),
           ("ratio", "double" if wide else "float", False)]
    if with_decimal:
        out.append(("amount", Decimal(12 if version >= 6 else 5), False))
    if version < 4:
        out.append(("label", "string", False))
    out += [("info", Struct("Info", tuple(info)), False),
            ("items", List(Struct("Item", tuple(item))), False)]
    if version >= 2:
        out.append(("remark" if version >= RENAME_STEP else "note", "string", True))
    return tuple(out)


def avro_schema(fs: tuple) -> dict:
    def typ(t):
        if isinstance(t, Struct):
            return {"type": "record", "name": t.name, "fields": [field(f) for f in t.fields]}
        if isinstance(t, List):
            return {"type": "array", "items": typ(t.element)}
        if isinstance(t, Decimal):
            return {"type": "bytes", "logicalType": "decimal", "precision": t.precision,
                    "scale": 2}
        return t

    def field(f):
        name, t, optional = f
        out = ({"name": name, "type": ["null", typ(t)], "default": None} if optional
               else {"name": name, "type": typ(t)})
        former = [old for old, new in RENAMED.items() if new == name]
        return dict(out, aliases=former) if former else out

    return dict(typ(Struct("Reading", fs)), namespace="evo")


def json_schema(fs: tuple) -> dict:
    def typ(t):
        if isinstance(t, Struct):
            return {"type": "object", "properties": {n: prop(n, ft, o) for n, ft, o in t.fields},
                    "required": [n for n, _, o in t.fields if not o]}
        if isinstance(t, List):
            return {"type": "array", "items": typ(t.element)}
        return {"type": {"int": "integer", "long": "integer", "float": "number",
                         "double": "number", "string": "string"}[t]}

    def prop(name, t, optional):
        s = typ(t)
        return dict(s, type=["null", s["type"]]) if optional else s

    return {"$schema": "http://json-schema.org/draft-07/schema#", "title": "Reading",
            **typ(Struct("Reading", fs))}


FDP = descriptor_pb2.FieldDescriptorProto
PB_SCALAR = {"int": FDP.TYPE_INT32, "long": FDP.TYPE_INT64, "float": FDP.TYPE_FLOAT,
             "double": FDP.TYPE_DOUBLE, "string": FDP.TYPE_STRING}
# Field numbers never change between versions (a widening keeps its number); a removed
# field's number and name are reserved.
PB_NUMBERS = {"Reading": {"seq": 1, "count": 2, "ratio": 3, "label": 4, "info": 5, "items": 6,
                          "note": 7, "remark": 7},
              "Info": {"name": 1, "score": 2, "extra": 3}, "Item": {"sku": 1, "qty": 2, "tag": 3}}


def protobuf_class(fs: tuple):
    """The proto3 message class of one version, built from a FileDescriptorProto (no protoc):
    every version is file evo/reading.proto, message evo.Reading, in a pool of its own."""
    fdp = descriptor_pb2.FileDescriptorProto(name="evo/reading.proto", package="evo",
                                             syntax="proto3")

    def message(parent, s: Struct, full: str):
        msg = parent.add(name=s.name)
        for name, t, optional in s.fields:
            f = msg.field.add(name=name, number=PB_NUMBERS[s.name][name], label=FDP.LABEL_OPTIONAL)
            if isinstance(t, List):
                f.label, t = FDP.LABEL_REPEATED, t.element
            if isinstance(t, Struct):
                message(msg.nested_type, t, f"{full}.{s.name}")
                f.type, f.type_name = FDP.TYPE_MESSAGE, f".{full}.{s.name}.{t.name}"
            else:
                f.type = PB_SCALAR[t]
            if optional:  # proto3 `optional`: explicit presence, a synthetic oneof
                f.proto3_optional, f.oneof_index = True, len(msg.oneof_decl)
                msg.oneof_decl.add(name="_" + name)
        used = {PB_NUMBERS[s.name][n] for n, _, _ in s.fields}
        for name, number in PB_NUMBERS[s.name].items():
            if name not in {n for n, _, _ in s.fields} and number not in used:
                used.add(number)  # `note` and `remark` share number 7: reserved once
                msg.reserved_range.add(start=number, end=number + 1)
                msg.reserved_name.append(name)

    message(fdp.message_type, Struct("Reading", fs), "evo")
    pool = descriptor_pool.DescriptorPool()
    pool.Add(fdp)
    return message_factory.GetMessageClass(pool.FindMessageTypeByName("evo.Reading"))


def without_nulls(v):
    """Optional fields left out instead of sent as null (JSON: a missing optional property;
    Protobuf: an absent `optional` field)."""
    if isinstance(v, dict):
        return {k: without_nulls(x) for k, x in v.items() if x is not None}
    if isinstance(v, list):
        return [without_nulls(x) for x in v]
    return v


@dataclasses.dataclass
class Format:
    name: str
    steps: list[int]
    decimal: bool  # has the decimal column (v1) and its widening (v6)
    float32: bool  # the v1 "float" is a 4-byte float (JSON: number is a double)
    make_serializer: Callable  # (client, field tuple) -> (value dict, ctx) -> bytes
    spark_live: bool  # Spark reads every step (else: SPARK_MIDDLE_STEP and the last)


def avro_serializer(client, fs):
    ser = AvroSerializer(client, json.dumps(avro_schema(fs)))
    return lambda value, ctx: ser(value, ctx)


def protobuf_serializer(client, fs):
    cls = protobuf_class(fs)
    ser = ProtobufSerializer(cls, client)
    return lambda value, ctx: ser(json_format.ParseDict(without_nulls(value), cls()), ctx)


def json_serializer(client, fs):
    ser = JSONSerializer(json.dumps(json_schema(fs)), client)
    return lambda value, ctx: ser(without_nulls(value), ctx)


FORMATS = {f.name: f for f in [
    Format("avro", [1, 2, 3, 4, 5, 6, 7], True, True, avro_serializer, True),
    Format("protobuf", [1, 2, 3, 4, 5, 7], False, True, protobuf_serializer, False),
    Format("json", [1, 2, 3, 4], False, False, json_serializer, False),
]}

# ---- Values, and the rows they must come back as --------------------------------------------


def f32(x: float) -> float:
    return struct.unpack("<f", struct.pack("<f", x))[0]


def make_value(seq: int, version: int, fmt: Format) -> dict:
    """Record `seq` written with `version`: narrow values at their types' limits before the
    widening, values that need 64 bits / double precision / 12 digits after it."""
    wide = version >= WIDENING_STEP or fmt.name == "json"  # JSON: long and double from v1
    v = {"seq": seq,
         "count": ((-1) ** seq * (2**40 + seq) if wide and seq % 3 != 1
                   else [2**31 - 1, -2**31, seq * 1001 - 5][seq % 3]),
         "ratio": seq * 1e10 + 0.123456789 if wide else seq / 10 + 0.05,
         "label": f"label-{seq}",
         "info": {"name": f"name-{seq}", "score": -2**31 if seq % 5 == 0 else seq * 3},
         "items": [{"sku": f"sku-{seq}-{j}", "qty": 2**35 + j if version >= WIDENING_STEP
                    else j - seq} for j in range(seq % 3)]}
    if fmt.decimal:
        v["amount"] = (decimal.Decimal("9999999999.99") - seq if version >= 6
                       else decimal.Decimal(["999.99", "-999.99", "0.01", "123.45"][seq % 4]))
    if version >= 2:
        v["note"] = f"note-{seq}" if seq % 3 else None
    if version >= 3:
        v["info"]["extra"] = f"extra-{seq}" if seq % 2 else None
        for j, item in enumerate(v["items"]):
            item["tag"] = f"tag-{j}" if j % 2 == 0 else None
    if version >= 4:
        del v["label"]
    if version >= RENAME_STEP:
        v["remark"] = v.pop("note")
    return v


def stored(value, t, fmt: Format):
    """What the table holds for `value` of writer type `t` (float -> its float32 value)."""
    if value is None:
        return None
    if isinstance(t, Struct):
        return {n: stored(value.get(n), ft, fmt) for n, ft, _ in t.fields}
    if isinstance(t, List):
        return [stored(x, t.element, fmt) for x in value]
    return f32(value) if t == "float" and fmt.float32 else value


def shape(t):
    """Column names by nesting level: a struct -> {name: shape}, a list -> [shape], else None."""
    if isinstance(t, Struct):
        return {n: shape(ft) for n, ft, _ in t.fields}
    return [shape(t.element)] if isinstance(t, List) else None


def union(a, b):
    """The table's columns after both shapes: a removed column stays (policy keep)."""
    if isinstance(a, dict) and isinstance(b, dict):
        return {**a, **{k: union(a[k], v) if k in a else v for k, v in b.items()}}
    if isinstance(a, list) and isinstance(b, list):
        return [union(a[0], b[0])]
    return b


def renamed(value: dict, step: int) -> dict:
    """A row as the table holds it after `step`: a renamed column keeps its values under
    its new name (the column, not the producer's schema, decides the name)."""
    if step < RENAME_STEP:
        return value
    return {RENAMED.get(k, k): v for k, v in value.items()}


def fill(value, shp):
    """`value` with every column of `shp`: null where its schema had no such column."""
    if value is None or shp is None:
        return value
    if isinstance(shp, list):
        return [fill(x, shp[0]) for x in value]
    return {k: fill(value.get(k), s) for k, s in shp.items()}


# ---- The scenario: produce step by step, check every reader after each step -----------------


@dataclasses.dataclass
class Record:
    seq: int
    version: int
    value: dict
    partition: int = -1
    offset: int = -1


@dataclasses.dataclass
class StepResult:
    step: int
    snapshot_id: int
    delta_version: int
    expected: dict  # seq -> row without _kafka


class Scenario:
    def __init__(self, fmt: Format, kafka_broker, registry, run: FloeRun, topic: str):
        self.fmt, self.kafka, self.run, self.topic = fmt, kafka_broker, run, topic
        self.table = default_table_name(topic)
        self.client = SchemaRegistryClient({"url": registry.url})
        self.ser: dict[int, Callable] = {}
        self.producers: dict[int, Producer] = {}  # one producer per schema version
        self.records: list[Record] = []
        self.columns: dict = {}
        self.results: list[StepResult] = []
        self.spark_pool = concurrent.futures.ThreadPoolExecutor(max_workers=1)
        self.spark_reads: list[tuple] = []  # (StepResult, version or None, future)

    def schema(self, version: int) -> Struct:
        return Struct("Reading", fields(version, self.fmt.decimal))

    def producer(self, version: int) -> Producer:
        if version not in self.producers:
            self.ser[version] = self.fmt.make_serializer(self.client, self.schema(version).fields)
            self.producers[version] = Producer({"bootstrap.servers": self.kafka.bootstrap,
                                                "enable.idempotence": True})
        return self.producers[version]

    def produce(self, step: int) -> list[Record]:
        """PER_STEP records of the step's version over both partitions or, for [old, new],
        old and new producers alternating record by record in partition 0."""
        versions = self.versions(step)
        ctx = SerializationContext(self.topic, MessageField.VALUE)
        out = []
        for i in range(PER_STEP):
            version = versions[i % len(versions)]
            rec = Record(len(self.records), version, None)
            rec.value = make_value(rec.seq, version, self.fmt)
            p = self.producer(version)

            def delivered(err, msg, rec=rec):
                assert err is None, err
                rec.partition, rec.offset = msg.partition(), msg.offset()

            p.produce(self.topic, value=self.ser[version](rec.value, ctx), key=str(rec.seq),
                      partition=0 if len(versions) > 1 else i % PARTITIONS, on_delivery=delivered)
            if len(versions) > 1:
                assert p.flush(10) == 0  # so the next record, from the other producer, is after
            self.records.append(rec)
            out.append(rec)
        for p in self.producers.values():
            assert p.flush(10) == 0
        assert all(r.offset >= 0 for r in out)
        if len(versions) > 1:  # the two schema versions alternate in the partition
            by_offset = sorted(out, key=lambda r: r.offset)
            assert [r.version for r in by_offset] == [versions[i % 2] for i in range(PER_STEP)]
            assert {r.partition for r in out} == {0}
        return out

    def versions(self, step: int) -> list[int]:
        if step == RENAME_STEP:  # an older producer goes on writing `note`
            return [self.fmt.steps[self.fmt.steps.index(step) - 1], step]
        return STEP_VERSIONS[step]

    def root(self) -> pathlib.Path:
        return pathlib.Path(self.run.metadata(self.table)["location"].removeprefix("file://"))

    def step(self, step: int) -> StepResult:
        self.produce(step)
        for v in self.versions(step):
            self.columns = renamed(union(self.columns, shape(self.schema(v))), step)
        hwm = {p: hi for p, (_lo, hi) in self.kafka.watermarks(self.topic).items()}
        self.run.wait_for_positions(self.table, self.topic, hwm, timeout=120)
        md = self.run.metadata(self.table)
        wait_for_delta(self.root(), md["table-uuid"], self.topic, hwm)
        # One schema per change: after the format's k-th step (from 0) the schema id is k.
        assert md["current-schema-id"] == self.fmt.steps.index(step), (step, md["schemas"])
        versions = [int(f.name.split(".")[0]) for f in (self.root() / "_delta_log").glob("*.json")]
        expected = {r.seq: fill(renamed(stored(r.value, self.schema(r.version), self.fmt), step),
                                self.columns)
                    for r in self.records}
        res = StepResult(step, md["current-snapshot-id"], max(versions), expected)
        self.results.append(res)
        check_step(self, res)
        return res

    def positions(self) -> dict:
        return {r.seq: (r.partition, r.offset) for r in self.records}


def compare(reader: str, rows: list[dict], sc: Scenario, res: StepResult,
            encode: Callable = lambda v: v) -> None:
    """Every row, once, with the values and (partition, offset) of the record it came from."""
    where = f"{sc.fmt.name} v{res.step} {reader}"
    seqs = sorted(r["seq"] for r in rows)
    assert seqs == sorted(res.expected), f"{where}: rows {seqs}"
    positions = sc.positions()
    bad = []
    for row in rows:
        kafka = row.pop("_kafka")
        want = encode(res.expected[row["seq"]])
        if row != want or (kafka["partition"], kafka["offset"]) != positions[row["seq"]]:
            bad.append(f"  got  {row} at {kafka['partition']}/{kafka['offset']}\n"
                       f"  want {want} at {positions[row['seq']]}")
    assert not bad, f"{where}: {len(bad)} of {len(rows)} rows differ:\n" + "\n".join(bad[:3])


def arrow_rows(t) -> list[dict]:
    if isinstance(t, pa.RecordBatchReader):
        t = t.read_all()
    return t.to_pylist()


def check_step(sc: Scenario, res: StepResult) -> None:
    """The shared per-step check: every reader returns every row ever produced."""
    run, table, root = sc.run, sc.table, sc.root()
    cat = SqlCatalog("floe", uri=f"sqlite:///{run.catalog_db}", warehouse=f"file://{run.warehouse}")
    compare("pyiceberg", cat.load_table(f"kafka.{table}").scan().to_arrow().to_pylist(), sc, res)

    con = duckdb_connect()
    con.execute("LOAD iceberg")
    compare("duckdb iceberg_scan", arrow_rows(con.execute(
        f"SELECT * FROM iceberg_scan('{run.metadata_location(table)}')").arrow()), sc, res)
    con.execute("LOAD delta")
    compare("duckdb delta_scan", arrow_rows(con.execute(
        f"SELECT * FROM delta_scan('{root}')").arrow()), sc, res)

    # delta-rs reads the table before the widening; the pinned 1.6.6 refuses it after (it has
    # no typeWidening reader feature), never returning wrong values.
    if res.step < WIDENING_STEP:
        dt = deltalake.DeltaTable(str(root))
        assert "typeWidening" not in (dt.protocol().reader_features or [])
        compare("delta-rs", pa.table(dt.scan()).to_pylist(), sc, res)
    elif deltalake.__version__ == "1.6.6":
        with pytest.raises(Exception, match=r"Unsupported table features required: "
                                            r"\[TypeWidening\]"):
            deltalake.DeltaTable(str(root)).scan()
    else:  # a later delta-rs may read it: then with the right values
        compare("delta-rs", pa.table(deltalake.DeltaTable(str(root)).scan()).to_pylist(), sc, res)

    # Spark (about 10 s a call) reads in the background while the next steps run: a step
    # before the last by `version=` time travel to that step's Delta version, so what it
    # reads does not depend on when it runs; the last step as the latest version.
    last = res.step == sc.fmt.steps[-1]
    if sc.fmt.spark_live or last or res.step == SPARK_MIDDLE_STEP:
        version = None if last else res.delta_version
        sc.spark_reads.append((res, version, sc.spark_pool.submit(
            spark.read_delta, root, version=version)))


def check_spark(sc: Scenario) -> None:
    for res, version, future in sc.spark_reads:
        meta, rows = future.result()
        assert meta["version"] == res.delta_version, (res.step, meta)
        compare(f"spark delta (version {meta['version']}"
                f"{', time travel' if version is not None else ''})", rows, sc, res)


def check_rename(sc: Scenario) -> None:
    """v7: `note` became `remark` in place: one column, the same field id, and in Delta the
    same column-mapping id and physical name (`note`, the name its Parquet column keeps)."""
    if RENAME_STEP not in sc.fmt.steps:
        return
    md = sc.run.metadata(sc.table)
    before, after = md["schemas"][-2]["fields"], md["schemas"][-1]["fields"]
    note = next(f for f in before if f["name"] == "note")
    remark = next(f for f in after if f["name"] == "remark")
    assert remark["id"] == note["id"] and not any(f["name"] == "note" for f in after)
    assert json.loads(md["properties"]["schema.name-mapping.default"])
    delta_schema = None
    for f in sorted((sc.root() / "_delta_log").glob("*.json")):
        for line in f.read_text().splitlines():
            if "metaData" in json.loads(line):
                delta_schema = json.loads(json.loads(line)["metaData"]["schemaString"])
    field = next(f for f in delta_schema["fields"] if f["name"] == "remark")
    assert field["metadata"]["delta.columnMapping.id"] == note["id"]
    assert field["metadata"]["delta.columnMapping.physicalName"] == "note"


# ---- Schema history (metadata JSON) and Delta column-mapping ids -----------------------------


def iceberg_paths(fields_: list, prefix: str = "") -> dict[str, tuple[int, bool, Any]]:
    """path -> (field id, required, type) of every field, list element and map key/value."""
    out = {}

    def walk(t, p):
        if isinstance(t, dict) and t["type"] == "struct":
            out.update(iceberg_paths(t["fields"], p + "."))
        elif isinstance(t, dict) and t["type"] == "list":
            out[p + ".element"] = (t["element-id"], t["element-required"], t["element"])
            walk(t["element"], p + ".element")
        elif isinstance(t, dict) and t["type"] == "map":
            out[p + ".key"] = (t["key-id"], True, t["key"])
            out[p + ".value"] = (t["value-id"], t["value-required"], t["value"])
            walk(t["value"], p + ".value")

    for f in fields_:
        out[prefix + f["name"]] = (f["id"], f["required"], f["type"])
        walk(f["type"], prefix + f["name"])
    return out


def delta_ids(fields_: list, prefix: str = "") -> dict[str, int]:
    out = {}
    for f in fields_:
        p = prefix + f["name"]
        out[p] = f["metadata"]["delta.columnMapping.id"]
        t = f["type"]
        while isinstance(t, dict) and t["type"] == "array":
            p, t = p + ".element", t["elementType"]
        if isinstance(t, dict) and t["type"] == "struct":
            out.update(delta_ids(t["fields"], p + "."))
    return out


def check_schema_history(sc: Scenario) -> None:
    md = sc.run.metadata(sc.table)
    schemas = sorted(md["schemas"], key=lambda s: s["schema-id"])
    assert [s["schema-id"] for s in schemas] == list(range(len(sc.fmt.steps)))
    assert md["current-schema-id"] == len(sc.fmt.steps) - 1
    # A renamed column is the same column: its paths are compared under its first name.
    former = {new: old for old, new in RENAMED.items()}
    paths = [{former.get(p, p): v for p, v in iceberg_paths(s["fields"]).items()}
             for s in schemas]
    id_of, path_of = {}, {}
    for i, ps in enumerate(paths):
        for p, (fid, _req, _t) in ps.items():
            assert id_of.setdefault(p, fid) == fid, f"{p} changed id in schema {i}"
            assert path_of.setdefault(fid, p) == p, f"id {fid} reused for {p} in schema {i}"
        if i:  # new fields (v2, v3) get fresh ids, above every earlier one
            new = set(ps) - set(paths[i - 1])
            assert bool(new) == (sc.fmt.steps[i] in (2, 3)), (sc.fmt.steps[i], new)
            assert all(ps[p][0] > max(v[0] for v in paths[i - 1].values()) for p in new)
            assert set(paths[i - 1]) <= set(ps), "a column left the schema (policy keep)"
    assert max(path_of) <= md["last-column-id"]
    # The removed `label` stays, with its first id, optional from v4 on.
    label = [ps["label"] for ps in paths]
    assert len({fid for fid, _, _ in label}) == 1 and label[0][1] and not label[-1][1]
    assert [req for _, req, _ in label] == [s < 4 for s in sc.fmt.steps]
    final = {p: v[2] for p, v in paths[-1].items()}
    wide = WIDENING_STEP in sc.fmt.steps
    assert final["count"] == ("long" if wide or sc.fmt.name == "json" else "int")
    assert final["ratio"] == ("double" if wide or sc.fmt.name == "json" else "float")
    assert final["items.element.qty"] == ("long" if wide or sc.fmt.name == "json" else "int")
    if sc.fmt.decimal:
        assert (paths[0]["amount"][2].replace(" ", ""), final["amount"].replace(" ", "")) \
            == ("decimal(5,2)", "decimal(12,2)")
    # Delta: every metaData names each column by its Iceberg field id.
    for f in sorted((sc.root() / "_delta_log").glob("*.json")):
        for line in f.read_text().splitlines():
            action = json.loads(line)
            if "metaData" in action:
                ids = {former.get(p, p): i for p, i in delta_ids(
                    json.loads(action["metaData"]["schemaString"])["fields"]).items()}
                assert {p: id_of[p] for p in ids} == ids, (f.name, ids)


def check_jvm(sc: Scenario) -> None:
    """Iceberg's Java reader: every row now, and v1's snapshot under v1's schema."""
    run = sc.run
    name = f"kafka.{sc.table}"
    compare("jvm", jvm.read_table(run.catalog_db, "floe", run.warehouse, name), sc,
            sc.results[-1], jvm.encode)
    first = sc.results[0]
    rows = jvm.read_table(run.catalog_db, "floe", run.warehouse, name, first.snapshot_id)
    assert all(set(r) == set(shape(sc.schema(1))) | {"_kafka"} for r in rows)
    compare("jvm v1 snapshot", rows, sc, first, jvm.encode)


@pytest.mark.parametrize("fmt", list(FORMATS))
def test_schema_evolution_scenario(fmt, kafka_broker, registry, tmp_path):
    fmt = FORMATS[fmt]
    topic = f"evo-formats-{fmt.name}"
    kafka_broker.create_topic(topic, partitions=PARTITIONS)
    run = FloeRun(tmp_path, kafka_broker.bootstrap, registry.url,
                  [{"name": topic, "formats": ["iceberg", "delta"]}],
                  defaults={"commit.interval.ms": 1000})
    run.start()
    sc = Scenario(fmt, kafka_broker, registry, run, topic)
    try:
        for step in fmt.steps:
            sc.step(step)
        check_rename(sc)
        check_spark(sc)
        check_schema_history(sc)
        check_jvm(sc)
    finally:
        sc.spark_pool.shutdown(cancel_futures=True)
        sc.producers.clear()
        rc = run.stop()
    assert rc == 0, run.log(60)
    log = run.log_path.read_text(errors="replace")
    assert "suspended" not in log, run.log(60)
