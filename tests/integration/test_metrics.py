"""Issue 19: what an operator sees. A real Prometheus scrapes Floe's GET /metrics during a
steady load and the test asks Prometheus (not Floe's text) for lag, freshness and the
counts; `promtool check metrics` validates the exposition; GET /ready follows Kafka, the
warehouse's storage and the catalog going away and coming back, and GET /health stays up
meanwhile.
"""
from __future__ import annotations

import json
import threading
import time
import urllib.error
import urllib.request

import pytest
from confluent_kafka import Consumer, TopicPartition

from harness.floe import FloeRun, default_table_name
from harness.prometheus import promtool_check_metrics, start_prometheus
from harness.s3 import start_s3
from harness.s3_proxy import Rule, S3FaultProxy
from test_core import produce_orders
from test_dead_letters import iceberg_rows, produce_mixed
from test_exactly_once import serializer

COMMIT_MS = 1000


def get(url: str) -> tuple[int, str]:
    try:
        with urllib.request.urlopen(url, timeout=10) as r:
            return r.status, r.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode()


def test_prometheus_scrapes_lag_freshness_and_counts(kafka_broker, registry, tmp_path):
    topic = "metrics-orders"
    partitions = 4
    kafka_broker.create_topic(topic, partitions=partitions)
    table = default_table_name(topic)
    # Beside it, a topic with 5% malformed records under on.invalid.record: dlq.
    dlq_topic = "metrics-dead-letters"
    kafka_broker.create_topic(dlq_topic, partitions=2)
    produce_mixed(kafka_broker.bootstrap, serializer(registry), dlq_topic, 0, 400, 2,
                  ["unframed", "truncated"])
    run = FloeRun(tmp_path, kafka_broker.bootstrap, registry.url,
                  [{"name": topic}, {"name": dlq_topic, "on.invalid.record": "dlq"}],
                  defaults={"commit.interval.ms": COMMIT_MS})
    run.start()
    rest = run.rest_uri()
    prom = start_prometheus(tmp_path / "prometheus", {"floe": rest.split("//", 1)[1]})
    try:
        status, text = get(rest + "/metrics")
        assert status == 200, text
        assert promtool_check_metrics(text) == "", promtool_check_metrics(text)
        prom.wait(prom.targets_up, what="Floe's target up")
        wait_probe(rest + "/ready", 200)  # a local warehouse, Kafka and SQLite answer

        # A steady load: 400 records every 0.25 s for 12 s.
        produced = 0
        load_started = time.monotonic()
        while time.monotonic() - load_started < 12:
            produce_orders(kafka_broker, registry, topic, 400, partitions)
            produced += 400
            time.sleep(0.25)
        # How fast commits follow the load is for `make bench` (bench/freshness.py); here
        # freshness is checked against the table: once everything is committed, the
        # metric is now minus the newest committed record's Kafka timestamp. The window
        # allows for one scrape interval and a late scrape on a busy machine; it does not
        # depend on how fast Floe committed.
        committed = f'sum(floe_records_committed_total{{topic="{topic}"}})'
        prom.wait(lambda: prom.query(committed) == produced, timeout=60,
                  what=f"{produced} records committed")
        newest_ms = max(r["_kafka"]["timestamp"] for r in
                        iceberg_rows(run, table, ("_kafka",))).timestamp() * 1000
        prom.wait(lambda: prom.query(f'floe_table_freshness_seconds{{topic="{topic}"}}')
                  is not None, what="a freshness sample")
        at = time.time()
        fresh = prom.query(f'floe_table_freshness_seconds{{topic="{topic}"}}', at=at)
        expected = at - newest_ms / 1000
        print(f"freshness {fresh:.3f} s at {at:.3f}, table's newest record {expected:.3f} s old")
        # A scrape that began before `at` may be rendered a little after it.
        assert expected - 3.0 <= fresh <= expected + 1.0, (fresh, expected)
        lag = f'sum(floe_partition_lag_records{{topic="{topic}"}})'
        prom.wait(lambda: prom.query(lag) == 0, timeout=60, what="lag 0")
        assert len(prom.series(f'floe_partition_lag_records{{topic="{topic}"}}')) == partitions
        assert prom.query(f'sum(floe_records_read_total{{topic="{topic}"}})') == produced
        assert prom.query(f'floe_topic_state{{topic="{topic}",state="running"}}') == 1
        assert prom.query(f'floe_topic_state{{topic="{topic}",state="suspended"}}') == 0
        commits = prom.query(f'floe_commits_total{{topic="{topic}"}}')
        assert commits is not None and commits >= 5, commits
        assert prom.query(f'floe_commit_duration_seconds_count{{topic="{topic}"}}') == commits
        files = prom.query(f'floe_data_files_total{{topic="{topic}"}}')
        assert files == prom.query(f'floe_data_file_size_bytes_count{{topic="{topic}"}}')
        # The bytes Prometheus saw written are the data files the table holds.
        snaps = run.metadata(table)["snapshots"]
        total_size = int(snaps[-1]["summary"]["total-files-size"])
        assert prom.query(f'floe_data_written_bytes_total{{topic="{topic}"}}') == total_size
        # The registry was asked for the schema once; the storage wrote every commit.
        assert prom.query("floe_registry_requests_total") >= 1
        assert prom.query("floe_registry_errors_total") == 0
        assert prom.query('floe_storage_requests_total{op="open_output"}') >= files
        assert prom.query('floe_storage_requests_total{op="write_new"}') >= commits
        assert prom.query("sum(floe_storage_errors_total)") == 0
        assert prom.query("process_resident_memory_bytes") > 10 << 20
        assert prom.query("floe_memory_budget_bytes") == 128 << 20
        # The dead-letter counter is the dead-letter table's row count.
        dead = f'floe_records_dead_lettered_total{{topic="{dlq_topic}"}}'
        prom.wait(lambda: prom.query(dead) == 20, timeout=60, what="20 dead letters")
        dlq_rows = iceberg_rows(run, default_table_name(dlq_topic) + "__dlq", ("_kafka",))
        assert len(dlq_rows) == 20

        status, text = get(rest + "/metrics")
        assert promtool_check_metrics(text) == "", promtool_check_metrics(text)
    finally:
        prom.stop()
        assert run.stop() == 0, run.log()


def test_lag_shows_what_waits_for_the_next_commit(kafka_broker, registry, tmp_path):
    """Issue 38 item 3: with commits every 5 s under a steady load, the commit lag rises to
    about rate x interval between commits and falls after each, while the read lag (high
    watermark minus the consumed offset) stays below it: records read but not committed
    are counted. Bounds are relative to the rate actually produced, never to wall-clock
    speed."""
    topic = "metrics-lag"
    partitions = 2
    interval_ms = 5000
    kafka_broker.create_topic(topic, partitions=partitions)
    run = FloeRun(tmp_path, kafka_broker.bootstrap, registry.url, [{"name": topic}],
                  defaults={"commit.interval.ms": interval_ms})
    run.start()
    rest = run.rest_uri()
    prom = start_prometheus(tmp_path / "prometheus", {"floe": rest.split("//", 1)[1]},
                            interval_s=0.5)
    try:
        prom.wait(prom.targets_up, what="Floe's target up")
        produce_orders(kafka_broker, registry, topic, 10, partitions)  # the table exists
        committed = f'sum(floe_records_committed_total{{topic="{topic}"}})'
        prom.wait(lambda: prom.query(committed) == 10, timeout=60, what="10 committed")
        # A steady load: 50 records every 0.1 s for 16 s (about 500 records/s).
        produced = 10
        start = time.time()
        while time.time() - start < 16:
            produce_orders(kafka_broker, registry, topic, 50, partitions)
            produced += 50
            time.sleep(0.1)
        end = time.time()
        rate = (produced - 10) / (end - start)
        prom.wait(lambda: prom.query(committed) == produced, timeout=60,
                  what=f"{produced} records committed")
        time.sleep(1.5)  # the last scrapes of the load are in
        lag = prom.range(f'sum(floe_partition_lag_records{{topic="{topic}"}})', start, end, 0.5)
        read_lag = prom.range(f'sum(floe_partition_read_lag_records{{topic="{topic}"}})',
                              start, end, 0.5)
        commits = prom.range(f'floe_commits_total{{topic="{topic}"}}', start, end, 0.5)
        print(f"rate {rate:.0f}/s; lag {[int(v) for _, v in lag]}")
        print(f"read lag {[int(v) for _, v in read_lag]}")
        assert len(lag) >= 20 and len(read_lag) >= 20, (lag, read_lag)
        per_interval = rate * interval_ms / 1000
        peak = max(v for _, v in lag)
        # Rises to about rate x interval: at least half of it (a commit every 5 s, the
        # peak just before a commit), and not past what was produced.
        assert peak >= 0.5 * per_interval, (peak, per_interval)
        assert peak <= produced, (peak, produced)
        # Falls after each commit: every commit the load saw is followed by a drop of at
        # least half of the lag before it.
        commit_times = [t for (t, v), (_, prev) in zip(commits[1:], commits) if v > prev]
        assert len(commit_times) >= 2, commits
        by_time = dict(lag)
        drops = 0
        for t in commit_times:
            before = max(v for s, v in lag if t - 2.5 <= s < t)
            after = min(v for s, v in lag if t <= s <= t + 1.5) if any(
                t <= s <= t + 1.5 for s in by_time) else before
            drops += after <= 0.5 * before
        assert drops >= len(commit_times) - 1, (commit_times, lag)
        # Read lag is what was not read yet: never above the commit lag, and well below
        # it at the peak (the records waiting were read and buffered).
        read_by_time = dict(read_lag)
        for t, v in lag:
            if t in read_by_time:
                assert read_by_time[t] <= v, (t, read_by_time[t], v)
        peak_at = max(lag, key=lambda s: s[1])[0]
        assert read_by_time.get(peak_at, 0) <= 0.75 * peak, (read_by_time.get(peak_at), peak)
        assert len(prom.series(f'floe_partition_consumed_offset{{topic="{topic}"}}')) == partitions
        # After the load everything is committed: both lags are 0.
        prom.wait(lambda: prom.query(f'sum(floe_partition_lag_records{{topic="{topic}"}})') == 0,
                  what="lag 0")
        assert prom.query(f'sum(floe_partition_read_lag_records{{topic="{topic}"}})') == 0
        # Item 6: the consumer group holds the table's positions, for kafka-consumer-groups
        # and lag exporters (committed asynchronously after each table commit).
        positions = run.table_positions(default_table_name(topic), topic)
        assert sum(positions.values()) == produced, positions
        group = Consumer({"bootstrap.servers": kafka_broker.bootstrap, "group.id": "floe"})
        try:
            want = [TopicPartition(topic, p) for p in range(partitions)]
            deadline = time.monotonic() + 30
            while True:
                got = {tp.partition: tp.offset for tp in group.committed(want, timeout=10)}
                if got == positions or time.monotonic() > deadline:
                    break
                time.sleep(0.5)
            assert got == positions, (got, positions)
        finally:
            group.close()
    finally:
        prom.stop()
        assert run.stop() == 0, run.log()


def wait_probe(url: str, want: int, reason: str | None = None, timeout: float = 30.0) -> float:
    """Seconds until `url` answers `want` (and, for 503, names `reason`)."""
    started = time.monotonic()
    last = None
    while time.monotonic() - started < timeout:
        status, body = get(url)
        last = (status, body)
        if status == want and (reason is None or reason in body):
            return time.monotonic() - started
        time.sleep(0.1)
    raise AssertionError(f"{url} did not answer {want} ({reason}) within {timeout} s: {last}")


def probed_s3_extra(s3, proxy) -> dict:
    """Config sections for a warehouse on `s3` reached through `proxy`, the REST listener on
    a free port, readiness checked every 0.5 s."""
    return {
        "warehouse": s3.uri("lake"),
        "s3": {"endpoint": f"http://{proxy.endpoint}", "region": s3.region,
               "access.key.id": s3.access_key, "secret.access.key": s3.secret_key},
        "rest": {"listen": "127.0.0.1:0"},
        "health": {"probe.interval.ms": 500},
    }


def test_ready_follows_kafka_storage_and_catalog(kafka_broker, registry, tmp_path):
    topic = "ready-orders"
    kafka_broker.create_topic(topic, partitions=2)
    with start_s3(tmp_path / "s3") as s3, S3FaultProxy(s3.endpoint) as proxy:
        extra = probed_s3_extra(s3, proxy)
        # The SQLite catalog on a volume of its own, which the test unmounts (moves away).
        volume = tmp_path / "catalog-volume"
        volume.mkdir()
        extra["catalog"] = {"type": "sqlite", "uri": str(volume / "catalog.db"), "name": "floe"}
        run = FloeRun(tmp_path, kafka_broker.bootstrap, registry.url, [{"name": topic}],
                      extra=extra, s3=s3)
        run.catalog_db = volume / "catalog.db"
        run.start()
        rest = run.rest_uri()
        try:
            wait_probe(rest + "/ready", 200)
            produce_orders(kafka_broker, registry, topic, 100, 2)
            assert get(rest + "/health")[0] == 200

            # Kafka goes away: not ready within 5 s, still alive; ready again once back.
            kafka_broker.stop()
            try:
                took = wait_probe(rest + "/ready", 503, "kafka", timeout=15)
                print(f"not ready {took:.1f} s after Kafka stopped")
                assert took < 10, took  # a check every 0.5 s, bounded at 2 s; margin for a busy core
                status, body = get(rest + "/ready")
                assert json.loads(body)["status"] == "unavailable", body
                assert get(rest + "/health")[0] == 200
            finally:
                kafka_broker.start()
            wait_probe(rest + "/ready", 200, timeout=60)

            # The store goes away (every request 503): the same.
            proxy.down(True)
            try:
                took = wait_probe(rest + "/ready", 503, "storage", timeout=15)
                print(f"not ready {took:.1f} s after the store went down")
                assert took < 10, took  # a check every 0.5 s, bounded at 2 s; margin for a busy core
                assert get(rest + "/health")[0] == 200
            finally:
                proxy.down(False)
            wait_probe(rest + "/ready", 200, timeout=60)
            table = default_table_name(topic)
            run.wait_for_positions(table, topic, {0: 50, 1: 50})

            # The catalog goes away (its volume moved away under the open file): not ready
            # within 5 s; the commits wait (a commit into the moved file would be lost to the
            # next start), and the records produced meanwhile land once it is back.
            away = volume.with_name("catalog-volume.away")
            volume.rename(away)
            try:
                took = wait_probe(rest + "/ready", 503, "catalog", timeout=15)
                print(f"not ready {took:.1f} s after the catalog went away")
                assert took < 10, took  # a check every 0.5 s, bounded at 2 s; margin for a busy core
                assert get(rest + "/health")[0] == 200
                produce_orders(kafka_broker, registry, topic, 100, 2)
                # A commit is tried and refused (the topic pauses, nothing written).
                run.wait_for_log(f"paused: commit to kafka.{table}: catalog {volume}/catalog.db"
                                 f" is gone", timeout=30)
            finally:
                away.rename(volume)
            wait_probe(rest + "/ready", 200, timeout=60)
            run.wait_for_positions(table, topic, {0: 100, 1: 100})
        finally:
            assert run.stop() == 0, run.log()


def test_a_hanging_storage_check_does_not_hold_up_shutdown(kafka_broker, registry, tmp_path):
    """Issue 38 item 11: a readiness check that hangs on a store that does not answer (the
    proxy holds the probe's request for 5 minutes) is not waited for at shutdown: `floe
    run` commits what it read and exits 0 within its own bound (5 s past the check), not
    when the store answers."""
    topic = "hanging-probe"
    kafka_broker.create_topic(topic, partitions=1)
    with start_s3(tmp_path / "s3") as s3, S3FaultProxy(s3.endpoint) as proxy:
        extra = probed_s3_extra(s3, proxy)
        run = FloeRun(tmp_path, kafka_broker.bootstrap, registry.url, [{"name": topic}],
                      extra=extra, s3=s3, defaults={"commit.interval.ms": 1000})
        run.start()
        rest = run.rest_uri()
        wait_probe(rest + "/ready", 200)
        produce_orders(kafka_broker, registry, topic, 20, 1)
        table = default_table_name(topic)
        run.wait_for_positions(table, topic, {0: 20})
        proxy.add_rule(Rule("*", r"floe-ready-probe", "delay:300", times=1000))
        wait_probe(rest + "/ready", 503, "storage: no answer", timeout=30)
        produce_orders(kafka_broker, registry, topic, 10, 1)
        run.wait_for_positions(table, topic, {0: 30})
        started = time.monotonic()
        rc = run.stop(timeout=60)
        took = time.monotonic() - started
        print(f"stopped in {took:.1f} s with a storage check hanging")
        assert rc == 0, run.log()
        # Bounded by the 5 s wait, not by the 300 s the store takes; margin for a busy core.
        assert took < 30, took
        assert "not waiting for it" in run.log_path.read_text(), run.log()

