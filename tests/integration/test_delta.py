"""Issue 4: Delta Lake tables from the same data files, exactly once.

A topic with `formats: [iceberg, delta]` is read back through delta-rs (values, txn versions,
through a checkpoint), DuckDB's delta extension, and compared with pyiceberg file for file and
row for row, and Spark with delta-spark (the JVM reader); other writers' data changes are
refused with 403; and the crash test (every
commit step, a crash between the Iceberg commit and the Delta entry, random SIGKILLs) ends with
exactly the topic's records in each format.
"""
from __future__ import annotations

import collections
import json
import pathlib
import re
import random
import time
import urllib.parse

import deltalake
import pyarrow as pa
import pytest
from pyiceberg.catalog.rest import RestCatalog
from pyiceberg.catalog.sql import SqlCatalog
from pyiceberg.exceptions import ForbiddenError

from harness import spark
from harness.floe import FloeRun, default_table_name
from test_core import assert_rows_are_produced, duckdb_connect, norm_float, produce_orders
from test_exactly_once import (CRASH_POINTS, committed_records, crash_and_kill, produce_events,
                               serializer, table_records)

BOTH = {"formats": ["iceberg", "delta"]}


def table_root(run: FloeRun, table: str) -> pathlib.Path:
    # "file:///path" (Floe) or "file:/path" (Hadoop, behind an external REST catalog).
    return pathlib.Path(re.sub(r"^file:(//)?", "", run.metadata(table)["location"]))


def delta_rows(root: pathlib.Path, columns=None) -> list[dict]:
    # delta-rs 1.6.6 reads column-mapped tables through its DataFusion scan only (its pyarrow
    # dataset path refuses the columnMapping reader feature).
    dt = deltalake.DeltaTable(str(root))
    return pa.table(dt.scan(columns=columns)).to_pylist() if columns else \
        pa.table(dt.scan()).to_pylist()


def app_id(run: FloeRun, table: str, topic: str, partition: int) -> str:
    return f"floe:{run.metadata(table)['table-uuid']}:{topic}:{partition}"


def wait_for_delta_txns(run: FloeRun, table: str, topic: str, hwm: dict[int, int],
                        timeout: float = 60.0) -> pathlib.Path:
    """The Delta entry follows the Iceberg commit: waits until the Delta log records `hwm`
    for every partition (or the timeout passes; the caller's checks then fail). Returns the
    table's root. The entry normally follows within a second; the timeout is a liveness
    bound, not a speed one."""
    root = table_root(run, table)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        dt = deltalake.DeltaTable(str(root)) if (root / "_delta_log").exists() else None
        if dt and all(dt.transaction_version(app_id(run, table, topic, p)) == v
                      for p, v in hwm.items()):
            break
        time.sleep(0.2)
    return root


def comparable(row: dict) -> tuple:
    out = []
    for k in sorted(row):
        v = row[k]
        if k == "price":
            v = norm_float(v)
        elif k == "attrs":
            v = sorted(dict(v).items())
        out.append((k, repr(v)))
    return tuple(out)


def test_both_formats_same_files_same_rows(kafka_broker, registry, tmp_path):
    topic = "delta-all-types"
    partitions = 4
    kafka_broker.create_topic(topic, partitions=partitions)
    table = default_table_name(topic)
    run = FloeRun(tmp_path, kafka_broker.bootstrap, registry.url, [{"name": topic, **BOTH}],
                  defaults={"commit.interval.ms": 1000})
    run.start()
    # Twelve rounds, each committed before the next: more than 10 Delta versions.
    produced = {}
    for _ in range(12):
        produced.update(produce_orders(kafka_broker, registry, topic, 150, partitions))
        hwm = {p: hi for p, (lo, hi) in kafka_broker.watermarks(topic).items()}
        run.wait_for_positions(table, topic, hwm, timeout=120)
    root = wait_for_delta_txns(run, table, topic, hwm)
    assert run.stop() == 0, run.log()

    dt = deltalake.DeltaTable(str(root))
    # Positions: one txn per partition holding the table's position.
    for p, v in hwm.items():
        assert dt.transaction_version(app_id(run, table, topic, p)) == v
    assert dt.version() >= 11, dt.version()
    log = root / "_delta_log"
    assert (log / "00000000000000000010.checkpoint.parquet").exists()
    assert json.loads((log / "_last_checkpoint").read_text())["version"] >= 10
    protocol = dt.protocol()
    assert (protocol.min_reader_version, protocol.min_writer_version) == (3, 7)
    assert "columnMapping" in protocol.reader_features

    # The same Parquet files back both formats.
    cat = SqlCatalog("floe", uri=f"sqlite:///{run.catalog_db}", warehouse=f"file://{run.warehouse}")
    t = cat.load_table(f"kafka.{table}")
    iceberg_files = {task.file.file_path.removeprefix("file://") for task in t.scan().plan_files()}
    delta_files = {urllib.parse.unquote(u.removeprefix("file://")) for u in dt.file_uris()}
    assert iceberg_files == delta_files

    # Identical rows through pyiceberg and delta-rs, and equal to what was produced.
    ice = t.scan().to_arrow().to_pylist()
    dl = delta_rows(root)
    assert len(ice) == len(dl) == len(produced)
    assert sorted(map(comparable, ice)) == sorted(map(comparable, dl))
    assert_rows_are_produced(dl, produced)

    # Spark with delta-spark (the JVM reader) returns the same values.
    meta, srows = spark.read_delta(root)
    assert meta["count"] == len(produced) == len(srows)
    by_pos = {(r["_kafka"]["partition"], r["_kafka"]["offset"]): r for r in srows}
    for r in dl:
        s = by_pos[(r["_kafka"]["partition"], r["_kafka"]["offset"])]
        for k in ("id", "name", "note", "amount", "amount_fixed", "ts_us", "ts_ms", "day", "tags",
                  "address", "lines", "uid", "code", "blob", "qty", "flag", "tmicros"):
            assert s[k] == r[k], (k, s[k], r[k])
        assert norm_float(s["price"]) == norm_float(r["price"])
        assert sorted(dict(s["attrs"]).items()) == sorted(dict(r["attrs"]).items())
        assert s["_kafka"] == r["_kafka"]

    # DuckDB's delta extension (pinned offline) reads the same rows.
    con = duckdb_connect()
    con.execute("LOAD delta")
    got = con.execute(f"SELECT _kafka.partition, _kafka.offset, id, name, amount::VARCHAR "
                      f"FROM delta_scan('{root}')").fetchall()
    assert len(got) == len(produced)
    for p, o, i, name, amount in got:
        order = produced[(p, o)]
        assert (i, name, amount) == (order["id"], order["name"], str(order["amount"]))


def test_other_writers_get_403_on_a_delta_table(kafka_broker, registry, tmp_path):
    topic = "delta-guarded"
    kafka_broker.create_topic(topic, partitions=1)
    table = default_table_name(topic)
    ser = serializer(registry)
    run = FloeRun(tmp_path, kafka_broker.bootstrap, registry.url, [{"name": topic, **BOTH}])
    run.start()
    for n in (100, 200):  # two snapshots, so the older one can be named for expiry
        produce_events(kafka_broker.bootstrap, ser, topic, n - 100, 100, 1)
        run.wait_for_positions(table, topic, {0: n})
    before = run.metadata_location(table)
    cat = RestCatalog("floe", uri=run.rest_uri())
    t = cat.load_table(f"kafka.{table}")
    rows = pa.Table.from_pylist(
        [{"seq": 1, "payload": "x", "amount": None,
          "_kafka": {"partition": -1, "offset": 0, "timestamp": None, "key": None,
                     "headers": []}}], schema=t.schema().as_arrow())
    with pytest.raises(ForbiddenError, match="mirrored to Delta"):
        t.append(rows)
    with pytest.raises(ForbiddenError):
        t.maintenance.expire_snapshots().by_ids(
            [s.snapshot_id for s in t.metadata.snapshots
             if s.snapshot_id != t.metadata.current_snapshot_id]).commit()
    assert run.metadata_location(table) == before
    assert run.stop() == 0, run.log()


def test_crash_at_every_step_with_both_formats(kafka_broker, registry, tmp_path):
    topic = "delta-crash"
    partitions = 4
    kafka_broker.create_topic(topic, partitions=partitions)
    ser = serializer(registry)
    table = default_table_name(topic)
    run = FloeRun(tmp_path, kafka_broker.bootstrap, registry.url, [{"name": topic, **BOTH}],
                  defaults={"commit.interval.ms": 1000, "target.file.size.bytes": 1 << 20})
    produced = crash_and_kill(run, kafka_broker.bootstrap, ser, topic, partitions, 8_000,
                              CRASH_POINTS + ["before-delta-commit"], 3, random.Random(11),
                              (0.3, 2.0))
    hwm = {p: hi for p, (lo, hi) in kafka_broker.watermarks(topic).items()}
    run.start()
    run.wait_for_positions(table, topic, hwm, timeout=300)
    root = table_root(run, table)
    deadline = time.monotonic() + 60
    while True:
        dt = deltalake.DeltaTable(str(root))
        if all(dt.transaction_version(app_id(run, table, topic, p)) == v for p, v in hwm.items()):
            break
        assert time.monotonic() < deadline, f"Delta positions lag:\n{run.log()}"
        time.sleep(0.3)
    assert run.stop() == 0, run.log()

    want = committed_records(kafka_broker.bootstrap, topic)
    assert sum(want.values()) == produced
    assert table_records(run, table) == want
    got = collections.Counter(
        (r["_kafka"]["partition"], r["_kafka"]["offset"], r["seq"])
        for r in delta_rows(root, ["seq", "_kafka"]))
    dupes = [k for k, v in got.items() if v > 1]
    assert not dupes, f"{len(dupes)} duplicated in Delta, e.g. {dupes[:3]}"
    assert got == want
