"""Issue 19, logs and live reconfiguration:
- `log.format: json` writes one JSON object per line, and every line about one topic carries
  its topic, partition (null when the line is about the whole topic) and table, so a log
  shipper can route and filter without parsing messages;
- SIGHUP (and POST /floe/v1/reload) re-reads the config file: a new topic entry starts its
  topic without a restart; a file with an error is refused, naming the key, and the running
  config stays."""
from __future__ import annotations

import json
import signal

import yaml

from harness.floe import FloeRun, default_table_name as table_of
from harness.rest import http
from test_bad_input import good_values, produce_raw
from test_exactly_once import produce_events, serializer, table_records


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


def seqs(run: FloeRun, table: str) -> list[int]:
    """The table's seq values, each as often as it occurs."""
    return sorted(seq for (_, _, seq), n in table_records(run, table).items() for _ in range(n))


def post(url: str) -> tuple[int, str]:
    r = http("POST", url, timeout=60)
    return r.status, r.body.decode()


def test_sighup_starts_a_new_topic_and_refuses_a_broken_file(kafka_broker, registry, tmp_path):
    ser = serializer(registry)
    first, added = "reload-first", "reload-added"
    kafka_broker.create_topic(first, partitions=2)
    kafka_broker.create_topic(added, partitions=2)
    produce_events(kafka_broker.bootstrap, ser, first, 0, 200, 2)
    produce_events(kafka_broker.bootstrap, ser, added, 0, 300, 2)
    run = FloeRun(tmp_path, kafka_broker.bootstrap, registry.url, [{"name": first}])
    run.start()
    rest = run.rest_uri()
    hwm = lambda t: {p: hi for p, (lo, hi) in kafka_broker.watermarks(t).items()}
    run.wait_for_positions(table_of(first), first, hwm(first))
    assert run.metadata(table_of(added)) is None

    cfg = yaml.safe_load(run.config_path.read_text())
    cfg["topics"].append({"name": added})
    run.config_path.write_text(yaml.safe_dump(cfg, sort_keys=False))
    run.proc.popen.send_signal(signal.SIGHUP)
    run.wait_for_positions(table_of(added), added, hwm(added))
    run.wait_for_log("reload: configuration applied")
    assert seqs(run, table_of(added)) == list(range(300))

    # A broken file: refused with the start's message naming the key; the old config runs on.
    good_text = run.config_path.read_text()
    cfg["topics"][0]["comit.interval.ms"] = 500
    run.config_path.write_text(yaml.safe_dump(cfg, sort_keys=False))
    run.proc.popen.send_signal(signal.SIGHUP)
    log = run.wait_for_log("reload refused")
    line = next(l for l in log.splitlines() if "reload refused" in l)
    assert "topics[0].comit.interval.ms: unknown key" in line, line
    status, body = post(rest + "/floe/v1/reload")
    assert status == 400 and "comit.interval.ms" in body, (status, body)
    produce_events(kafka_broker.bootstrap, ser, first, 200, 100, 2)
    produce_events(kafka_broker.bootstrap, ser, added, 300, 100, 2)
    run.wait_for_positions(table_of(first), first, hwm(first))
    run.wait_for_positions(table_of(added), added, hwm(added))

    # Removing the entry again through the admin surface: committed and stopped.
    run.config_path.write_text(good_text.replace(f"- name: {added}\n", ""))
    status, body = post(rest + "/floe/v1/reload")
    assert status == 204, (status, body)
    run.wait_for_log(f"topic {added}: no longer in the configuration; committed and stopped")
    produce_events(kafka_broker.bootstrap, ser, added, 400, 50, 2)
    produce_events(kafka_broker.bootstrap, ser, first, 300, 50, 2)
    run.wait_for_positions(table_of(first), first, hwm(first))
    assert run.stop() == 0, run.log()
    assert seqs(run, table_of(added)) == list(range(400))
    assert seqs(run, table_of(first)) == list(range(350))
