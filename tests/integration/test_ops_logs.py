"""Issue 19, logs: `log.format: json` writes one JSON object per line, and every line about
one topic carries its topic, partition (null when the line is about the whole topic) and
table, so a log shipper can route and filter without parsing messages."""
from __future__ import annotations

import json

from harness.floe import FloeRun, default_table_name as table_of
from test_bad_input import good_values, produce_raw
from test_exactly_once import produce_events, serializer


def test_json_lines_carry_topic_and_partition(kafka_broker, registry, tmp_path):
    ser = serializer(registry)
    skipping = "json-log-skip"
    steady = "json-log-steady"
    kafka_broker.create_topic(skipping, partitions=1)
    kafka_broker.create_topic(steady, partitions=2)
    good = good_values(ser, skipping, 0, 20)
    # offsets 0-9 good, 10 unframed, 11-20 good, 21 truncated
    produce_raw(kafka_broker.bootstrap, skipping,
                good[:10] + [b"plain text"] + good[10:] + [good[0][:-2]])
    produce_events(kafka_broker.bootstrap, ser, steady, 0, 300, 2)
    hwm = {p: hi for p, (lo, hi) in kafka_broker.watermarks(steady).items()}
    run = FloeRun(tmp_path, kafka_broker.bootstrap, registry.url,
                  [{"name": skipping, "on.invalid.record": "skip"}, {"name": steady},
                   {"name": "json-log-missing"}],
                  extra={"log.format": "json"})
    run.start()
    run.wait_for_positions(table_of(skipping), skipping, {0: 22})
    run.wait_for_positions(table_of(steady), steady, hwm)
    assert run.stop() == 0, run.log()

    lines = [json.loads(l) for l in run.log_path.read_text().splitlines() if l.strip()]
    assert len(lines) > 10
    for j in lines:
        assert {"time", "level", "message"} <= j.keys(), j
        assert j["time"].endswith("Z"), j
    per_topic = 0
    for topic in (skipping, steady, "json-log-missing"):
        for j in lines:
            if f"topic {topic}" not in j["message"] and f"table {table_of(topic)}" not in j["message"]:
                continue
            per_topic += 1
            assert j.get("topic") == topic, j
            assert "partition" in j, j
    assert per_topic >= 5, lines
    skipped = [j for j in lines if "skipped invalid record" in j["message"]]
    assert len(skipped) == 2, lines
    for j in skipped:
        assert j["topic"] == skipping and j["partition"] == 0, j
        assert j["table"] == f"kafka.{table_of(skipping)}", j
        assert j["level"] == "warning", j
    # A line about no topic has no topic field.
    starting = next(j for j in lines if " starting: " in j["message"])
    assert "topic" not in starting
