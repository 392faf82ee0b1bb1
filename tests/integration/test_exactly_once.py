"""Issue 2 exactly-once acceptance: crashes at every commit step and random SIGKILLs, aborted
transactions, and positions recorded in the table.

The reference is an independent read_committed consumer (confluent-kafka): at the end the
table's multiset of (partition, offset, value) must equal what that consumer reads.
"""
from __future__ import annotations

import collections
import json
import pathlib
import re
import random
import threading
import time

from confluent_kafka import Consumer, Producer, TopicPartition
from confluent_kafka.schema_registry import SchemaRegistryClient
from confluent_kafka.schema_registry.avro import AvroSerializer
from confluent_kafka.serialization import MessageField, SerializationContext

from harness import jvm
from harness.floe import FloeRun, default_table_name
from test_core import duckdb_connect

SCHEMA = {
    "type": "record", "name": "Event", "namespace": "eo",
    "fields": [
        {"name": "seq", "type": "long"},
        {"name": "payload", "type": "string"},
        {"name": "amount", "type": ["null", "double"], "default": None},
    ],
}
CRASH_POINTS = ["after-parquet-write", "after-manifest-write", "after-metadata-write",
                "before-pointer-swap", "after-pointer-swap"]


def serializer(registry):
    return AvroSerializer(SchemaRegistryClient({"url": registry.url}), json.dumps(SCHEMA))


def produce_events(bootstrap, ser, topic, start, n, partitions, transactional_id=None,
                   abort_every=0, per_txn=10):
    conf = {"bootstrap.servers": bootstrap, "enable.idempotence": True, "linger.ms": 50,
            "batch.num.messages": 10000}
    if transactional_id:
        conf["transactional.id"] = transactional_id
    p = Producer(conf)
    if transactional_id:
        p.init_transactions(30)
    ctx = SerializationContext(topic, MessageField.VALUE)
    i = start
    txn = 0
    while i < start + n:
        if transactional_id:
            p.begin_transaction()
        for _ in range(per_txn if transactional_id else min(5000, start + n - i)):
            if i >= start + n:
                break
            value = ser({"seq": i, "payload": f"event-{i}", "amount": None if i % 9 == 0 else i / 4},
                        ctx)
            p.produce(topic, value=value, key=str(i).encode(), partition=i % partitions)
            i += 1
        if transactional_id:
            txn += 1
            if abort_every and txn % abort_every == 0:
                p.flush(30)
                p.abort_transaction(30)
            else:
                p.commit_transaction(30)
        else:
            p.poll(0)
    assert p.flush(60) == 0


def crash_and_kill(run: FloeRun, bootstrap: str, ser, topic: str, partitions: int, chunk: int,
                   points: list[str], kills: int, rnd: random.Random,
                   pause_s: tuple[float, float] = (0.3, 2.5), produce=None) -> int:
    """Before each disruption, `chunk` more records: a run that crashes at each of `points`
    (FLOE_CRASH_AT, exit 86), then `kills` runs SIGKILLed after a random pause. Returns the
    records produced. `produce(start, n)` replaces produce_events."""
    if produce is None:
        produce = lambda start, n: produce_events(bootstrap, ser, topic, start, n, partitions)
    produced = 0
    for point in points:
        produce(produced, chunk)
        produced += chunk
        run.start(env={"FLOE_CRASH_AT": point})
        rc = run.wait_exit(timeout=120)
        assert rc == 86, f"floe did not crash at {point} (exit {rc}):\n{run.log()}"
        assert f"FLOE_CRASH_AT={point}" in run.log(5)
    for _ in range(kills):
        produce(produced, chunk)
        produced += chunk
        run.start()
        time.sleep(rnd.uniform(*pause_s))
        run.kill()
    return produced


class SteadyLoad:
    """`per_second` records a second (produce_events, seq from 0) from a thread of its own,
    up to `limit`, until stop(); `produced` counts them."""

    def __init__(self, bootstrap, ser, topic: str, partitions: int, per_second: int = 2_000,
                 limit: int = 200_000):
        self.produced = 0
        self._stop = threading.Event()

        def load():
            while not self._stop.is_set() and self.produced < limit:
                t0 = time.monotonic()
                produce_events(bootstrap, ser, topic, self.produced, per_second, partitions)
                self.produced += per_second
                time.sleep(max(0.0, 1.0 - (time.monotonic() - t0)))

        self._thread = threading.Thread(target=load, daemon=True)
        self._thread.start()

    def stop(self) -> int:
        self._stop.set()
        self._thread.join()
        return self.produced


def committed_records(bootstrap, topic) -> collections.Counter:
    """(partition, offset, seq) of every committed record, read with read_committed."""
    out = collections.Counter()
    for m in committed_messages(bootstrap, topic):
        out[(m.partition(), m.offset(), int(m.key()))] += 1
    return out


def committed_messages(bootstrap, topic):
    """Every committed record of the topic (confluent_kafka Messages), read_committed."""
    c = Consumer({"bootstrap.servers": bootstrap, "group.id": f"ref-{time.time()}",
                  "isolation.level": "read_committed", "enable.auto.commit": False,
                  "auto.offset.reset": "earliest"})
    parts = c.list_topics(topic, timeout=10).topics[topic].partitions
    hwm = {p: c.get_watermark_offsets(TopicPartition(topic, p), timeout=10)[1] for p in parts}
    c.assign([TopicPartition(topic, p, 0) for p in parts])
    out = []
    done = set()
    deadline = time.monotonic() + 120
    while len(done) < len(parts) and time.monotonic() < deadline:
        for m in c.consume(10000, timeout=1.0):
            if not m.error():
                out.append(m)
        for p in parts:
            pos = c.position([TopicPartition(topic, p)])[0].offset
            if pos >= hwm[p] or pos >= 0 and hwm[p] == 0:
                done.add(p)
    c.close()
    return out


def table_records(run: FloeRun, table: str, catalog=None) -> collections.Counter:
    """(partition, offset, seq) of every row of the table, read by pyiceberg through
    `catalog` (default: a SqlCatalog on the run's SQLite file)."""
    from pyiceberg.catalog.sql import SqlCatalog
    cat = catalog or SqlCatalog("floe", uri=f"sqlite:///{run.catalog_db}",
                                warehouse=f"file://{run.warehouse}")
    t = cat.load_table(f"kafka.{table}")
    arrow = t.scan(selected_fields=("seq", "payload", "_kafka")).to_arrow()
    out = collections.Counter()
    for row in arrow.to_pylist():
        assert row["payload"] == f"event-{row['seq']}"
        out[(row["_kafka"]["partition"], row["_kafka"]["offset"], row["seq"])] += 1
    # Every referenced file exists with its recorded size.
    for task in t.scan().plan_files():
        path = pathlib.Path(re.sub(r"^file:(//)?", "", task.file.file_path))
        assert path.stat().st_size == task.file.file_size_in_bytes, path
    return out


def wait_total(run: FloeRun, table: str, want: int, timeout: float = 300.0) -> None:
    deadline = time.monotonic() + timeout
    while True:
        md = run.metadata(table)
        snaps = {s["snapshot-id"]: s for s in (md or {}).get("snapshots", [])}
        cur = (md or {}).get("current-snapshot-id", -1)
        total = int(snaps[cur]["summary"]["total-records"]) if cur in snaps else 0
        if total >= want:
            return
        if run.proc is not None and not run.proc.running():
            raise RuntimeError(f"floe exited with {run.proc.returncode} at {total}/{want}:\n{run.log()}")
        if time.monotonic() > deadline:
            raise TimeoutError(f"table has {total}/{want} records after {timeout}s:\n{run.log()}")
        time.sleep(0.2)


def test_crash_at_every_commit_step_and_random_kills(kafka_broker, registry, tmp_path):
    topic = "eo-crash"
    partitions = 4
    n = 200_000
    kafka_broker.create_topic(topic, partitions=partitions)
    ser = serializer(registry)
    table = default_table_name(topic)
    # Small files so every commit writes several and a crash can land between them.
    run = FloeRun(tmp_path, kafka_broker.bootstrap, registry.url, [{"name": topic}],
                  defaults={"commit.interval.ms": 1000, "target.file.size.bytes": 1 << 20})
    # Ten disruptions; before each, 20,000 more records, so every run has work in flight.
    produced = crash_and_kill(run, kafka_broker.bootstrap, ser, topic, partitions, n // 10,
                              CRASH_POINTS, 5, random.Random(7))
    assert produced == n
    hwm = {p: hi for p, (lo, hi) in kafka_broker.watermarks(topic).items()}

    run.start()
    run.wait_for_positions(table, topic, hwm, timeout=300)
    assert run.stop() == 0, run.log()

    want = committed_records(kafka_broker.bootstrap, topic)
    assert sum(want.values()) == n
    got = table_records(run, table)
    dupes = [k for k, v in got.items() if v > 1]
    assert not dupes, f"{len(dupes)} duplicated records, e.g. {dupes[:3]}"
    missing = set(want) - set(got)
    assert not missing, f"{len(missing)} records missing, e.g. {sorted(missing)[:3]}"
    assert got == want

    # DuckDB and the JVM reader see the same multiset.
    con = duckdb_connect()
    con.execute("LOAD iceberg")
    rows = con.execute(f"SELECT _kafka.partition, _kafka.offset, seq FROM "
                       f"iceberg_scan('{run.metadata_location(table)}')").fetchall()
    assert collections.Counter(map(tuple, rows)) == want
    jrows = jvm.read_table(run.catalog_db, "floe", run.warehouse, f"kafka.{table}")
    assert collections.Counter((r["_kafka"]["partition"], r["_kafka"]["offset"], r["seq"])
                               for r in jrows) == want


def test_aborted_transactions_never_appear(kafka_broker, registry, tmp_path):
    topic = "eo-txn"
    partitions = 4
    kafka_broker.create_topic(topic, partitions=partitions)
    ser = serializer(registry)
    # 30 transactions of 10 records; every third is aborted.
    produce_events(kafka_broker.bootstrap, ser, topic, 0, 300, partitions,
                   transactional_id="floe-test-txn", abort_every=3)
    table = default_table_name(topic)
    run = FloeRun(tmp_path, kafka_broker.bootstrap, registry.url, [{"name": topic}])
    run.start()
    wait_total(run, table, 200)
    # The topic keeps advancing across the markers: more committed records arrive.
    produce_events(kafka_broker.bootstrap, ser, topic, 1000, 100, partitions,
                   transactional_id="floe-test-txn-2", abort_every=0)
    wait_total(run, table, 300)
    # The recorded positions pass the trailing markers: waited for, not assumed to have
    # happened within a fixed sleep (a later commit may carry them on a busy machine).
    hwm = {p: hi for p, (lo, hi) in kafka_broker.watermarks(topic).items()}
    run.wait_for_positions(table, topic, hwm, timeout=60)
    time.sleep(2.5)  # a further commit interval: nothing else may appear
    assert run.stop() == 0, run.log()
    got = table_records(run, table)
    want = committed_records(kafka_broker.bootstrap, topic)
    assert sum(want.values()) == 300
    assert got == want
    aborted = {s for s in range(300) if (s // 10 + 1) % 3 == 0}
    assert not aborted & {seq for (_, _, seq) in got}
    # The recorded positions passed the trailing markers: they equal the high watermarks.
    hwm = {p: hi for p, (lo, hi) in kafka_broker.watermarks(topic).items()}
    assert run.table_positions(table, topic) == hwm



def test_broker_outage_is_retried_and_nothing_is_lost(kafka_broker, registry, tmp_path):
    topic = "eo-broker-outage"
    kafka_broker.create_topic(topic, partitions=2)
    ser = serializer(registry)
    produce_events(kafka_broker.bootstrap, ser, topic, 0, 5000, 2)
    table = default_table_name(topic)
    run = FloeRun(tmp_path, kafka_broker.bootstrap, registry.url, [{"name": topic}])
    run.start()
    wait_total(run, table, 5000)
    kafka_broker.restart(kill=True)  # the broker dies and comes back on the same port
    produce_events(kafka_broker.bootstrap, ser, topic, 5000, 5000, 2)
    hwm = {p: hi for p, (lo, hi) in kafka_broker.watermarks(topic).items()}
    run.wait_for_positions(table, topic, hwm, timeout=180)
    assert run.proc.running()
    assert run.stop() == 0, run.log()
    assert table_records(run, table) == committed_records(kafka_broker.bootstrap, topic)


def test_changed_cluster_id_suspends_the_topic(kafka_broker, registry, tmp_path):
    topic = "eo-cluster"
    kafka_broker.create_topic(topic, partitions=1)
    ser = serializer(registry)
    produce_events(kafka_broker.bootstrap, ser, topic, 0, 50, 1)
    table = default_table_name(topic)
    run = FloeRun(tmp_path, kafka_broker.bootstrap, registry.url, [{"name": topic}])
    run.start()
    run.wait_for_positions(table, topic, {0: 50})
    assert run.stop() == 0
    # Another writer (pyiceberg, through the same SQLite catalog) says the table came from
    # another cluster: Floe must not apply these positions to this broker.
    from pyiceberg.catalog.sql import SqlCatalog
    cat = SqlCatalog("floe", uri=f"sqlite:///{run.catalog_db}", warehouse=f"file://{run.warehouse}")
    t = cat.load_table(f"kafka.{table}")
    with t.transaction() as tx:
        tx.set_properties({"floe.kafka.cluster-id": "some-other-cluster"})
    run.start()
    log = run.wait_for_log(f"topic {topic} suspended")
    assert "some-other-cluster" in log and kafka_broker.cluster_id in log
    assert run.stop() == 0
    assert sum(table_records(run, table).values()) == 50
