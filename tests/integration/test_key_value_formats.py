"""Issue 5 (keys, topics without registry framing): `value.format: binary` stores the whole
value in a `value` binary column (tombstones null); `key.format: string` adds a top-level `key`
string column (a non-UTF-8 key is an invalid record, handled by on.invalid.record) while
`_kafka.key` keeps the raw bytes. Read back through pyiceberg, DuckDB and delta-rs.
"""
from __future__ import annotations

import json

import deltalake
import pyarrow as pa
from confluent_kafka import Producer
from pyiceberg.catalog.sql import SqlCatalog

from harness.floe import FloeRun, default_table_name
from test_core import duckdb_connect
from test_exactly_once import produce_events, serializer


def produce_raw(bootstrap: str, topic: str, records: list[tuple[bytes | None, bytes | None]]):
    p = Producer({"bootstrap.servers": bootstrap, "enable.idempotence": True})
    for key, value in records:
        p.produce(topic, key=key, value=value, partition=0)
    assert p.flush(30) == 0


def iceberg_rows(run: FloeRun, table: str) -> list[dict]:
    cat = SqlCatalog("floe", uri=f"sqlite:///{run.catalog_db}", warehouse=f"file://{run.warehouse}")
    return cat.load_table(f"kafka.{table}").scan().to_arrow().to_pylist()


def test_binary_values_and_string_keys(kafka_broker, registry, tmp_path):
    topic = "raw-bytes"
    kafka_broker.create_topic(topic, partitions=1)
    records = [
        (b"k0", b"\x00\xff not json, not framed"),
        ("ключ 🙂".encode(), json.dumps({"a": 1}).encode()),
        (None, b"no key"),
        (b"tomb", None),                 # a tombstone: null value
        (b"", b""),                      # empty key, empty value
        (b"\xc3\x28", b"bad key"),       # not UTF-8: invalid record, skipped
        (b"k6", bytes(range(256)) * 40),  # 10 KiB of every byte value
    ]
    produce_raw(kafka_broker.bootstrap, topic, records)
    table = default_table_name(topic)
    run = FloeRun(tmp_path, kafka_broker.bootstrap, registry.url,
                  [{"name": topic, "value.format": "binary", "key.format": "string",
                    "on.invalid.record": "skip", "formats": ["iceberg", "delta"]}])
    run.start()
    run.wait_for_positions(table, topic, {0: len(records)})
    assert run.stop() == 0, run.log()
    assert "offset 5: key is not valid UTF-8" in run.log(200)

    want = {o: (k, v) for o, (k, v) in enumerate(records) if o != 5}
    rows = iceberg_rows(run, table)
    assert [f for f in rows[0]] == ["value", "key", "_kafka"]
    got = {r["_kafka"]["offset"]: r for r in rows}
    assert set(got) == set(want)
    for o, (k, v) in want.items():
        r = got[o]
        assert r["value"] == v, o
        assert r["key"] == (k.decode() if k is not None else None), o
        assert r["_kafka"]["key"] == k, o

    con = duckdb_connect()
    con.execute("LOAD iceberg")
    duck = dict(con.execute(f"SELECT _kafka.offset, value FROM "
                            f"iceberg_scan('{run.metadata_location(table)}')").fetchall())
    assert duck == {o: v for o, (k, v) in want.items()}

    root = run.metadata(table)["location"].removeprefix("file://")
    delta = pa.table(deltalake.DeltaTable(root).scan()).to_pylist()
    assert {r["_kafka"]["offset"]: (r["key"], r["value"]) for r in delta} == \
        {o: (k.decode() if k is not None else None, v) for o, (k, v) in want.items()}


def test_registry_values_with_string_keys(kafka_broker, registry, tmp_path):
    topic = "avro-string-keys"
    kafka_broker.create_topic(topic, partitions=2)
    produce_events(kafka_broker.bootstrap, serializer(registry), topic, 0, 500, 2)
    table = default_table_name(topic)
    run = FloeRun(tmp_path, kafka_broker.bootstrap, registry.url,
                  [{"name": topic, "key.format": "string"}])
    run.start()
    hwm = {p: hi for p, (lo, hi) in kafka_broker.watermarks(topic).items()}
    run.wait_for_positions(table, topic, hwm)
    assert run.stop() == 0, run.log()
    rows = iceberg_rows(run, table)
    assert len(rows) == 500
    assert list(rows[0]) == ["seq", "payload", "amount", "key", "_kafka"]
    for r in rows:
        # produce_events keys each record with str(seq).
        assert r["key"] == str(r["seq"]) and r["_kafka"]["key"] == str(r["seq"]).encode()
        assert r["payload"] == f"event-{r['seq']}"


def register_json(registry, subject: str, schema: dict) -> int:
    from confluent_kafka.schema_registry import Schema, SchemaRegistryClient
    client = SchemaRegistryClient(registry.client_conf())
    return client.register_schema(subject, Schema(json.dumps(schema), "JSON"))


def test_plain_json_values_follow_the_subjects_latest_version(kafka_broker, registry, tmp_path):
    """value.format: json: unframed JSON decoded with the latest JSON Schema of
    `<topic>-value`; a record the version in use rejects makes Floe look for a newer
    version before calling it invalid (here v2 drops `tags`, so {"tags": 5} is fine)."""
    topic = "plain-json"
    kafka_broker.create_topic(topic, partitions=1)
    v1 = {"type": "object", "properties": {
        "id": {"type": "integer"},
        "name": {"type": ["null", "string"]},
        "at": {"type": "string", "format": "date-time"},
        "tags": {"type": "array", "items": {"type": "string"}}},
        "required": ["id", "at"]}
    register_json(registry, f"{topic}-value", v1)
    first = [
        {"id": 1, "name": "ä 🙂", "at": "2026-12-02T10:00:00Z", "tags": ["a", "b"]},
        {"id": -(2**63), "name": None, "at": "2026-12-02T10:00:00.123456+01:00", "tags": []},
        {"id": 2**63 - 1, "at": "1970-01-01T00:00:00Z", "extra": {"ignored": True}},
    ]
    produce_raw(kafka_broker.bootstrap, topic,
                [(None, json.dumps(v).encode()) for v in first])
    table = default_table_name(topic)
    run = FloeRun(tmp_path, kafka_broker.bootstrap, registry.url,
                  [{"name": topic, "value.format": "json", "on.invalid.record": "skip",
                    "formats": ["iceberg", "delta"]}])
    run.start()
    run.wait_for_positions(table, topic, {0: 3})

    v2 = {k: v for k, v in v1.items()}
    v2["properties"] = {k: v for k, v in v1["properties"].items() if k != "tags"}
    register_json(registry, f"{topic}-value", v2)
    second = [
        (None, json.dumps({"id": 4, "at": "2026-12-02T11:00:00Z", "tags": 5}).encode()),
        (None, b'{"id": "not a number", "at": "2026-12-02T11:00:00Z"}'),  # invalid: skipped
        (None, b'{"id": 6, "at": '),                                       # truncated: skipped
        (None, json.dumps({"id": 7, "at": "2026-12-02T12:00:00Z"}).encode()),
    ]
    produce_raw(kafka_broker.bootstrap, topic, second)
    run.wait_for_positions(table, topic, {0: 7})
    assert run.stop() == 0, run.log()
    log = run.log(400)
    assert "has version 2" in log
    assert "offset 4:" in log and "offset 5:" in log

    import datetime as dt
    utc = dt.timezone.utc
    want = {
        0: (1, "ä 🙂", dt.datetime(2026, 12, 2, 10, tzinfo=utc), ["a", "b"]),
        1: (-(2**63), None, dt.datetime(2026, 12, 2, 9, 0, 0, 123456, tzinfo=utc), []),
        2: (2**63 - 1, None, dt.datetime(1970, 1, 1, tzinfo=utc), None),
        3: (4, None, dt.datetime(2026, 12, 2, 11, tzinfo=utc), None),
        6: (7, None, dt.datetime(2026, 12, 2, 12, tzinfo=utc), None),
    }
    rows = iceberg_rows(run, table)
    assert list(rows[0]) == ["id", "name", "at", "tags", "_kafka"]
    got = {r["_kafka"]["offset"]: (r["id"], r["name"], r["at"], r["tags"]) for r in rows}
    assert got == want
    root = run.metadata(table)["location"].removeprefix("file://")
    delta = pa.table(deltalake.DeltaTable(root).scan()).to_pylist()
    assert {r["_kafka"]["offset"]: (r["id"], r["name"], r["at"], r["tags"]) for r in delta} \
        == want


def test_plain_json_without_a_subject_suspends(kafka_broker, registry, tmp_path):
    topic = "plain-json-nosubject"
    kafka_broker.create_topic(topic, partitions=1)
    produce_raw(kafka_broker.bootstrap, topic, [(None, b'{"id": 1}')])
    run = FloeRun(tmp_path, kafka_broker.bootstrap, registry.url,
                  [{"name": topic, "value.format": "json", "on.invalid.record": "skip"}])
    run.start()
    run.wait_for_log("suspended", timeout=60)
    assert run.stop() == 0, run.log()
    log = run.log(100)
    assert f"subject '{topic}-value'" in log and "suspended" in log, log


def _key_run(kafka_broker, registry, tmp_path, topic, records, extra=None):
    """Produces (key bytes, value dict) records with Avro values and runs Floe with
    key.format: registry; returns the Floe run and the table's rows by offset."""
    from confluent_kafka.schema_registry.avro import AvroSerializer
    from confluent_kafka.serialization import MessageField, SerializationContext
    from confluent_kafka.schema_registry import SchemaRegistryClient
    from test_exactly_once import SCHEMA
    kafka_broker.create_topic(topic, partitions=1)
    ser = AvroSerializer(SchemaRegistryClient({"url": registry.url}), json.dumps(SCHEMA))
    ctx = SerializationContext(topic, MessageField.VALUE)
    produce_raw(kafka_broker.bootstrap, topic,
                [(k, ser(v, ctx)) for k, v in records])
    table = default_table_name(topic)
    run = FloeRun(tmp_path, kafka_broker.bootstrap, registry.url,
                  [{"name": topic, "key.format": "registry", "formats": ["iceberg", "delta"],
                    **(extra or {})}])
    run.start()
    run.wait_for_positions(table, topic, {0: len(records)})
    assert run.stop() == 0, run.log()
    rows = {r["_kafka"]["offset"]: r for r in iceberg_rows(run, table)}
    root = run.metadata(table)["location"].removeprefix("file://")
    delta = {r["_kafka"]["offset"]: r for r in pa.table(deltalake.DeltaTable(root).scan()).to_pylist()}
    return run, table, rows, delta


def _key_serializer(registry, topic, kind, schema):
    from confluent_kafka.schema_registry import SchemaRegistryClient
    from confluent_kafka.schema_registry.avro import AvroSerializer
    from confluent_kafka.schema_registry.json_schema import JSONSerializer
    from confluent_kafka.serialization import MessageField, SerializationContext
    client = SchemaRegistryClient({"url": registry.url})
    ser = (AvroSerializer(client, json.dumps(schema)) if kind == "avro"
           else JSONSerializer(json.dumps(schema), client))
    ctx = SerializationContext(topic, MessageField.KEY)
    return lambda k: ser(k, ctx)


def test_registry_keys_avro_record_and_primitive_and_json(kafka_broker, registry, tmp_path):
    """key.format: registry: an Avro record key becomes a `key` struct, an Avro "string" key
    a `key` string, a JSON Schema key a struct; null keys are null; a key that does not decode
    is an invalid record (skip here) and leaves no partial row."""
    value = {"seq": 1, "payload": "p", "amount": 2.5}
    # Avro record keys.
    topic = "keys-avro-record"
    kser = _key_serializer(registry, topic, "avro", {
        "type": "record", "name": "OrderKey",
        "fields": [{"name": "region", "type": "string"}, {"name": "id", "type": "long"}]})
    records = [(kser({"region": "eu-ü", "id": 2**63 - 1}), value),
               (None, value),
               (kser({"region": "", "id": -1}), value),
               (b"\x00\x00\x00\x7f\xff" + b"junk", value)]  # unknown key schema id: invalid
    run, table, rows, delta = _key_run(kafka_broker, registry, tmp_path / "a", topic, records,
                                       {"on.invalid.record": "skip"})
    assert list(rows[0]) == ["seq", "payload", "amount", "key", "_kafka"]
    want = {0: {"region": "eu-ü", "id": 2**63 - 1}, 1: None, 2: {"region": "", "id": -1}}
    assert {o: r["key"] for o, r in rows.items()} == want
    assert {o: r["key"] for o, r in delta.items()} == want
    assert rows[0]["_kafka"]["key"] == records[0][0]
    assert "offset 3:" in run.log(300)

    # An Avro primitive key.
    topic = "keys-avro-string"
    kser = _key_serializer(registry, topic, "avro", "string")
    records = [(kser("k-ключ"), value), (kser(""), value), (None, value)]
    run, table, rows, delta = _key_run(kafka_broker, registry, tmp_path / "b", topic, records)
    want = {0: "k-ключ", 1: "", 2: None}
    assert {o: r["key"] for o, r in rows.items()} == want
    assert {o: r["key"] for o, r in delta.items()} == want

    # A JSON Schema key; the first record has no key, so the column's type comes from the
    # latest version of subject <topic>-key.
    topic = "keys-json"
    kschema = {"type": "object", "properties": {"user": {"type": "string"},
                                                 "n": {"type": "integer"}},
               "required": ["user"]}
    kser = _key_serializer(registry, topic, "json", kschema)
    first = kser({"user": "a", "n": 1})  # registers <topic>-key
    records = [(None, value), (first, value), (kser({"user": "b"}), value)]
    run, table, rows, delta = _key_run(kafka_broker, registry, tmp_path / "c", topic, records)
    want = {0: None, 1: {"user": "a", "n": 1}, 2: {"user": "b", "n": None}}
    assert {o: r["key"] for o, r in rows.items()} == want
    assert {o: r["key"] for o, r in delta.items()} == want


def test_registry_keys_protobuf_message_with_references(kafka_broker, registry, tmp_path):
    """A Protobuf key (a message importing another file: schema references) becomes a `key`
    struct; the key's message indexes are read like a value's."""
    from confluent_kafka.schema_registry import SchemaRegistryClient
    from confluent_kafka.schema_registry.protobuf import ProtobufSerializer
    from confluent_kafka.serialization import MessageField, SerializationContext
    from test_protobuf_json import PB
    topic = "keys-protobuf"
    ser = ProtobufSerializer(PB["Point"], SchemaRegistryClient({"url": registry.url}),
                             {"use.deprecated.format": False})
    ctx = SerializationContext(topic, MessageField.KEY)

    def point(x, label, deltas, meta=None):
        p = PB["Point"](x=x, label=label, deltas=deltas)
        if meta is not None:
            p.meta.source, p.meta.version = meta
        return p

    keys = [point(2**63 - 1, "ü 🙂", [-(2**31), 0, 2**31 - 1], ("src", 2**32 - 1)),
            point(0, "", []),  # every field at its default: an empty message
            None]
    value = {"seq": 1, "payload": "p", "amount": None}
    records = [(ser(k, ctx) if k is not None else None, value) for k in keys]
    run, table, rows, delta = _key_run(kafka_broker, registry, tmp_path, topic, records)
    want = {0: {"x": 2**63 - 1, "label": "ü 🙂", "deltas": [-(2**31), 0, 2**31 - 1],
                "meta": {"source": "src", "version": 2**32 - 1}},
            1: {"x": 0, "label": "", "deltas": [], "meta": None},
            2: None}
    assert {o: r["key"] for o, r in rows.items()} == want
    assert {o: r["key"] for o, r in delta.items()} == want


def test_registry_keys_evolve_with_their_subject(kafka_broker, registry, tmp_path):
    """key.format: registry: a key schema that adds a field (a new version of <topic>-key)
    evolves the table's `key` struct like a value schema does: the new field is null in the
    rows written before, and old and new key versions interleave."""
    topic = "keys-evolve"
    v1 = {"type": "record", "name": "OrderKey",
          "fields": [{"name": "region", "type": "string"}, {"name": "id", "type": "long"}]}
    v2 = {**v1, "fields": v1["fields"] + [{"name": "zone", "type": ["null", "string"],
                                          "default": None}]}
    old = _key_serializer(registry, topic, "avro", v1)
    new = _key_serializer(registry, topic, "avro", v2)
    value = {"seq": 1, "payload": "p", "amount": None}
    records = [(old({"region": "eu", "id": 1}), value),
               (new({"region": "us", "id": 2, "zone": "z-1"}), value),
               (old({"region": "ap", "id": 3}), value),  # an old producer goes on
               (new({"region": "eu", "id": 4, "zone": None}), value)]
    run, table, rows, delta = _key_run(kafka_broker, registry, tmp_path, topic, records)
    want = {0: {"region": "eu", "id": 1, "zone": None},
            1: {"region": "us", "id": 2, "zone": "z-1"},
            2: {"region": "ap", "id": 3, "zone": None},
            3: {"region": "eu", "id": 4, "zone": None}}
    assert {o: r["key"] for o, r in rows.items()} == want
    assert {o: r["key"] for o, r in delta.items()} == want
    md = run.metadata(table)
    assert len(md["schemas"]) == 2, md["schemas"]
    assert "schema evolved" in run.log(300)
