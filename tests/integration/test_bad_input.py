"""Issue 2 bad input: a record that is not framed, names a schema the registry does not know,
or does not decode is never silently dropped (suspend: the topic stops at that record with
topic/partition/offset and reason; skip: counted and logged); other topics continue; outages
are retried; a recorded position outside the log suspends with the numbers; a bad config
exits 2 naming the key."""
from __future__ import annotations

import json
import subprocess
import time

from confluent_kafka import Producer
from confluent_kafka.admin import AdminClient
from confluent_kafka import TopicPartition

from harness.floe import FloeRun, default_table_name as table_of, floe_binary
from test_exactly_once import produce_events, serializer, table_records


def produce_raw(bootstrap: str, topic: str, values: list[bytes], partition: int = 0) -> None:
    p = Producer({"bootstrap.servers": bootstrap, "enable.idempotence": True})
    for v in values:
        p.produce(topic, value=v, partition=partition)
    assert p.flush(30) == 0


def good_values(ser, topic: str, start: int, n: int) -> list[bytes]:
    from confluent_kafka.serialization import MessageField, SerializationContext
    ctx = SerializationContext(topic, MessageField.VALUE)
    return [ser({"seq": i, "payload": f"event-{i}", "amount": 1.5}, ctx)
            for i in range(start, start + n)]


def test_invalid_records_suspend_their_topic_and_others_continue(kafka_broker, registry, tmp_path):
    ser = serializer(registry)
    cases = {
        "bad-unframed": (b'{"seq": 10, "not": "framed"}', "not registry framed"),
        "bad-unknown-id": (b"\x00\x00\x06\x7a\xa2" + b"\x02", "has no schema id 424610"),
        "bad-truncated": (None, "at byte"),
    }
    for topic, (payload, _) in cases.items():
        kafka_broker.create_topic(topic, partitions=1)
        values = good_values(ser, topic, 0, 10)
        if payload is None:  # a real record cut short: framing fine, Avro truncated
            payload = values[0][:-3]
        produce_raw(kafka_broker.bootstrap, topic, values + [payload] + good_values(ser, topic, 11, 10))
    kafka_broker.create_topic("good-b", partitions=2)
    produce_events(kafka_broker.bootstrap, ser, "good-b", 0, 500, 2)
    hwm_good = {p: hi for p, (lo, hi) in kafka_broker.watermarks("good-b").items()}

    topics = [{"name": t} for t in cases] + [{"name": "good-b"}]
    run = FloeRun(tmp_path, kafka_broker.bootstrap, registry.url, topics)
    run.start()
    run.wait_for_positions(table_of("good-b"), "good-b", hwm_good)
    for topic, (_, reason) in cases.items():
        log = run.wait_for_log(f"topic {topic} suspended")
        line = next(l for l in log.splitlines() if f"topic {topic} suspended" in l)
        assert f"topic {topic} partition 0 offset 10" in line, line
        assert reason in line, line
    assert run.stop() == 0, run.log()
    for topic in cases:
        # Everything before the bad record is committed; the position stops at it.
        assert run.table_positions(table_of(topic), topic) == {0: 10}
        got = table_records(run, table_of(topic))
        assert sorted(seq for (_, _, seq) in got) == list(range(10))
    assert sum(table_records(run, table_of("good-b")).values()) == 500

    # After a restart the topic is still stopped at the same record: nothing was lost.
    run.start()
    run.wait_for_log("topic bad-unframed suspended: invalid record at topic bad-unframed partition 0 offset 10")
    assert run.stop() == 0
    assert run.table_positions(table_of("bad-unframed"), "bad-unframed") == {0: 10}


def test_skip_policy_counts_and_logs_every_skipped_record(kafka_broker, registry, tmp_path):
    ser = serializer(registry)
    topic = "skip-me"
    kafka_broker.create_topic(topic, partitions=1)
    good = good_values(ser, topic, 0, 30)
    bad = [b"plain text", b"\x00\x00\x06\x7a\xa2\x02", good[0][:-2]]
    # offsets: 0-9 good, 10 bad, 11-20 good, 21 bad, 22-31 good, 32 bad
    produce_raw(kafka_broker.bootstrap, topic,
                good[:10] + [bad[0]] + good[10:20] + [bad[1]] + good[20:] + [bad[2]])
    run = FloeRun(tmp_path, kafka_broker.bootstrap, registry.url,
                  [{"name": topic, "on.invalid.record": "skip"}])
    run.start()
    # The unknown id (offset 21) is asked for again for 30 s before it is skipped.
    run.wait_for_positions(table_of(topic), topic, {0: 33}, timeout=120)
    assert run.stop() == 0
    log = run.log(200)
    skipped = [l for l in log.splitlines() if "skipped invalid record" in l]
    assert len(skipped) == 3, log
    for off in (10, 21, 32):
        assert any(f"topic {topic} partition 0 offset {off}:" in l for l in skipped), skipped
    assert "3 skipped" in log
    got = table_records(run, table_of(topic))
    assert sorted(seq for (_, _, seq) in got) == list(range(30))


def test_registry_outage_is_retried_not_skipped(kafka_broker, registry, tmp_path):
    ser = serializer(registry)
    topic = "outage"
    kafka_broker.create_topic(topic, partitions=1)
    produce_events(kafka_broker.bootstrap, ser, topic, 0, 100, 1)
    registry.outage(503, count=3, path_prefix="/schemas")
    run = FloeRun(tmp_path, kafka_broker.bootstrap, registry.url,
                  [{"name": topic, "on.invalid.record": "skip"}])
    run.start()
    run.wait_for_positions(table_of(topic), topic, {0: 100}, timeout=120)
    assert run.stop() == 0
    log = run.log(200)
    assert "schema registry HTTP 503" in log and "retrying" in log, log
    assert "skipped" not in log.replace("0 skipped", "")
    assert sum(table_records(run, table_of(topic)).values()) == 100


def test_recorded_position_below_log_start_suspends_with_numbers(kafka_broker, registry, tmp_path):
    ser = serializer(registry)
    topic = "retention"
    kafka_broker.create_topic(topic, partitions=1)
    produce_events(kafka_broker.bootstrap, ser, topic, 0, 100, 1)
    run = FloeRun(tmp_path, kafka_broker.bootstrap, registry.url, [{"name": topic}])
    run.start()
    run.wait_for_positions(table_of(topic), topic, {0: 100})
    assert run.stop() == 0
    # While Floe is down, more records arrive and retention removes some Floe never read.
    produce_events(kafka_broker.bootstrap, ser, topic, 100, 100, 1)
    admin = AdminClient({"bootstrap.servers": kafka_broker.bootstrap})
    futs = admin.delete_records([TopicPartition(topic, 0, 150)])
    for f in futs.values():
        f.result(30)
    run.start()
    log = run.wait_for_log(f"topic {topic} suspended")
    assert "recorded position 100 of partition 0 is outside the log [150, 200]" in log, log
    assert run.stop() == 0
    assert run.table_positions(table_of(topic), topic) == {0: 100}  # never reset silently


def test_bad_config_exits_2_naming_the_key(tmp_path):
    cfg = tmp_path / "bad.yaml"
    cfg.write_text("kafka: {bootstrap.servers: 127.0.0.1:9092}\nwarehouse: ./wh\n"
                   "defaults: {comit.interval.ms: 1000}\n")
    p = subprocess.run([str(floe_binary()), "run", "--config", str(cfg)], capture_output=True,
                       text=True, timeout=30)
    assert p.returncode == 2
    assert "defaults.comit.interval.ms" in p.stderr and "commit.interval.ms" in p.stderr
    p = subprocess.run([str(floe_binary()), "run", "--config", str(tmp_path / "missing.yaml")],
                       capture_output=True, text=True, timeout=30)
    assert p.returncode == 2 and "missing.yaml" in p.stderr
    p = subprocess.run([str(floe_binary()), "run"], capture_output=True, text=True, timeout=30)
    assert p.returncode == 2 and "--config" in p.stderr
    p = subprocess.run([str(floe_binary()), "--help"], capture_output=True, text=True, timeout=30)
    assert p.returncode == 0 and "run" in p.stdout
    # Issue 38 item 9: the summary names every command and both table formats.
    assert "Apache Iceberg and Delta Lake tables" in p.stdout, p.stdout
    for command in ("maintain", "dlq replay", "positions", "status", "topics resume"):
        assert f"\n  {command} " in p.stdout, (command, p.stdout)
    p = subprocess.run([str(floe_binary()), "maintain", "--help"], capture_output=True,
                       text=True, timeout=30)
    assert p.returncode == 0, p.stderr
    for step in ("compact", "manifests", "expire", "row retention", "orphan"):
        assert step in " ".join(p.stdout.split()), (step, p.stdout)
    p = subprocess.run([str(floe_binary()), "run", "--help"], capture_output=True, text=True,
                       timeout=30)
    assert p.returncode == 0 and "configuration" in p.stdout.lower()
