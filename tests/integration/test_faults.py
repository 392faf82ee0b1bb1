"""Issue 15 fault isolation, with real processes: one table's fault never stops the daemon,
and nothing is lost or written twice.

- a small tmpfs warehouse filled, then freed: the topic pauses (the message names the file
  and the errno), resumes by itself, and no partial file is left;
- a catalog file that is read-only, then writable again: commits wait without leaving a
  metadata file per attempt, and resume without a restart; SIGTERM exits 0;
- one table's metadata file corrupted while another table keeps committing; the REST server
  answers that table's loads with a 5xx naming the file;
- a table dropped through REST while another keeps committing;
- a column added by pyiceberg (after `_kafka`), then a restart;
- tombstones under the default policy; an int → long change under `skip` (the column is
  widened), an int → string change under `skip` (suspends); a schema id the registry
  answers 40403 for during its first seconds.

Every case ends with the multiset of (partition, offset) checked against a read_committed
consumer (test_exactly_once.committed_records).
"""
from __future__ import annotations

import collections
import json
import os
import pathlib
import subprocess
import time

import pytest
import requests
from confluent_kafka import Producer
from confluent_kafka.schema_registry import SchemaRegistryClient
from confluent_kafka.schema_registry.avro import AvroSerializer
from confluent_kafka.serialization import MessageField, SerializationContext

from harness import waits
from harness.floe import FloeRun, default_table_name
from test_exactly_once import (committed_records, produce_events, serializer, table_records,
                               wait_total)


def positions_reach(run: FloeRun, table: str, topic: str, want: dict[int, int],
                    timeout: float = 120.0) -> None:
    run.wait_for_positions(table, topic, want, timeout=timeout)


def hwm(kafka_broker, topic: str) -> dict[int, int]:
    return {p: hi for p, (lo, hi) in kafka_broker.watermarks(topic).items()}


def assert_exactly_the_log(kafka_broker, run: FloeRun, topic: str, table: str) -> None:
    want = committed_records(kafka_broker.bootstrap, topic)
    got = table_records(run, table)
    assert not [k for k, v in got.items() if v > 1], "duplicated records"
    assert got == want, (f"{len(set(want) - set(got))} missing, "
                         f"{len(set(got) - set(want))} unexpected")


def data_files_on_disk(run: FloeRun, table: str) -> set[str]:
    root = pathlib.Path(run.metadata(table)["location"].removeprefix("file://"))
    return {str(p) for p in (root / "data").glob("*") if p.is_file()}


def referenced_data_files(run: FloeRun, table: str) -> set[str]:
    from pyiceberg.catalog.sql import SqlCatalog
    cat = SqlCatalog("floe", uri=f"sqlite:///{run.catalog_db}",
                     warehouse=f"file://{run.warehouse}")
    t = cat.load_table(f"kafka.{table}")
    return {task.file.file_path.removeprefix("file://") for task in t.scan().plan_files()}


# --- storage ------------------------------------------------------------------------------

@pytest.fixture
def tmpfs(tmp_path):
    mount = tmp_path / "warehouse"
    mount.mkdir()
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=12m", "tmpfs", str(mount)], check=True)
    try:
        yield mount
    finally:
        subprocess.run(["umount", "-l", str(mount)], check=False)


def test_a_full_disk_pauses_the_topic_and_it_resumes_when_space_returns(
        kafka_broker, registry, tmp_path, tmpfs):
    topic = "fault-disk"
    kafka_broker.create_topic(topic, partitions=2)
    table = default_table_name(topic)
    run = FloeRun(tmp_path, kafka_broker.bootstrap, registry.url, [{"name": topic}])
    assert run.warehouse == tmpfs
    ser = serializer(registry)
    produce_events(kafka_broker.bootstrap, ser, topic, 0, 2000, 2)
    run.start()
    positions_reach(run, table, topic, hwm(kafka_broker, topic))
    # Fill the disk but for a few KiB, then produce ~4 MiB of incompressible records.
    filler = tmpfs / "filler"
    with open(filler, "wb") as f:
        try:
            while True:
                f.write(b"\0" * 65536)
                f.flush()
        except OSError:
            pass
    os.truncate(filler, max(0, filler.stat().st_size - 16384))
    p = Producer({"bootstrap.servers": kafka_broker.bootstrap, "linger.ms": 20})
    ctx = SerializationContext(topic, MessageField.VALUE)
    for i in range(2000, 2400):
        v = ser({"seq": i, "payload": f"event-{i}", "amount": None}, ctx)
        p.produce(topic, value=v, key=str(i).encode(), partition=i % 2,
                  headers=[("pad", os.urandom(10000))])
    assert p.flush(30) == 0
    text = run.wait_for_log("No space left on device", timeout=60)
    paused = [ln for ln in text.splitlines() if "paused" in ln and "No space left" in ln]
    assert paused, run.log(40)
    assert "errno 28" in paused[-1] and str(tmpfs) in paused[-1], paused[-1]
    time.sleep(3)
    assert run.proc.running(), run.log(40)
    filler.unlink()
    positions_reach(run, table, topic, hwm(kafka_broker, topic))
    assert run.stop() == 0, run.log(40)
    assert "resumed after" in run.log(400)
    # No partial file: every data file on disk is one the table references.
    assert data_files_on_disk(run, table) == referenced_data_files(run, table)
    assert_exactly_the_log(kafka_broker, run, topic, table)


# --- the catalog --------------------------------------------------------------------------

# Floe as root but without the capabilities that let root ignore file modes, so a file
# made read-only is read-only to it (as it is to any other user).
NO_DAC = ["setpriv", "--bounding-set=-dac_override,-dac_read_search,-fowner"]


def test_a_read_only_catalog_waits_without_orphans_and_recovers_without_restart(
        kafka_broker, registry, tmp_path):
    """The catalog file is made read-only before a start (SQLite then opens it read-only)
    and writable again while Floe runs."""
    topic = "fault-ro-catalog"
    kafka_broker.create_topic(topic, partitions=2)
    table = default_table_name(topic)
    run = FloeRun(tmp_path, kafka_broker.bootstrap, registry.url, [{"name": topic}])
    ser = serializer(registry)
    produce_events(kafka_broker.bootstrap, ser, topic, 0, 1000, 2)
    run.start(prefix=NO_DAC)
    positions_reach(run, table, topic, hwm(kafka_broker, topic))
    assert run.stop() == 0, run.log(40)

    catalog_files = sorted(tmp_path.glob("catalog.db*"))
    for f in catalog_files:
        f.chmod(0o444)
    metadata_dir = pathlib.Path(run.metadata(table)["location"].removeprefix("file://")) / "metadata"
    before = set(os.listdir(metadata_dir))
    produce_events(kafka_broker.bootstrap, ser, topic, 1000, 1000, 2)
    run.start(prefix=NO_DAC)
    # Several commit attempts, counted in the log (each failed one pauses the topic, with a
    # backoff of 0.5, 1, 2 s, ...), rather than assumed to fit in a fixed sleep.
    waits.until(lambda: sum(1 for ln in run.log(400).splitlines()
                            if " paused: " in ln and "is read-only" in ln) >= 3,
                timeout=90, what="three failed commit attempts", context=lambda: run.log(40))
    assert run.proc.running(), run.log(40)
    assert set(os.listdir(metadata_dir)) == before, "a failed commit left files behind"
    log = run.log(200)
    assert "kept conflicting" not in log, log
    for f in tmp_path.glob("catalog.db*"):
        f.chmod(0o644)
    positions_reach(run, table, topic, hwm(kafka_broker, topic), timeout=90)
    assert run.stop() == 0, run.log(40)
    # At most one metadata file per commit that went through.
    md = run.metadata(table)
    new_files = set(os.listdir(metadata_dir)) - before
    new_json = [f for f in new_files if f.endswith(".metadata.json")]
    assert 1 <= len(new_json) <= len(md["metadata-log"]) + 1
    assert_exactly_the_log(kafka_broker, run, topic, table)


def test_a_corrupt_metadata_file_suspends_only_its_table(kafka_broker, registry, tmp_path):
    bad, good = "fault-corrupt-a", "fault-corrupt-b"
    for t in (bad, good):
        kafka_broker.create_topic(t, partitions=1)
    ser = serializer(registry)
    run = FloeRun(tmp_path, kafka_broker.bootstrap, registry.url, [{"name": bad}, {"name": good}])
    for t in (bad, good):
        produce_events(kafka_broker.bootstrap, ser, t, 0, 100, 1)
    run.start()
    for t in (bad, good):
        positions_reach(run, default_table_name(t), t, hwm(kafka_broker, t))
    assert run.stop() == 0
    location = run.metadata_location(default_table_name(bad))
    pathlib.Path(location.removeprefix("file://")).write_text('{"format-version": 2, "oops"')
    run.start()
    run.wait_for_log(f"topic {bad} suspended", timeout=60)
    uri = run.rest_uri()  # this run's: its line comes before the suspension
    produce_events(kafka_broker.bootstrap, ser, good, 100, 100, 1)
    positions_reach(run, default_table_name(good), good, hwm(kafka_broker, good))
    r = requests.get(f"{uri}/v1/namespaces/kafka/tables/{default_table_name(bad)}", timeout=10)
    assert r.status_code >= 500 and location in r.text, (r.status_code, r.text)
    line = next(ln for ln in run.log(200).splitlines() if f"topic {bad} suspended" in ln)
    assert location in line, line
    assert run.stop() == 0, run.log(40)
    assert_exactly_the_log(kafka_broker, run, good, default_table_name(good))


def test_a_table_dropped_through_rest_suspends_only_its_topic(kafka_broker, registry, tmp_path):
    dropped, other = "fault-drop-a", "fault-drop-b"
    for t in (dropped, other):
        kafka_broker.create_topic(t, partitions=1)
    ser = serializer(registry)
    run = FloeRun(tmp_path, kafka_broker.bootstrap, registry.url,
                  [{"name": dropped}, {"name": other}])
    for t in (dropped, other):
        produce_events(kafka_broker.bootstrap, ser, t, 0, 100, 1)
    run.start()
    uri = run.rest_uri()
    for t in (dropped, other):
        positions_reach(run, default_table_name(t), t, hwm(kafka_broker, t))
    r = requests.delete(f"{uri}/v1/namespaces/kafka/tables/{default_table_name(dropped)}",
                        timeout=10)
    assert r.status_code == 204, r.text
    for t in (dropped, other):
        produce_events(kafka_broker.bootstrap, ser, t, 100, 100, 1)
    run.wait_for_log(f"topic {dropped} suspended", timeout=60)
    positions_reach(run, default_table_name(other), other, hwm(kafka_broker, other))
    assert run.proc.running()
    requests.get(f"{uri}/v1/config", timeout=10).raise_for_status()  # the server is up
    assert run.stop() == 0, run.log(40)
    assert "dropped" in next(ln for ln in run.log(300).splitlines()
                             if f"topic {dropped} suspended" in ln)
    assert_exactly_the_log(kafka_broker, run, other, default_table_name(other))


def test_a_column_added_by_pyiceberg_survives_a_restart(kafka_broker, registry, tmp_path):
    from pyiceberg.catalog.sql import SqlCatalog
    from pyiceberg.types import StringType
    topic = "fault-add-column"
    kafka_broker.create_topic(topic, partitions=2)
    table = default_table_name(topic)
    ser = serializer(registry)
    run = FloeRun(tmp_path, kafka_broker.bootstrap, registry.url, [{"name": topic}])
    produce_events(kafka_broker.bootstrap, ser, topic, 0, 500, 2)
    run.start()
    positions_reach(run, table, topic, hwm(kafka_broker, topic))
    assert run.stop() == 0
    cat = SqlCatalog("floe", uri=f"sqlite:///{run.catalog_db}",
                     warehouse=f"file://{run.warehouse}")
    with cat.load_table(f"kafka.{table}").update_schema() as update:
        update.add_column("note", StringType())
    assert cat.load_table(f"kafka.{table}").schema().fields[-1].name == "note"
    produce_events(kafka_broker.bootstrap, ser, topic, 500, 500, 2)
    run.start()
    positions_reach(run, table, topic, hwm(kafka_broker, topic))
    assert run.stop() == 0, run.log(40)
    rows = cat.load_table(f"kafka.{table}").scan(selected_fields=("seq", "note")).to_arrow()
    assert rows.num_rows == 1000 and rows["note"].null_count == 1000
    assert_exactly_the_log(kafka_broker, run, topic, table)


# --- records that are not bad records ----------------------------------------------------

def test_tombstones_are_counted_and_skipped_by_default(kafka_broker, registry, tmp_path):
    topic = "fault-tombstones"
    kafka_broker.create_topic(topic, partitions=1)
    table = default_table_name(topic)
    ser = serializer(registry)
    produce_events(kafka_broker.bootstrap, ser, topic, 0, 50, 1)
    p = Producer({"bootstrap.servers": kafka_broker.bootstrap})
    for i in range(50, 60):
        p.produce(topic, value=None, key=str(i).encode(), partition=0)
    assert p.flush(10) == 0
    produce_events(kafka_broker.bootstrap, ser, topic, 60, 50, 1)
    run = FloeRun(tmp_path, kafka_broker.bootstrap, registry.url, [{"name": topic}])
    run.start()
    positions_reach(run, table, topic, hwm(kafka_broker, topic))
    assert run.stop() == 0, run.log(40)
    assert "suspended" not in run.log(300)
    assert "10 tombstones" in run.log(50), run.log(50)
    want = collections.Counter({k: v for k, v in committed_records(
        kafka_broker.bootstrap, topic).items() if not 50 <= k[2] < 60})
    assert table_records(run, table) == want


def _produce_versions(kafka_broker, registry, topic, versions) -> None:
    """Produces 20 records per (schema, first seq) in order, with confluent's serializer."""
    client = SchemaRegistryClient({"url": registry.url})
    p = Producer({"bootstrap.servers": kafka_broker.bootstrap})
    ctx = SerializationContext(topic, MessageField.VALUE)
    for schema, first, seq in versions:
        ser = AvroSerializer(client, json.dumps(schema))
        for i in range(first, first + 20):
            p.produce(topic, value=ser({"seq": seq(i), "payload": f"event-{i}"}, ctx),
                      key=str(i).encode(), partition=0)
        assert p.flush(10) == 0


V1 = {"type": "record", "name": "Event", "namespace": "eo", "fields": [
    {"name": "seq", "type": "int"}, {"name": "payload", "type": "string"}]}


def test_int_to_long_under_skip_widens_the_column_and_loses_nothing(
        kafka_broker, registry, tmp_path):
    """v1 {seq: int}, then v2 {seq: long} (BACKWARD-compatible): the column is widened by a
    schema-only commit and every record lands, none skipped."""
    topic = "fault-int-long"
    kafka_broker.create_topic(topic, partitions=1)
    table = default_table_name(topic)
    v2 = dict(V1, fields=[{"name": "seq", "type": "long"}, {"name": "payload", "type": "string"}])
    _produce_versions(kafka_broker, registry, topic, [(V1, 0, int), (v2, 20, int)])
    run = FloeRun(tmp_path, kafka_broker.bootstrap, registry.url,
                  [{"name": topic, "on.invalid.record": "skip"}])
    run.start()
    positions_reach(run, table, topic, {0: 40})
    assert run.stop() == 0, run.log(40)
    log = run.log(300)
    assert "skipped invalid record" not in log and "suspended" not in log, log
    assert "widen seq int → long" in log, log
    md = run.metadata(table)
    current = next(s for s in md["schemas"] if s["schema-id"] == md["current-schema-id"])
    assert next(f for f in current["fields"] if f["name"] == "seq")["type"] == "long"
    assert_exactly_the_log(kafka_broker, run, topic, table)


def test_a_type_the_table_cannot_take_suspends_under_skip_and_loses_nothing(
        kafka_broker, registry, tmp_path):
    """v1 {seq: int}, then a schema with {seq: string}: not a bad record, a schema the
    table cannot take. The topic suspends at its first record whatever the policy."""
    topic = "fault-int-string"
    kafka_broker.create_topic(topic, partitions=1)
    table = default_table_name(topic)
    v2 = dict(V1, fields=[{"name": "seq", "type": "string"},
                          {"name": "payload", "type": "string"}])
    # The registry refuses such a schema under its default BACKWARD level.
    SchemaRegistryClient({"url": registry.url}).set_compatibility(
        subject_name=f"{topic}-value", level="NONE")
    _produce_versions(kafka_broker, registry, topic, [(V1, 0, int), (v2, 20, str)])
    run = FloeRun(tmp_path, kafka_broker.bootstrap, registry.url,
                  [{"name": topic, "on.invalid.record": "skip"}])
    run.start()
    text = run.wait_for_log(f"topic {topic} suspended", timeout=60)
    line = next(ln for ln in text.splitlines() if f"topic {topic} suspended" in ln)
    assert "partition 0 offset 20" in line and "does not fit table" in line, line
    assert run.stop() == 0, run.log(40)
    assert "skipped invalid record" not in run.log(300)
    assert run.table_positions(table, topic) == {0: 20}
    want = collections.Counter({k: v for k, v in committed_records(
        kafka_broker.bootstrap, topic).items() if k[1] < 20})
    assert table_records(run, table) == want  # the 20 v2 records wait in Kafka


def test_a_schema_id_the_registry_learns_late_is_not_skipped(kafka_broker, registry, tmp_path):
    topic = "fault-late-id"
    kafka_broker.create_topic(topic, partitions=1)
    table = default_table_name(topic)
    schema = {"type": "record", "name": "LateEvent", "namespace": "eo", "fields": [
        {"name": "seq", "type": "long"}, {"name": "payload", "type": "string"},
        {"name": "amount", "type": ["null", "double"], "default": None}]}
    ser = AvroSerializer(SchemaRegistryClient({"url": registry.url}), json.dumps(schema))
    produce_events(kafka_broker.bootstrap, ser, topic, 0, 100, 1)
    schema_id = SchemaRegistryClient({"url": registry.url}).get_latest_version(
        f"{topic}-value").schema_id
    # The registry answers 40403 for the id during Floe's first seconds (a restarting
    # registry, a lagging replica).
    registry.outage(404, count=-1, path_prefix=f"/schemas/ids/{schema_id}", error_code=40403)
    try:
        run = FloeRun(tmp_path, kafka_broker.bootstrap, registry.url,
                      [{"name": topic, "on.invalid.record": "skip"}])
        run.start()
        run.wait_for_log("40403", timeout=60)
        time.sleep(3)
    finally:
        registry.clear_outage()
    positions_reach(run, table, topic, hwm(kafka_broker, topic))
    assert run.stop() == 0, run.log(40)
    assert "skipped invalid record" not in run.log(300)
    assert_exactly_the_log(kafka_broker, run, topic, table)
