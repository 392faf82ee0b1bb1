"""Issue 3: one commit path. Another writer (pyiceberg through Floe's REST catalog) appends to
a table Floe is writing and expires every snapshot but its own; Floe is then SIGKILLed while
writing and restarted. Floe's records must all be present exactly once and the other writer's
rows kept: Floe finds its positions in the table property (ARCHITECTURE.md §2), not in a
snapshot that was expired.
"""
from __future__ import annotations

import collections
import threading
import time

import pyarrow as pa
from pyiceberg.catalog.rest import RestCatalog
from pyiceberg.catalog.sql import SqlCatalog
from pyiceberg.exceptions import CommitFailedException

from harness.floe import FloeRun, default_table_name
from test_exactly_once import committed_records, produce_events, serializer

EXTERNAL_ROWS = 100
EXTERNAL_SEQ0 = 10_000_000


def rest_catalog(uri: str) -> RestCatalog:
    return RestCatalog("floe", uri=uri)


def with_commit_retry(fn, timeout: float = 120.0):
    """pyiceberg does not retry a 409: reload and try again, as a real client would. Retries
    for `timeout` seconds rather than a number of times: Floe commits every second while the
    producer runs, and on a busy machine an attempt can lose that race more often (30
    attempts 0.2 s apart ran out at ~6 s plus the attempts); once Floe is idle one wins."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            return fn()
        except CommitFailedException:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.2)


def external_rows(table) -> pa.Table:
    schema = table.schema().as_arrow()
    rows = []
    for i in range(EXTERNAL_ROWS):
        seq = EXTERNAL_SEQ0 + i
        rows.append({"seq": seq, "payload": f"event-{seq}", "amount": i / 2,
                     "_kafka": {"partition": -1, "offset": i, "timestamp": None, "key": None,
                                "headers": []}})
    return pa.Table.from_pylist(rows, schema=schema)


def split_rows(table) -> tuple[collections.Counter, collections.Counter]:
    """(Floe's (partition, offset, seq) multiset, the external writer's seq multiset)."""
    floe, ext = collections.Counter(), collections.Counter()
    for row in table.scan(selected_fields=("seq", "payload", "amount", "_kafka")).to_arrow().to_pylist():
        assert row["payload"] == f"event-{row['seq']}", row
        if row["_kafka"]["partition"] == -1:
            assert row["amount"] == (row["seq"] - EXTERNAL_SEQ0) / 2
            ext[row["seq"]] += 1
        else:
            floe[(row["_kafka"]["partition"], row["_kafka"]["offset"], row["seq"])] += 1
    return floe, ext


def test_external_append_and_expiry_then_sigkill(kafka_broker, registry, tmp_path):
    topic = "rest-external"
    partitions = 4
    kafka_broker.create_topic(topic, partitions=partitions)
    ser = serializer(registry)
    table_name = default_table_name(topic)
    run = FloeRun(tmp_path, kafka_broker.bootstrap, registry.url, [{"name": topic}],
                  defaults={"commit.interval.ms": 1000})

    produce_events(kafka_broker.bootstrap, ser, topic, 0, 20_000, partitions)
    run.start()
    hwm = {p: hi for p, (lo, hi) in kafka_broker.watermarks(topic).items()}
    run.wait_for_positions(table_name, topic, hwm)

    # While Floe runs, more records arrive and pyiceberg appends through the REST catalog.
    producer = threading.Thread(target=produce_events,
                                args=(kafka_broker.bootstrap, ser, topic, 20_000, 20_000,
                                      partitions))
    producer.start()
    cat = rest_catalog(run.rest_uri())
    ident = f"kafka.{table_name}"

    def append():
        t = cat.load_table(ident)
        t.append(external_rows(t))
    with_commit_retry(append)
    producer.join()
    hwm = {p: hi for p, (lo, hi) in kafka_broker.watermarks(topic).items()}
    run.wait_for_positions(table_name, topic, hwm)

    # Floe is idle (everything committed): one more pyiceberg append becomes the newest
    # snapshot, then every other snapshot is expired through the REST catalog.
    def append_and_expire():
        t = cat.load_table(ident)
        t.append(external_rows(t).slice(0, 0))  # an empty append still makes a snapshot
        t = cat.load_table(ident)
        keep = t.metadata.current_snapshot_id
        others = [s.snapshot_id for s in t.metadata.snapshots if s.snapshot_id != keep]
        t.maintenance.expire_snapshots().by_ids(others).commit()
        return keep
    keep = with_commit_retry(append_and_expire)
    md = run.metadata(table_name)
    assert [s["snapshot-id"] for s in md["snapshots"]] == [keep]
    assert "floe.kafka.offsets" not in md["snapshots"][0]["summary"]
    assert run.table_positions(table_name, topic) == hwm  # the property survived

    # Kill Floe while it writes a new batch; restart; it must continue exactly once.
    producer = threading.Thread(target=produce_events,
                                args=(kafka_broker.bootstrap, ser, topic, 40_000, 20_000,
                                      partitions))
    producer.start()
    time.sleep(1.5)
    run.kill()
    producer.join()
    run.start()
    hwm = {p: hi for p, (lo, hi) in kafka_broker.watermarks(topic).items()}
    run.wait_for_positions(table_name, topic, hwm, timeout=180)
    assert run.stop() == 0, run.log()

    want = committed_records(kafka_broker.bootstrap, topic)
    assert sum(want.values()) == 60_000
    # Floe has stopped; the SQL catalog file is the one its REST catalog served.
    t = SqlCatalog("floe", uri=f"sqlite:///{run.catalog_db}",
                   warehouse=f"file://{run.warehouse}").load_table(ident)
    floe_rows, ext_rows = split_rows(t)
    dupes = [k for k, v in floe_rows.items() if v > 1]
    assert not dupes, f"{len(dupes)} duplicated records, e.g. {dupes[:3]}"
    assert floe_rows == want
    assert ext_rows == collections.Counter(range(EXTERNAL_SEQ0, EXTERNAL_SEQ0 + EXTERNAL_ROWS))
