"""Issue 16 item 3, with real processes: the topic lifecycle an operator sees and acts on.

- v1 Avro records, then a schema the table cannot take (seq int → string, registered under
  compatibility NONE): the topic is suspended with reason, schema id, partition and offset in
  `floe status` (table and --json) and in GET /floe/v1/topics; another topic keeps advancing;
  read tokens may GET but not POST; a restart stays suspended (the state is saved in the
  table's `floe.topic-state.<topic>` property); `floe topics resume T --skip-incompatible`
  skips the bad records (and later ones of that schema), counts them, and the good records
  after them land with their values;
- a schema id the registry does not know (after Floe's 30 s window the record is invalid and
  suspends the topic); the registry learns it (the fix); a plain resume lands every record;
- `floe status` and `floe topics resume` against a daemon that is not running exit non-zero
  with a clear message.
"""
from __future__ import annotations

import json
import socket
import subprocess
import time

import requests
from confluent_kafka import Producer
from confluent_kafka.schema_registry import SchemaRegistryClient
from confluent_kafka.schema_registry.avro import AvroSerializer
from confluent_kafka.serialization import MessageField, SerializationContext

from harness.floe import FloeRun, default_table_name, floe_binary

V1 = {"type": "record", "name": "Order", "namespace": "lifecycle", "fields": [
    {"name": "seq", "type": "int"}, {"name": "payload", "type": "string"}]}
V2_BAD = dict(V1, fields=[{"name": "seq", "type": "string"},
                          {"name": "payload", "type": "string"}])
TOKEN = "lifecycle-admin-token"
READ_TOKEN = "lifecycle-read-token"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def floe_cli(*args: str, timeout: float = 60) -> subprocess.CompletedProcess:
    return subprocess.run([str(floe_binary()), *args], capture_output=True, text=True,
                          timeout=timeout)


def produce(bootstrap: str, registry_url: str, topic: str, schema: dict, seqs, seq_type=int):
    ser = AvroSerializer(SchemaRegistryClient({"url": registry_url}), json.dumps(schema))
    ctx = SerializationContext(topic, MessageField.VALUE)
    p = Producer({"bootstrap.servers": bootstrap})
    for i in seqs:
        p.produce(topic, value=ser({"seq": seq_type(i), "payload": f"event-{i}"}, ctx),
                  key=str(i).encode(), partition=0)
    assert p.flush(30) == 0


def status(*target: str) -> dict[str, dict]:
    r = floe_cli("status", "--json", *target)
    assert r.returncode == 0, r.stderr
    return {t["topic"]: t for t in json.loads(r.stdout)["topics"]}


def wait_status(target: list[str], topic: str, pred, timeout: float = 60) -> dict:
    deadline = time.monotonic() + timeout
    last = None
    while time.monotonic() < deadline:
        r = floe_cli("status", "--json", *target)
        if r.returncode == 0:
            last = {t["topic"]: t for t in json.loads(r.stdout)["topics"]}.get(topic)
            if last is not None and pred(last):
                return last
        time.sleep(0.3)
    raise TimeoutError(f"status of {topic} never matched; last: {last}")


def rows(run: FloeRun, table: str) -> list[tuple[int, int, str]]:
    """(offset, seq, payload) of every row, sorted."""
    from pyiceberg.catalog.sql import SqlCatalog
    cat = SqlCatalog("floe", uri=f"sqlite:///{run.catalog_db}",
                     warehouse=f"file://{run.warehouse}")
    arrow = cat.load_table(f"kafka.{table}").scan(
        selected_fields=("seq", "payload", "_kafka")).to_arrow()
    return sorted((r["_kafka"]["offset"], r["seq"], r["payload"]) for r in arrow.to_pylist())


def test_incompatible_schema_suspends_stays_suspended_and_resumes_with_skip(
        kafka_broker, registry, tmp_path):
    topic, other = "lifecycle-orders", "lifecycle-other"
    table, other_table = default_table_name(topic), default_table_name(other)
    for t in (topic, other):
        kafka_broker.create_topic(t, partitions=1)
    client = SchemaRegistryClient({"url": registry.url})
    client.set_compatibility(subject_name=f"{topic}-value", level="NONE")
    # Offsets 0-9 v1, 10-14 the incompatible schema, 15-19 v1 again.
    produce(kafka_broker.bootstrap, registry.url, topic, V1, range(0, 10))
    produce(kafka_broker.bootstrap, registry.url, topic, V2_BAD, range(10, 15), str)
    produce(kafka_broker.bootstrap, registry.url, topic, V1, range(15, 20))
    produce(kafka_broker.bootstrap, registry.url, other, V1, range(0, 10))
    bad_id = client.get_version(f"{topic}-value", 2).schema_id
    port = free_port()
    run = FloeRun(tmp_path, kafka_broker.bootstrap, registry.url, [{"name": topic}, {"name": other}],
                  extra={"rest": {"listen": f"127.0.0.1:{port}", "auth.tokens": [TOKEN],
                                  "auth.read.tokens": [READ_TOKEN]}})
    target = ["--config", str(run.config_path)]
    run.start()
    run.wait_for_log(f"topic {topic} suspended", timeout=60)
    t = wait_status(target, topic, lambda s: s["state"] == "suspended")
    assert t["table"] == f"kafka.{table}"
    assert t["schema-id"] == bad_id and t["partition"] == 0 and t["offset"] == 10, t
    assert "does not fit table" in t["reason"] and "partition 0 offset 10" in t["reason"], t
    assert t["since-ms"] > 0
    assert t["compatibility"] == "NONE", t  # the subject's level, as Floe read it
    assert t["partitions"][0]["committed"] == 10, t
    t = wait_status(target, topic, lambda s: s["partitions"][0]["high-watermark"] == 20)
    assert t["partitions"][0]["lag"] == 10 and t["lag"] == 10, t
    assert run.table_positions(table, topic) == {0: 10}
    saved = json.loads(run.metadata(table)["properties"][f"floe.topic-state.{topic}"])
    assert saved["state"] == "suspended" and saved["schema-id"] == bad_id, saved
    assert saved["partition"] == 0 and saved["offset"] == 10, saved

    # The human table: one line per topic, the reason led by where and which schema.
    human = floe_cli("status", *target)
    assert human.returncode == 0, human.stderr
    line = next(ln for ln in human.stdout.splitlines() if ln.startswith(topic))
    assert "suspended" in line and f"[p0@10 schema {bad_id}]" in line, human.stdout
    assert " NONE " in line, human.stdout
    assert "floe topics resume" in human.stdout

    # The admin route itself, under the same tokens: read tokens GET, never POST.
    uri = f"http://127.0.0.1:{port}"
    r = requests.get(f"{uri}/floe/v1/topics", timeout=10)
    assert r.status_code == 401, r.text
    r = requests.get(f"{uri}/floe/v1/topics",
                     headers={"Authorization": f"Bearer {READ_TOKEN}"}, timeout=10)
    assert r.status_code == 200, r.text
    got = {x["topic"]: x for x in r.json()["topics"]}
    assert got[topic]["state"] == "suspended" and got[topic]["offset"] == 10
    r = requests.post(f"{uri}/floe/v1/topics/{topic}/resume",
                      headers={"Authorization": f"Bearer {READ_TOKEN}"}, timeout=10)
    assert r.status_code == 403, r.text
    r = requests.post(f"{uri}/floe/v1/topics/{other}/resume",
                      headers={"Authorization": f"Bearer {TOKEN}"}, timeout=30)
    assert r.status_code == 409 and r.json()["error"]["type"] == "TopicNotSuspendedException"
    r = requests.post(f"{uri}/floe/v1/topics/no-such-topic/resume",
                      headers={"Authorization": f"Bearer {TOKEN}"}, timeout=30)
    assert r.status_code == 404, r.text

    # Every other topic goes on.
    produce(kafka_broker.bootstrap, registry.url, other, V1, range(10, 20))
    run.wait_for_positions(other_table, other, {0: 20}, timeout=60)
    o = wait_status(target, other, lambda s: s["partitions"][0]["high-watermark"] == 20)
    assert o["state"] == "running" and o["lag"] == 0 and o["reason"] is None, o
    assert o["partitions"] == [{"partition": 0, "committed": 20, "consumed": 20,
                                "high-watermark": 20, "lag": 0, "read-lag": 0}], o
    assert status(*target)[topic]["state"] == "suspended"

    # A restart stays suspended, with the same facts, and reads nothing of the topic.
    assert run.stop() == 0, run.log(40)
    run.start()
    run.wait_for_log(f"(saved in table kafka.{table} before this start", timeout=60)
    after = wait_status(target, topic, lambda s: s["state"] == "suspended")
    assert (after["reason"], after["schema-id"], after["partition"], after["offset"],
            after["since-ms"]) == (t["reason"], t["schema-id"], 0, 10, t["since-ms"]), after
    time.sleep(3)
    assert run.table_positions(table, topic) == {0: 10}

    # Resume with skip: offsets 10-14 are skipped and counted, 15-19 land; so do later
    # records, and a later record of the same schema is skipped too.
    r = floe_cli("topics", "resume", topic, "--skip-incompatible", *target)
    assert r.returncode == 0, r.stderr
    assert "resuming" in r.stdout or "running" in r.stdout, r.stdout
    run.wait_for_positions(table, topic, {0: 20}, timeout=60)
    produce(kafka_broker.bootstrap, registry.url, topic, V2_BAD, [20], str)
    produce(kafka_broker.bootstrap, registry.url, topic, V1, [21])
    run.wait_for_positions(table, topic, {0: 22}, timeout=60)
    t = wait_status(target, topic, lambda s: s["state"] == "running")
    assert t["records-skipped"] == 6, t
    assert t["skip"]["schema-ids"] == [bad_id], t
    want = [(o, o, f"event-{o}") for o in [*range(0, 10), *range(15, 20), 21]]
    assert rows(run, table) == want
    saved = json.loads(run.metadata(table)["properties"][f"floe.topic-state.{topic}"])
    assert saved["state"] == "running" and saved["skip-schema-ids"] == [bad_id], saved
    assert "skipped by an operator's resume" in run.log(400)
    assert run.stop() == 0, run.log(40)

    # The daemon is gone: both commands say so and fail.
    r = floe_cli("status", *target)
    assert r.returncode != 0 and "cannot reach the Floe daemon" in r.stderr, r.stderr
    r = floe_cli("topics", "resume", topic, *target)
    assert r.returncode != 0 and "cannot reach the Floe daemon" in r.stderr, r.stderr


def test_fix_then_plain_resume_lands_every_record(kafka_broker, registry, tmp_path):
    topic = "lifecycle-late"
    table = default_table_name(topic)
    kafka_broker.create_topic(topic, partitions=1)
    schema = dict(V1, name="LateOrder")
    produce(kafka_broker.bootstrap, registry.url, topic, schema, range(0, 5))
    schema_id = SchemaRegistryClient({"url": registry.url}).get_latest_version(
        f"{topic}-value").schema_id
    # The registry does not know the id (a registry restored without it): after Floe's
    # 30 s window the first record counts as invalid and suspends the topic.
    registry.outage(404, count=-1, path_prefix=f"/schemas/ids/{schema_id}", error_code=40403)
    try:
        run = FloeRun(tmp_path, kafka_broker.bootstrap, registry.url, [{"name": topic}])
        run.start()
        run.wait_for_log(f"topic {topic} suspended", timeout=150)
        target = ["--url", run.rest_uri()]
        t = wait_status(target, topic, lambda s: s["state"] == "suspended")
        assert t["partition"] == 0 and t["offset"] == 0 and t["schema-id"] is None, t
        assert "invalid record" in t["reason"], t
    finally:
        registry.clear_outage()  # the fix: the registry knows the schema again
    r = floe_cli("topics", "resume", topic, *target)
    assert r.returncode == 0, r.stderr
    run.wait_for_positions(table, topic, {0: 5}, timeout=60)
    assert rows(run, table) == [(o, o, f"event-{o}") for o in range(5)]
    t = wait_status(target, topic, lambda s: s["state"] == "running")
    assert t["records-skipped"] == 0 and t["reason"] is None, t
    assert f"floe.topic-state.{topic}" not in run.metadata(table)["properties"]
    assert run.stop() == 0, run.log(40)


def test_status_without_a_daemon_fails_clearly(tmp_path):
    url = f"http://127.0.0.1:{free_port()}"
    for args in (["status"], ["status", "--json"], ["topics", "resume", "t"],
                 ["topics", "resume", "t", "--skip-incompatible"]):
        r = floe_cli(*args, "--url", url)
        assert r.returncode == 1, (args, r.returncode, r.stdout, r.stderr)
        assert f"cannot reach the Floe daemon at {url}" in r.stderr, r.stderr
        assert r.stdout == ""
    # A config whose REST port is picked at start cannot be called from the config alone.
    cfg = tmp_path / "floe.yaml"
    cfg.write_text("kafka: {bootstrap.servers: 127.0.0.1:9}\nregistry: {url: http://x}\n"
                   "warehouse: ./wh\nrest: {listen: 127.0.0.1:0}\ntopics: [{name: t}]\n")
    r = floe_cli("status", "--config", str(cfg))
    assert r.returncode == 2 and "--url" in r.stderr, r.stderr
