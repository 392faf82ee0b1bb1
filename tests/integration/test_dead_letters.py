"""Issue 19, dead letters: under `on.invalid.record: dlq` a topic with malformed records
(unframed, an unknown schema id, truncated, a payload of the wrong type) keeps running; the
table holds exactly the good records and `<table>__dlq` exactly the bad ones with their raw
value and the reason, in Iceberg and Delta, read by pyiceberg, DuckDB and delta-rs; crashes
at every commit step (the dead letters' commit included) and random kill -9 leave both
tables exactly once against a read_committed consumer."""
from __future__ import annotations

import collections
import json
import os
import random
import subprocess
import time

import deltalake
import pyarrow as pa
from confluent_kafka import Producer
from confluent_kafka.serialization import MessageField, SerializationContext

from harness.floe import FloeRun, default_table_name, floe_binary
from harness.rest import http
from test_core import duckdb_connect
from test_delta import table_root
from test_exactly_once import (CRASH_POINTS, SCHEMA, committed_messages, crash_and_kill,
                               serializer)

DLQ = {"on.invalid.record": "dlq", "formats": ["iceberg", "delta"]}
UNKNOWN_ID = b"\x00\x00\x06\x7a\xa2" + b"\x02"  # schema id 424610: not registered


def stray_value(registry) -> bytes:
    """A record of another topic's subject (`dlq-other-producer-value`, a schema of its
    own): what a producer writing to the wrong topic sends (issue 38 item 1)."""
    from confluent_kafka.schema_registry import SchemaRegistryClient
    from confluent_kafka.schema_registry.avro import AvroSerializer
    schema = {"type": "record", "name": "Payment", "fields": [{"name": "cents", "type": "long"}]}
    ser = AvroSerializer(SchemaRegistryClient({"url": registry.url}), json.dumps(schema))
    return ser({"cents": 125}, SerializationContext("dlq-other-producer", MessageField.VALUE))


def bad_value(kind: str, good: bytes, stray: bytes | None = None) -> bytes:
    if kind == "other-subject":
        assert stray is not None
        return stray
    if kind == "unframed":
        return b'{"seq": 1, "not": "framed"}'
    if kind == "truncated":
        return good[:-3]
    if kind == "wrong-type":
        # Framed with the topic's schema id, but the payload is JSON text, not Avro: the
        # string length it implies runs past the end.
        return good[:5] + b'{"seq": "not a number", "payload": 7}'
    assert kind == "unknown-id"
    return UNKNOWN_ID


def produce_mixed(bootstrap, ser, topic: str, start: int, n: int, partitions: int,
                  kinds: list[str], every: int = 20, stray: bytes | None = None) -> None:
    """`n` records from seq `start`, one in `every` (5%) bad, of `kinds` in turn. Good
    records are keyed by their seq, bad ones `bad-<kind>-<seq>`. `stray`: the value of
    kind "other-subject" (stray_value)."""
    p = Producer({"bootstrap.servers": bootstrap, "enable.idempotence": True, "linger.ms": 20})
    ctx = SerializationContext(topic, MessageField.VALUE)
    for i in range(start, start + n):
        good = ser({"seq": i, "payload": f"event-{i}", "amount": 1.5}, ctx)
        if i % every == every - 1:
            kind = kinds[(i // every) % len(kinds)]
            p.produce(topic, key=f"bad-{kind}-{i}".encode(),
                      value=bad_value(kind, good, stray), partition=i % partitions)
        else:
            p.produce(topic, key=str(i).encode(), value=good, partition=i % partitions)
        if i % 5000 == 0:
            p.poll(0)
    assert p.flush(60) == 0


def reference(bootstrap: str, topic: str) -> dict[tuple[int, int], tuple[str, bytes]]:
    """(partition, offset) → (key, value) of every committed record (read_committed)."""
    return {(m.partition(), m.offset()): (m.key().decode(), m.value())
            for m in committed_messages(bootstrap, topic)}


def iceberg_rows(run: FloeRun, table: str, fields=None) -> list[dict]:
    from pyiceberg.catalog.sql import SqlCatalog
    cat = SqlCatalog("floe", uri=f"sqlite:///{run.catalog_db}", warehouse=f"file://{run.warehouse}")
    t = cat.load_table(f"kafka.{table}")
    scan = t.scan(selected_fields=fields) if fields else t.scan()
    return scan.to_arrow().to_pylist()


def delta_po(root) -> collections.Counter:
    dt = deltalake.DeltaTable(str(root))
    return collections.Counter((r["_kafka"]["partition"], r["_kafka"]["offset"])
                               for r in pa.table(dt.scan(columns=["_kafka"])).to_pylist())


def new_topic(kafka_broker, registry, topic: str, partitions: int):
    """Creates the topic: its value serializer, table and dead-letter table names."""
    kafka_broker.create_topic(topic, partitions=partitions)
    table = default_table_name(topic)
    return serializer(registry), table, table + "__dlq"


def po(rows) -> collections.Counter:
    return collections.Counter((r["_kafka"]["partition"], r["_kafka"]["offset"]) for r in rows)


def test_dead_letters_hold_exactly_the_bad_records_with_reasons(kafka_broker, registry, tmp_path):
    topic, partitions = "dlq-readers", 2
    ser, table, dlq_table = new_topic(kafka_broker, registry, topic, partitions)
    # 2000 records, 100 bad, 20 of each kind. The first unknown id is asked for again for
    # 30 s; the later ones count as invalid at once. A record of another subject is one
    # bad record too, never a schema change (issue 38 item 1).
    produce_mixed(kafka_broker.bootstrap, ser, topic, 0, 2000, partitions,
                  ["unframed", "truncated", "wrong-type", "unknown-id", "other-subject"],
                  stray=stray_value(registry))
    ref = reference(kafka_broker.bootstrap, topic)
    assert len(ref) == 2000
    good = {k: v for k, v in ref.items() if not v[0].startswith("bad-")}
    bad = {k: v for k, v in ref.items() if v[0].startswith("bad-")}
    assert len(bad) == 100

    run = FloeRun(tmp_path, kafka_broker.bootstrap, registry.url, [{"name": topic, **DLQ}])
    run.start()
    rest = run.rest_uri()
    hwm = {p: hi for p, (lo, hi) in kafka_broker.watermarks(topic).items()}
    run.wait_for_positions(table, topic, hwm, timeout=180)
    metrics = http("GET", rest + "/metrics").body.decode()
    status = http("GET", rest + f"/floe/v1/topics/{topic}").json()

    # The main table: exactly the good records.
    main = iceberg_rows(run, table, ("seq", "payload", "_kafka"))
    assert po(main) == collections.Counter(good.keys())
    for r in main:
        key = (r["_kafka"]["partition"], r["_kafka"]["offset"])
        assert str(r["seq"]) == good[key][0] and r["payload"] == f"event-{r['seq']}"

    # The dead-letter table: exactly the bad ones, raw, with the reason.
    dead = iceberg_rows(run, dlq_table)
    assert po(dead) == collections.Counter(bad.keys())
    reasons = {"unframed": "not registry framed", "truncated": "", "wrong-type": "",
               "unknown-id": "has no schema id 424610",
               "other-subject": "registered under subject 'dlq-other-producer-value' "
                                f"version 1, not under this topic's subject '{topic}-value'"}
    stages = collections.Counter()
    for r in dead:
        p, o = r["_kafka"]["partition"], r["_kafka"]["offset"]
        key, value = bad[(p, o)]
        kind = key.split("-", 1)[1].rsplit("-", 1)[0]
        assert r["value"] == value, (kind, r)
        assert r["_kafka"]["key"] == key.encode()
        e = r["error"]
        assert f"topic {topic} partition {p} offset {o}:" in e["reason"], e
        assert reasons[kind] in e["reason"], (kind, e)
        assert e["stage"] == ("schema" if kind == "unknown-id" else "decode"), (kind, e)
        if kind in ("truncated", "wrong-type"):
            assert e["schema_id"] is not None and e["schema_id"] > 0, e
        elif kind == "unframed":
            assert e["schema_id"] is None, e
        assert e["time"] is not None
        stages[kind] += 1
    assert stages == {k: 20 for k in reasons}, stages
    # The stray schema's field never reached the table.
    from pyiceberg.catalog.sql import SqlCatalog
    cat = SqlCatalog("floe", uri=f"sqlite:///{run.catalog_db}", warehouse=f"file://{run.warehouse}")
    assert "cents" not in [f.name for f in cat.load_table(f"kafka.{table}").schema().fields]

    # The counter and the admin status say the same number.
    line = next(l for l in metrics.splitlines()
                if l.startswith("floe_records_dead_lettered_total{") and topic in l)
    assert float(line.rsplit(" ", 1)[1]) == 100, line
    assert status["records-dead-lettered"] == 100, status
    assert run.stop() == 0, run.log()

    # DuckDB (iceberg and delta) and delta-rs read the same (partition, offset) sets.
    con = duckdb_connect()
    con.execute("LOAD iceberg")
    con.execute("LOAD delta")
    for t, want in ((table, good), (dlq_table, bad)):
        rows = con.execute(f"SELECT _kafka.partition, _kafka.offset FROM "
                           f"iceberg_scan('{run.metadata_location(t)}')").fetchall()
        assert collections.Counter(map(tuple, rows)) == collections.Counter(want.keys()), t
        root = table_root(run, t)
        rows = con.execute(f"SELECT _kafka.partition, _kafka.offset FROM delta_scan('{root}')").fetchall()
        assert collections.Counter(map(tuple, rows)) == collections.Counter(want.keys()), t
        assert delta_po(root) == collections.Counter(want.keys()), t
    reasons_duck = con.execute(
        f"SELECT count(*) FROM delta_scan('{table_root(run, dlq_table)}') "
        f"WHERE error.reason LIKE '%not registry framed%'").fetchone()[0]
    assert reasons_duck == stages["unframed"]


def test_dead_letters_exactly_once_through_crashes_and_kills(kafka_broker, registry, tmp_path):
    topic, partitions = "dlq-crash", 4
    ser, table, dlq_table = new_topic(kafka_broker, registry, topic, partitions)
    run = FloeRun(tmp_path, kafka_broker.bootstrap, registry.url, [{"name": topic, **DLQ}],
                  defaults={"commit.interval.ms": 1000, "target.file.size.bytes": 1 << 20})
    kinds = ["unframed", "truncated", "wrong-type"]
    points = ["after-dead-letter-commit"] + CRASH_POINTS + ["before-delta-commit"]
    produced = crash_and_kill(
        run, kafka_broker.bootstrap, ser, topic, partitions, 6000, points, 5,
        random.Random(19),
        produce=lambda start, n: produce_mixed(kafka_broker.bootstrap, ser, topic, start, n,
                                               partitions, kinds))
    hwm = {p: hi for p, (lo, hi) in kafka_broker.watermarks(topic).items()}
    run.start()
    run.wait_for_positions(table, topic, hwm, timeout=300)
    # The Delta logs catch up with their Iceberg snapshots.
    deadline = time.monotonic() + 60
    ref = reference(kafka_broker.bootstrap, topic)
    assert len(ref) == produced
    good = collections.Counter(k for k, v in ref.items() if not v[0].startswith("bad-"))
    bad = collections.Counter(k for k, v in ref.items() if v[0].startswith("bad-"))
    while delta_po(table_root(run, table)) != good or \
            delta_po(table_root(run, dlq_table)) != bad:
        assert time.monotonic() < deadline, f"Delta logs lag:\n{run.log()}"
        time.sleep(0.5)
    assert run.stop() == 0, run.log()
    main = po(iceberg_rows(run, table, ("_kafka",)))
    dead = po(iceberg_rows(run, dlq_table, ("_kafka",)))
    assert not [k for k, v in main.items() if v > 1], "duplicated good records"
    assert not [k for k, v in dead.items() if v > 1], "duplicated dead letters"
    assert main == good
    assert dead == bad
    assert delta_po(table_root(run, table)) == good
    assert delta_po(table_root(run, dlq_table)) == bad


def replay(run: FloeRun, table: str, env: dict | None = None) -> subprocess.CompletedProcess:
    full_env = dict(os.environ)
    full_env.pop("FLOE_CRASH_AT", None)
    full_env.update(env or {})
    return subprocess.run([str(floe_binary()), "dlq", "replay", "--config", str(run.config_path),
                           f"kafka.{table}"], capture_output=True, text=True, timeout=120,
                          env=full_env)


def test_replay_appends_the_newly_decodable_dead_letters_exactly_once(kafka_broker, registry,
                                                                      tmp_path):
    topic, partitions = "dlq-replay", 2
    ser, table, dlq_table = new_topic(kafka_broker, registry, topic, partitions)
    # 400 records; 40 bad: 20 framed with an id nobody registered yet (their Avro bodies are
    # fine), 20 not framed at all.
    late_id = 700_000 + random.Random(23).randrange(10_000)
    p = Producer({"bootstrap.servers": kafka_broker.bootstrap, "enable.idempotence": True})
    ctx = SerializationContext(topic, MessageField.VALUE)
    late, junk = set(), set()
    for i in range(400):
        good = ser({"seq": i, "payload": f"event-{i}", "amount": 1.5}, ctx)
        value = good
        if i % 10 == 9:
            if (i // 10) % 2 == 0:
                value = b"\x00" + late_id.to_bytes(4, "big") + good[5:]
                late.add(i)
            else:
                value = b"plain text " + str(i).encode()
                junk.add(i)
        p.produce(topic, key=str(i).encode(), value=value, partition=i % partitions)
    assert p.flush(30) == 0
    run = FloeRun(tmp_path, kafka_broker.bootstrap, registry.url, [{"name": topic, **DLQ}])
    run.start()
    hwm = {p: hi for p, (lo, hi) in kafka_broker.watermarks(topic).items()}
    run.wait_for_positions(table, topic, hwm, timeout=180)
    assert run.stop() == 0, run.log()
    seqs = lambda: sorted(r["seq"] for r in iceberg_rows(run, table, ("seq", "_kafka")))
    assert seqs() == sorted(set(range(400)) - late - junk)
    assert len(iceberg_rows(run, dlq_table, ("_kafka",))) == 40

    # Nothing decodes yet: the replay changes nothing.
    out = replay(run, table)
    assert out.returncode == 0, out.stderr
    assert "40 dead letters, 0 replayed now, 0 replayed before, 40 still failing" in out.stdout

    # The schema behind late_id appears (an import keeps its id): half the dead letters
    # decode now. A compatible variant of the topic's schema (another record namespace).
    variant = dict(json.loads(json.dumps(SCHEMA)), namespace="imported")
    subject = f"{topic}-value"
    registry_call(registry.url, "PUT", f"/mode/{subject}?force=true", {"mode": "IMPORT"})
    registry_call(registry.url, "POST", f"/subjects/{subject}/versions",
                  {"schema": json.dumps(variant), "id": late_id})
    registry_call(registry.url, "PUT", f"/mode/{subject}", {"mode": "READWRITE"})

    # Killed mid-run (its commit's manifest written, the commit not): nothing lands.
    out = replay(run, table, {"FLOE_CRASH_AT": "after-manifest-write"})
    assert out.returncode == 86, (out.returncode, out.stdout, out.stderr)
    assert seqs() == sorted(set(range(400)) - late - junk)
    # Killed right after its commit landed: the rows are in; the rerun adds nothing.
    out = replay(run, table, {"FLOE_CRASH_AT": "after-pointer-swap"})
    assert out.returncode == 86, (out.returncode, out.stdout, out.stderr)
    for _ in range(2):
        out = replay(run, table)
        assert out.returncode == 0, out.stderr
        assert "0 replayed now, 20 replayed before, 20 still failing" in out.stdout, out.stdout
        assert "not registry framed" in out.stdout
    want = sorted(set(range(400)) - junk)
    assert seqs() == want
    # The replayed rows keep their original Kafka metadata, in both formats.
    rows = iceberg_rows(run, table, ("seq", "_kafka"))
    by_seq = {r["seq"]: r["_kafka"] for r in rows}
    for i in late:
        assert by_seq[i]["partition"] == i % partitions
        assert by_seq[i]["key"] == str(i).encode()
    main_po = po(rows)
    assert all(v == 1 for v in main_po.values())
    assert delta_po(table_root(run, table)) == main_po
    # The dead-letter table keeps every row; a later floe run goes on as before.
    assert len(iceberg_rows(run, dlq_table, ("_kafka",))) == 40
    run.start()
    time.sleep(3)
    assert run.stop() == 0, run.log()
    assert seqs() == want


def registry_call(url: str, method: str, path: str, body) -> dict:
    r = http(method, url + path, body=body,
             headers={"Content-Type": "application/vnd.schemaregistry.v1+json"})
    assert r.status == 200, (method, path, r.status, r.body)
    return r.json()
