"""Issue 16, item 5: a kill at any point of a schema change leaves both formats consistent.

A topic with `formats: [iceberg, delta]` gets Avro v1 {seq, payload}, then v2 (adds
`note`), then v3 (adds `amount`), with old producers going on meanwhile (a rolling deploy).
Floe is crashed at each schema-change crash point (before the schema commit, after it and
before the Delta metaData, before a Delta entry) and SIGKILLed at random while the changes
land. At the end the multiset of (partition, offset) in Iceberg (pyiceberg, DuckDB) and in
Delta (delta-rs, DuckDB) equals an independent read_committed consumer's, every row holds
the values its producer wrote (null where its schema had no such field), and the Iceberg
schema history has one schema per change with field ids never reused.
"""
from __future__ import annotations

import collections
import json
import pathlib
import random
import time

import deltalake
import pyarrow as pa
from confluent_kafka import Producer
from confluent_kafka.schema_registry import SchemaRegistryClient
from confluent_kafka.schema_registry.avro import AvroSerializer
from confluent_kafka.serialization import MessageField, SerializationContext
from pyiceberg.catalog.sql import SqlCatalog

from harness.floe import FloeRun, default_table_name
from test_core import duckdb_connect
from test_exactly_once import committed_records

BASE = [{"name": "seq", "type": "long"}, {"name": "payload", "type": "string"}]
NOTE = {"name": "note", "type": ["null", "string"], "default": None}
AMOUNT = {"name": "amount", "type": ["null", "double"], "default": None}
VERSIONS = {
    1: BASE,
    2: BASE + [NOTE],
    3: BASE + [NOTE, AMOUNT],
}


def schema(version: int) -> str:
    return json.dumps({"type": "record", "name": "Event", "namespace": "evo",
                       "fields": VERSIONS[version]})


def value_of(seq: int, version: int) -> dict:
    v = {"seq": seq, "payload": f"event-{seq}"}
    if version >= 2:
        v["note"] = f"note-{seq}"
    if version >= 3:
        v["amount"] = seq / 4
    return v


class Producers:
    """One serializer per schema version; each record's version is remembered."""

    def __init__(self, bootstrap: str, registry_url: str, topic: str, partitions: int):
        client = SchemaRegistryClient({"url": registry_url})
        self.ser = {v: AvroSerializer(client, schema(v)) for v in VERSIONS}
        self.producer = Producer({"bootstrap.servers": bootstrap, "enable.idempotence": True,
                                  "linger.ms": 20})
        self.topic = topic
        self.partitions = partitions
        self.version_of: dict[int, int] = {}
        self.next = 0

    def produce(self, n: int, versions: list[int]) -> None:
        ctx = SerializationContext(self.topic, MessageField.VALUE)
        for _ in range(n):
            seq = self.next
            self.next += 1
            version = versions[seq % len(versions)]
            self.version_of[seq] = version
            self.producer.produce(self.topic, key=str(seq).encode(),
                                  value=self.ser[version](value_of(seq, version), ctx),
                                  partition=seq % self.partitions)
            self.producer.poll(0)
        assert self.producer.flush(60) == 0


def check_values(rows: list[dict], version_of: dict[int, int], where: str) -> None:
    for row in rows:
        want = value_of(row["seq"], version_of[row["seq"]])
        assert row["payload"] == want["payload"], (where, row)
        assert row["note"] == want.get("note"), (where, row)
        assert row["amount"] == want.get("amount"), (where, row)


def test_a_kill_at_any_point_of_a_schema_change_is_exactly_once_in_both_formats(
        kafka_broker, registry, tmp_path):
    topic = "evo-crash"
    partitions = 2
    kafka_broker.create_topic(topic, partitions=partitions)
    table = default_table_name(topic)
    run = FloeRun(tmp_path, kafka_broker.bootstrap, registry.url,
                  [{"name": topic, "formats": ["iceberg", "delta"]}],
                  defaults={"commit.interval.ms": 1000})
    prod = Producers(kafka_broker.bootstrap, registry.url, topic, partitions)

    def crash_at(point: str) -> None:
        run.start(env={"FLOE_CRASH_AT": point})
        rc = run.wait_exit(timeout=120)
        assert rc == 86, f"floe did not crash at {point} (exit {rc}):\n{run.log()}"
        assert f"FLOE_CRASH_AT={point}" in run.log(5)

    prod.produce(3000, [1])
    prod.produce(3000, [2, 1])  # v2 arrives, old producers go on
    crash_at("before-schema-commit")  # v1 rows committed, v2's schema not
    crash_at("after-schema-commit")  # Iceberg has v2's schema, Delta not yet
    prod.produce(3000, [3, 2, 1])
    crash_at("before-delta-commit")  # the restart's Delta catch-up (v2's metaData)
    crash_at("after-schema-commit")  # v3's schema
    rnd = random.Random(16)
    for _ in range(3):
        prod.produce(2000, [1, 3])
        run.start()
        time.sleep(rnd.uniform(0.5, 3.0))
        run.kill()
    hwm = {p: hi for p, (lo, hi) in kafka_broker.watermarks(topic).items()}
    run.start()
    run.wait_for_positions(table, topic, hwm, timeout=300)
    assert run.stop() == 0, run.log()

    want = collections.Counter((p, o) for (p, o, _seq) in committed_records(
        kafka_broker.bootstrap, topic))
    assert sum(want.values()) == prod.next

    # Iceberg: pyiceberg and DuckDB.
    cat = SqlCatalog("floe", uri=f"sqlite:///{run.catalog_db}",
                     warehouse=f"file://{run.warehouse}")
    rows = cat.load_table(f"kafka.{table}").scan().to_arrow().to_pylist()
    got = collections.Counter((r["_kafka"]["partition"], r["_kafka"]["offset"]) for r in rows)
    assert got == want, "Iceberg (pyiceberg) is not exactly once"
    check_values(rows, prod.version_of, "pyiceberg")
    con = duckdb_connect()
    con.execute("LOAD iceberg")
    drows = con.execute(f"SELECT _kafka.partition, _kafka.offset FROM "
                        f"iceberg_scan('{run.metadata_location(table)}')").fetchall()
    assert collections.Counter(map(tuple, drows)) == want, "Iceberg (DuckDB)"

    # Delta: delta-rs and DuckDB.
    md = run.metadata(table)
    root = pathlib.Path(md["location"].removeprefix("file://"))
    delta = pa.table(deltalake.DeltaTable(str(root)).scan()).to_pylist()
    dgot = collections.Counter((r["_kafka"]["partition"], r["_kafka"]["offset"]) for r in delta)
    assert dgot == want, "Delta (delta-rs) is not exactly once"
    check_values(delta, prod.version_of, "delta-rs")
    con.execute("LOAD delta")
    ddrows = con.execute(f"SELECT _kafka.partition, _kafka.offset, note FROM "
                         f"delta_scan('{root}')").fetchall()
    assert collections.Counter((p, o) for p, o, _ in ddrows) == want, "Delta (DuckDB)"

    # Schema history: one schema per change, field ids never reused.
    assert [s["schema-id"] for s in md["schemas"]] == [0, 1, 2], md["schemas"]
    ids = {}
    for s in md["schemas"]:
        for f in s["fields"]:
            assert ids.setdefault(f["name"], f["id"]) == f["id"], (f, ids)
    assert len(set(ids.values())) == len(ids)
    assert md["current-schema-id"] == 2
