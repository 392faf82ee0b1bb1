"""Issue 20, orphan cleanup: `floe maintain` deletes the files under a table's location that
no retained Iceberg snapshot and no Delta version references (here: what a crash between
the metadata write and the pointer swap left behind), only once they are older than
maintenance.orphan.min.age.ms, and never a referenced file. The referenced set is computed
independently here, with pyiceberg (every snapshot's manifests, entries of every status)
and delta-rs (every version's files); afterwards pyiceberg, DuckDB and delta-rs read
exactly the produced rows, at the current and the oldest snapshot / version.
"""
from __future__ import annotations

import collections
import json
import os
import pathlib
import random
import re
import subprocess
import time
import urllib.parse

import deltalake
import pyarrow as pa
import pyarrow.parquet  # noqa: F401 (pa.parquet)
from pyiceberg.catalog.sql import SqlCatalog

from harness.floe import FloeRun, default_table_name, floe_binary
from test_core import assert_rows_are_produced, duckdb_connect, produce_orders
from test_delta import BOTH, wait_for_delta_txns

DAY_S = 24 * 3600


def maintain(run: FloeRun, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([str(floe_binary()), "maintain", "--config", str(run.config_path),
                           *args], capture_output=True, text=True, timeout=300)


def files_under(root: pathlib.Path) -> set[str]:
    return {str(p) for p in root.rglob("*") if p.is_file()}


def age(paths, seconds: float) -> None:
    t = time.time() - seconds
    for p in paths:
        os.utime(p, (t, t))


def referenced(run: FloeRun, table: str, root: pathlib.Path) -> set[str]:
    """Every file a retained Iceberg snapshot or a Delta version in the log references."""
    cat = SqlCatalog("floe", uri=f"sqlite:///{run.catalog_db}",
                     warehouse=f"file://{run.warehouse}")
    t = cat.load_table(f"kafka.{table}")
    out = {t.metadata_location}
    out.update(e.metadata_file for e in t.metadata.metadata_log)
    for snap in t.metadata.snapshots:
        out.add(snap.manifest_list)
        for m in snap.manifests(t.io):
            out.add(m.manifest_path)
            out.update(e.data_file.file_path
                       for e in m.fetch_manifest_entry(t.io, discard_deleted=False))
    dt = deltalake.DeltaTable(str(root))
    for v in range(0, dt.version() + 1):
        out.update(urllib.parse.unquote(u)
                   for u in deltalake.DeltaTable(str(root), version=v).file_uris())
    return {u.removeprefix("file://") for u in out}


def test_orphans_go_after_the_minimum_age_and_referenced_files_never(kafka_broker, registry,
                                                                    tmp_path):
    topic = "maintain-orders"
    partitions = 2
    kafka_broker.create_topic(topic, partitions=partitions)
    table = default_table_name(topic)
    run = FloeRun(tmp_path, kafka_broker.bootstrap, registry.url, [{"name": topic, **BOTH}])

    # A batch whose metadata was written but never swapped in: its data file, manifest,
    # manifest list and metadata file are referenced by nothing.
    produced = produce_orders(kafka_broker, registry, topic, 200, partitions)
    run.start(env={"FLOE_CRASH_AT": "after-metadata-write"})
    assert run.wait_exit(timeout=120) == 86, run.log()
    run.start()
    for _ in range(3):
        produced.update(produce_orders(kafka_broker, registry, topic, 200, partitions))
        hwm = {p: hi for p, (lo, hi) in kafka_broker.watermarks(topic).items()}
        run.wait_for_positions(table, topic, hwm, timeout=120)
    root = wait_for_delta_txns(run, table, topic, hwm)
    assert run.stop() == 0, run.log()

    refs = referenced(run, table, root)
    log_dir = str(root / "_delta_log") + "/"
    everything = files_under(root)
    assert refs <= everything, sorted(refs - everything)
    leftovers = {f for f in everything - refs if not f.startswith(log_dir)}
    kinds = {pathlib.Path(f).suffix for f in leftovers}
    assert {".parquet", ".avro", ".json"} <= kinds, sorted(leftovers)

    # Young: nothing goes but the lost metadata file. It is no orphan to wait for: its
    # version is below the current one, so it lost the swap for good (expiry.h).
    stale = {f for f in leftovers if f.endswith(".metadata.json")}
    assert len(stale) == 1, leftovers
    r = maintain(run)
    assert r.returncode == 0, r.stderr
    assert f"table kafka.{table}:" in r.stdout and "; 0 orphans" in r.stdout, r.stdout
    assert "1 metadata files past the metadata log deleted" in r.stdout, r.stdout
    everything -= stale
    leftovers -= stale
    assert files_under(root) == everything

    # Two days later (every file aged), plus one orphan written just now.
    age(everything, 2 * DAY_S)
    young = root / "data" / "young-orphan.parquet"
    young.write_bytes(b"not yet old")

    r = maintain(run, "--dry-run", "--table", f"kafka.{table}")
    assert r.returncode == 0, r.stderr
    named = {line.split("would delete ", 1)[1].removeprefix("file://")
             for line in r.stdout.splitlines() if "would delete " in line}
    assert named == leftovers, r.stdout
    assert files_under(root) == everything | {str(young)}

    r = maintain(run)
    assert r.returncode == 0, r.stderr
    print(r.stdout)
    assert f"{len(leftovers)} orphans, {len(leftovers)} deleted" in r.stdout, r.stdout
    after = files_under(root)
    assert after == (everything - leftovers) | {str(young)}
    assert refs <= after

    # Readers, current and oldest, in both formats.
    cat = SqlCatalog("floe", uri=f"sqlite:///{run.catalog_db}",
                     warehouse=f"file://{run.warehouse}")
    t = cat.load_table(f"kafka.{table}")
    rows = t.scan().to_arrow().to_pylist()
    assert len(rows) == len(produced)
    assert_rows_are_produced(rows, produced)
    first = t.metadata.snapshots[0]
    oldest = t.scan(snapshot_id=first.snapshot_id).to_arrow()
    assert oldest.num_rows == int(first.summary["total-records"])
    dt = deltalake.DeltaTable(str(root))
    drows = pa.table(dt.scan()).to_pylist()
    assert len(drows) == len(produced)
    assert_rows_are_produced(drows, produced)
    v0 = deltalake.DeltaTable(str(root), version=0)
    assert pa.table(v0.scan()).num_rows > 0
    con = duckdb_connect()
    con.execute("LOAD iceberg")
    con.execute("LOAD delta")
    md = run.metadata_location(table)
    assert con.execute(f"SELECT count(*) FROM iceberg_scan('{md}')").fetchone()[0] == len(produced)
    assert con.execute(f"SELECT count(*) FROM delta_scan('{root}')").fetchone()[0] == len(produced)

    # Idempotent, and the young orphan is still too young.
    r = maintain(run)
    assert r.returncode == 0 and "; 0 orphans" in r.stdout, r.stdout
    assert young.exists()


def live_files(run: FloeRun, table: str) -> list[str]:
    cat = SqlCatalog("floe", uri=f"sqlite:///{run.catalog_db}",
                     warehouse=f"file://{run.warehouse}")
    t = cat.load_table(f"kafka.{table}")
    return [task.file.file_path for task in t.scan().plan_files()]


def assert_both_formats_hold(run: FloeRun, table: str, root: pathlib.Path,
                             produced: dict, spark_too: bool = False) -> None:
    """pyiceberg, DuckDB (iceberg and delta) and delta-rs (and Spark's Delta reader) return
    exactly the produced rows, value by value."""
    cat = SqlCatalog("floe", uri=f"sqlite:///{run.catalog_db}",
                     warehouse=f"file://{run.warehouse}")
    rows = cat.load_table(f"kafka.{table}").scan().to_arrow().to_pylist()
    assert len(rows) == len(produced)
    assert sorted((r["_kafka"]["partition"], r["_kafka"]["offset"]) for r in rows) == \
        sorted(produced)
    assert_rows_are_produced(rows, produced)
    drows = pa.table(deltalake.DeltaTable(str(root)).scan()).to_pylist()
    assert len(drows) == len(produced)
    assert_rows_are_produced(drows, produced)
    con = duckdb_connect()
    con.execute("LOAD iceberg")
    con.execute("LOAD delta")
    md = run.metadata_location(table)
    for scan in (f"iceberg_scan('{md}')", f"delta_scan('{root}')"):
        got = con.execute(f"SELECT _kafka.partition, _kafka.offset, id, name FROM {scan}").fetchall()
        assert len(got) == len(produced), scan
        for p, o, i, name in got:
            assert (i, name) == (produced[(p, o)]["id"], produced[(p, o)]["name"]), scan
    if spark_too:
        from harness import spark
        meta, srows = spark.read_delta(root)
        assert meta["count"] == len(produced) == len(srows)
        assert sorted((r["_kafka"]["partition"], r["_kafka"]["offset"]) for r in srows) == \
            sorted(produced)


def test_compaction_rewrites_small_files_in_both_formats(kafka_broker, registry, tmp_path):
    """Every file qualifies for copying by row group here (compaction.copy.row.group.bytes
    1): the readers, Spark's included, read the copied row groups under the new footer.
    Decoded rewrites are read back in the tests below."""
    topic = "compact-orders"
    partitions = 2
    kafka_broker.create_topic(topic, partitions=partitions)
    table = default_table_name(topic)
    run = FloeRun(tmp_path, kafka_broker.bootstrap, registry.url, [{"name": topic, **BOTH}],
                  defaults={"commit.interval.ms": 1000, "compaction.min.input.files": 5,
                            "compaction.copy.row.group.bytes": 1})
    run.start()
    produced = {}
    for _ in range(12):  # a commit each: a dozen small files
        produced.update(produce_orders(kafka_broker, registry, topic, 20, partitions))
        hwm = {p: hi for p, (lo, hi) in kafka_broker.watermarks(topic).items()}
        run.wait_for_positions(table, topic, hwm, timeout=120)
    root = wait_for_delta_txns(run, table, topic, hwm)
    before = live_files(run, table)
    assert len(before) >= 10, before

    # Compaction while Floe ingests: more records arrive during and after it.
    produced.update(produce_orders(kafka_broker, registry, topic, 20, partitions))
    r = maintain(run)
    assert r.returncode == 0, r.stdout + r.stderr
    print(r.stdout)
    assert "compaction rewrote" in r.stdout, r.stdout
    produced.update(produce_orders(kafka_broker, registry, topic, 20, partitions))
    hwm = {p: hi for p, (lo, hi) in kafka_broker.watermarks(topic).items()}
    run.wait_for_positions(table, topic, hwm, timeout=120)
    wait_for_delta_txns(run, table, topic, hwm)
    assert run.stop() == 0, run.log()

    after = live_files(run, table)
    assert len(after) < len(before), (before, after)
    compacted = [f for f in after if "/compact-" in f]
    assert len(compacted) == 1, after
    m = re.search(r"compaction rewrote (\d+) small files .*; (\d+) inputs copied by row group",
                  r.stdout)
    assert m and m.group(1) == m.group(2), r.stdout
    # One row group per input file, each as its commit wrote it.
    footer = pa.parquet.ParquetFile(compacted[0].removeprefix("file://")).metadata
    assert footer.num_row_groups == int(m.group(1)), footer
    # The Delta log has the compaction as remove/add without a data change.
    dt = deltalake.DeltaTable(str(root))
    history = dt.history()
    optimize = [h for h in history if h.get("operation") == "OPTIMIZE"]
    assert len(optimize) == 1, history
    delta_files = {urllib.parse.unquote(u).removeprefix("file://") for u in dt.file_uris()}
    assert delta_files == {f.removeprefix("file://") for f in after}
    assert_both_formats_hold(run, table, root, produced, spark_too=True)

    # A second run finds too few small files; positions and ingestion carry on.
    r = maintain(run, "--table", f"kafka.{table}")
    assert r.returncode == 0 and "no compaction (" in r.stdout, r.stdout
    run.start()
    produced.update(produce_orders(kafka_broker, registry, topic, 20, partitions))
    hwm = {p: hi for p, (lo, hi) in kafka_broker.watermarks(topic).items()}
    run.wait_for_positions(table, topic, hwm, timeout=120)
    wait_for_delta_txns(run, table, topic, hwm)
    assert run.stop() == 0, run.log()
    assert_both_formats_hold(run, table, root, produced)


def test_a_crash_at_each_compaction_step_loses_and_doubles_nothing(kafka_broker, registry,
                                                                   tmp_path):
    topic = "compact-crash"
    partitions = 2
    kafka_broker.create_topic(topic, partitions=partitions)
    table = default_table_name(topic)
    run = FloeRun(tmp_path, kafka_broker.bootstrap, registry.url,
                  [{"name": topic, **BOTH, "compaction.min.input.files": 3}])
    run.start()
    produced = {}

    def rounds(n: int) -> dict:
        for _ in range(n):
            produced.update(produce_orders(kafka_broker, registry, topic, 10, partitions))
            hwm = {p: hi for p, (lo, hi) in kafka_broker.watermarks(topic).items()}
            run.wait_for_positions(table, topic, hwm, timeout=120)
        return hwm

    root = wait_for_delta_txns(run, table, topic, rounds(4))
    for point in ("after-compaction-write", "before-compaction-commit",
                  "after-compaction-commit"):
        before = live_files(run, table)
        env = dict(os.environ, FLOE_CRASH_AT=point)
        r = subprocess.run([str(floe_binary()), "maintain", "--config", str(run.config_path)],
                           capture_output=True, text=True, timeout=300, env=env)
        assert r.returncode == 86, (point, r.returncode, r.stdout, r.stderr)
        after = live_files(run, table)
        if point == "after-compaction-commit":
            assert len(after) < len(before), point
        else:
            assert sorted(after) == sorted(before), point
        # Ingestion goes on; its Delta mirror catches up with a compaction Delta lacks.
        hwm = rounds(2)
        wait_for_delta_txns(run, table, topic, hwm)
        dt = deltalake.DeltaTable(str(root))
        delta_files = {urllib.parse.unquote(u).removeprefix("file://") for u in dt.file_uris()}
        assert delta_files == {f.removeprefix("file://") for f in live_files(run, table)}, point
    assert run.stop() == 0, run.log()
    assert_both_formats_hold(run, table, root, produced)
    # What the crashes left is unreferenced, and orphan cleanup takes it once old.
    refs = referenced(run, table, root)
    everything = files_under(root)
    leftovers = {f for f in everything - refs if "/_delta_log/" not in f}
    assert any("/compact-" in f for f in leftovers), sorted(leftovers)
    age(everything, 2 * DAY_S)
    r = maintain(run)  # (it compacts the newer small files too)
    assert r.returncode == 0, r.stderr
    after = files_under(root)
    assert not leftovers & after, sorted(leftovers & after)
    assert refs <= after
    assert_both_formats_hold(run, table, root, produced)


def test_floe_run_compacts_in_the_background_while_it_ingests(kafka_broker, registry,
                                                              tmp_path):
    topic = "compact-background"
    partitions = 2
    kafka_broker.create_topic(topic, partitions=partitions)
    table = default_table_name(topic)
    run = FloeRun(tmp_path, kafka_broker.bootstrap, registry.url,
                  [{"name": topic, **BOTH, "compaction.min.input.files": 4}],
                  extra={"maintenance": {"interval.ms": 3000, "cpu.percent": 50}})
    run.start()
    produced = {}
    deadline = time.monotonic() + 120
    while "maintenance: table kafka." + table + ": compacted" not in run.log(400):
        assert time.monotonic() < deadline, run.log()
        produced.update(produce_orders(kafka_broker, registry, topic, 10, partitions))
        hwm = {p: hi for p, (lo, hi) in kafka_broker.watermarks(topic).items()}
        run.wait_for_positions(table, topic, hwm, timeout=120)
    produced.update(produce_orders(kafka_broker, registry, topic, 10, partitions))
    hwm = {p: hi for p, (lo, hi) in kafka_broker.watermarks(topic).items()}
    run.wait_for_positions(table, topic, hwm, timeout=120)
    root = wait_for_delta_txns(run, table, topic, hwm)
    assert run.stop() == 0, run.log()
    assert any("/compact-" in f for f in live_files(run, table))
    dt = deltalake.DeltaTable(str(root))
    delta_files = {urllib.parse.unquote(u).removeprefix("file://") for u in dt.file_uris()}
    assert delta_files == {f.removeprefix("file://") for f in live_files(run, table)}
    assert_both_formats_hold(run, table, root, produced)


COMPACTION_CRASH_POINTS = ["after-compaction-write", "before-compaction-commit",
                           "after-compaction-commit", "after-expiry-commit"]


def test_kill_9_while_ingesting_and_compacting_keeps_both_formats_exact(kafka_broker, registry,
                                                                        tmp_path):
    """Background compaction and expiry (5 s retention) every second while Floe ingests;
    SIGKILL at random six times, then a crash at each compaction and expiry crash point
    inside `floe run`: the multiset of (partition, offset, seq) in Iceberg and in Delta
    equals a read_committed consumer's."""
    from test_exactly_once import (committed_records, crash_and_kill, serializer,
                                   table_records, wait_total)
    topic = "compact-kill"
    partitions = 2
    kafka_broker.create_topic(topic, partitions=partitions)
    table = default_table_name(topic)
    ser = serializer(registry)
    run = FloeRun(tmp_path, kafka_broker.bootstrap, registry.url,
                  [{"name": topic, **BOTH, "snapshot.retention.ms": 5000,
                    "snapshot.min.count": 1, "compaction.min.input.files": 2}],
                  extra={"maintenance": {"interval.ms": 1000, "cpu.percent": 100}})
    rnd = random.Random(20)
    produced = crash_and_kill(run, kafka_broker.bootstrap, ser, topic, partitions, 300,
                              [], 6, rnd, pause_s=(1.0, 4.0))
    # Each crash-point run commits its chunk, then compacts it with what is there.
    from test_exactly_once import produce_events
    for point in COMPACTION_CRASH_POINTS:
        produce_events(kafka_broker.bootstrap, ser, topic, produced, 300, partitions)
        produced += 300
        run.start(env={"FLOE_CRASH_AT": point})
        assert run.wait_exit(timeout=120) == 86, f"no crash at {point}:\n{run.log()}"
        assert f"FLOE_CRASH_AT={point}" in run.log(5)
    run.start()
    wait_total(run, table, produced)
    hwm = {p: hi for p, (lo, hi) in kafka_broker.watermarks(topic).items()}
    run.wait_for_positions(table, topic, hwm)
    root = wait_for_delta_txns(run, table, topic, hwm)
    assert run.stop() == 0, run.log()

    want = committed_records(kafka_broker.bootstrap, topic)
    assert sum(want.values()) == produced
    assert table_records(run, table) == want
    delta = collections.Counter(
        (r["_kafka"]["partition"], r["_kafka"]["offset"], r["seq"])
        for r in pa.table(deltalake.DeltaTable(str(root)).scan(
            columns=["_kafka", "seq"])).to_pylist())
    assert delta == want
    assert any("/compact-" in f for f in live_files(run, table)), live_files(run, table)


def delta_uris(root: pathlib.Path, version: int) -> set[str]:
    dt = deltalake.DeltaTable(str(root), version=version)
    return {urllib.parse.unquote(u).removeprefix("file://") for u in dt.file_uris()}


def test_expiry_frees_storage_and_keeps_time_travel_inside_the_retention(kafka_broker, registry,
                                                                         tmp_path):
    """snapshot.retention.ms 30 s, snapshot.min.count 1. Four commits, a compaction, then
    three commits 11 s later; `floe maintain` runs once the compaction is past the retention.
    Afterwards: every file a retained Iceberg snapshot or a Delta version inside the retention
    references exists (walked with pyiceberg and delta-rs); pyiceberg, delta-rs and Spark's
    Delta reader time-travel to the oldest of them and get exactly the records up to its
    positions; every other data file is gone, the compacted originals included."""
    topic = "expiry-orders"
    # `floe maintain` must start after the compaction left the retention (compaction + 30 s)
    # and before the first of the three late commits does (that commit + 30 s): the three
    # commits and the stop have 30 s, about six times what they take on a quiet machine, so
    # the window holds with the machine's other core busy. (At 20 s the window was 4x.)
    retention_s = 30
    kafka_broker.create_topic(topic, partitions=1)
    table = default_table_name(topic)
    run = FloeRun(tmp_path, kafka_broker.bootstrap, registry.url, [{"name": topic, **BOTH}],
                  defaults={"commit.interval.ms": 1000,
                            "snapshot.retention.ms": retention_s * 1000,
                            "snapshot.min.count": 1, "compaction.min.input.files": 3},
                  extra={"maintenance": {"interval.ms": 3600000}})
    run.start()
    produced: dict = {}

    def commit_a_batch() -> pathlib.Path:
        produced.update(produce_orders(kafka_broker, registry, topic, 30, 1))
        hwm = {p: hi for p, (lo, hi) in kafka_broker.watermarks(topic).items()}
        run.wait_for_positions(table, topic, hwm, timeout=120)
        return wait_for_delta_txns(run, table, topic, hwm)

    for _ in range(4):
        root = commit_a_batch()
    originals = {f.removeprefix("file://") for f in live_files(run, table)}
    assert len(originals) >= 3, originals
    r = maintain(run)
    assert r.returncode == 0 and "compaction rewrote" in r.stdout, r.stdout + r.stderr
    compacted_at = time.time()
    time.sleep(max(0.0, compacted_at + 11 - time.time()))
    for _ in range(3):
        root = commit_a_batch()
    assert run.stop() == 0, run.log()
    data_before = {str(p) for p in (root / "data").rglob("*.parquet")}
    # The compaction's Iceberg snapshot and Delta tombstones are past the retention now;
    # the last three commits are not.
    time.sleep(max(0.0, compacted_at + retention_s + 4 - time.time()))
    started = time.time()
    r = maintain(run)
    finished = time.time()
    assert r.returncode == 0, r.stdout + r.stderr
    print(r.stdout)
    expired = int(r.stdout.split("expired ", 1)[1].split(" ", 1)[0])
    assert expired >= 5, r.stdout

    # Every file a retained Iceberg snapshot reaches exists.
    cat = SqlCatalog("floe", uri=f"sqlite:///{run.catalog_db}",
                     warehouse=f"file://{run.warehouse}")
    t = cat.load_table(f"kafka.{table}")
    assert 3 <= len(t.metadata.snapshots) < 3 + 5, t.metadata.snapshots
    must_exist = {t.metadata_location}
    must_exist.update(e.metadata_file for e in t.metadata.metadata_log)
    iceberg_live = set()
    for snap in t.metadata.snapshots:
        must_exist.add(snap.manifest_list)
        for m in snap.manifests(t.io):
            must_exist.add(m.manifest_path)
            iceberg_live.update(e.data_file.file_path for e in m.fetch_manifest_entry(t.io))
    must_exist |= iceberg_live
    # And every file of a Delta version inside the retention.
    history = {h["version"]: h["timestamp"] / 1000 for h in deltalake.DeltaTable(str(root)).history()}
    inside = sorted(v for v, ts in history.items() if ts >= finished - retention_s)
    assert inside, history
    for v in inside:
        must_exist |= delta_uris(root, v)
    must_exist = {u.removeprefix("file://") for u in must_exist}
    missing = {u for u in must_exist if not pathlib.Path(u).exists()}
    assert not missing, sorted(missing)

    # Every other data file is gone (Delta may keep the version just before its window).
    may_exist = {u.removeprefix("file://") for u in iceberg_live}
    for v in range(max(0, min(v for v, ts in history.items() if ts >= started - retention_s) - 1),
                   max(history) + 1):
        may_exist |= delta_uris(root, v)
    data_after = {str(p) for p in (root / "data").rglob("*.parquet")}
    assert data_after <= may_exist, sorted(data_after - may_exist)
    assert not (originals & data_after), sorted(originals & data_after)
    assert len(data_after) < len(data_before), (data_before, data_after)

    # Time travel to the oldest retained snapshot and to the oldest Delta version inside the
    # retention: exactly the records below their positions.
    oldest = min(t.metadata.snapshots, key=lambda s: s.timestamp_ms)
    positions = json.loads(oldest.summary["floe.kafka.offsets"])[topic]
    want = {k for k in produced if k[1] < positions[str(k[0])]}
    rows = t.scan(snapshot_id=oldest.snapshot_id).to_arrow().to_pylist()
    assert sorted((x["_kafka"]["partition"], x["_kafka"]["offset"]) for x in rows) == sorted(want)
    assert_rows_are_produced(rows, produced)
    v = inside[0]
    dt = deltalake.DeltaTable(str(root), version=v)
    position = dt.transaction_version(f"floe:{t.metadata.table_uuid}:{topic}:0")
    want = {k for k in produced if k[1] < position}
    drows = pa.table(dt.scan()).to_pylist()
    assert sorted((x["_kafka"]["partition"], x["_kafka"]["offset"]) for x in drows) == sorted(want)
    assert_rows_are_produced(drows, produced)
    from harness import spark
    meta, srows = spark.read_delta(root, version=v)
    assert meta["count"] == len(want) == len(srows)
    assert sorted((x["_kafka"]["partition"], x["_kafka"]["offset"]) for x in srows) == sorted(want)

    # Another run (the retained snapshots have aged meanwhile), then the current state in
    # every reader.
    r = maintain(run)
    assert r.returncode == 0, r.stdout + r.stderr
    assert_both_formats_hold(run, table, root, produced)


def produce_aged(run: FloeRun, kafka_broker, registry, topic: str, table: str):
    """Three commits to a one-partition topic: 40 records three hours old, 40 alternating
    two hours old and new (one file straddling a one-hour retention), 30 new. Returns
    (every record, the old ones' keys, a function committing n more new records)."""
    now_ms = int(time.time() * 1000)
    every: dict = {}

    def commit_a_batch(n: int, ts=None, index=None) -> dict:
        got = produce_orders(kafka_broker, registry, topic, n, 1, index=index,
                             timestamp_ms=ts)
        every.update(got)
        hwm = {p: hi for p, (lo, hi) in kafka_broker.watermarks(topic).items()}
        run.wait_for_positions(table, topic, hwm, timeout=120)
        return got

    old = set(commit_a_batch(40, lambda i: now_ms - 3 * 3600 * 1000 + i))
    index: dict = {}
    commit_a_batch(40, lambda i: now_ms - 2 * 3600 * 1000 if i % 2 == 0 else now_ms + i,
                   index)
    old |= {k for k, i in index.items() if i % 2 == 0}
    commit_a_batch(30)
    return every, old, commit_a_batch


def test_row_retention_drops_old_rows_from_both_formats(kafka_broker, registry, tmp_path):
    """retention.ms one hour. Three commits: 40 records three hours old (a file wholly past
    the retention), 40 alternating two hours old and new (a file straddling it), 30 new.
    While Floe keeps ingesting, `floe maintain` removes the first file unread and rewrites
    the second without its old rows: pyiceberg, DuckDB (iceberg and delta), delta-rs and
    Spark's Delta reader then return exactly the new records, value by value, and time
    travel to the snapshot before still has every record."""
    topic = "ttl-orders"
    kafka_broker.create_topic(topic, partitions=1)
    table = default_table_name(topic)
    run = FloeRun(tmp_path, kafka_broker.bootstrap, registry.url,
                  [{"name": topic, **BOTH, "retention.ms": 3600000,
                    "compaction.min.input.files": 100}],
                  defaults={"commit.interval.ms": 1000},
                  extra={"maintenance": {"interval.ms": 3600000}})
    run.start()
    every, old, commit_a_batch = produce_aged(run, kafka_broker, registry, topic, table)
    hwm = {p: hi for p, (lo, hi) in kafka_broker.watermarks(topic).items()}
    root = wait_for_delta_txns(run, table, topic, hwm)
    files_before = live_files(run, table)
    assert len(files_before) == 3, files_before
    cat = SqlCatalog("floe", uri=f"sqlite:///{run.catalog_db}",
                     warehouse=f"file://{run.warehouse}")
    before_id = cat.load_table(f"kafka.{table}").metadata.current_snapshot_id

    r = maintain(run)
    assert r.returncode == 0, r.stdout + r.stderr
    print(r.stdout)
    assert f"row retention 3600000 ms: removed 1 files whole and rewrote 1 straddling it " \
           f"({len(old)} rows)" in r.stdout, r.stdout
    # Ingestion goes on after it (the retention snapshot moved no position).
    commit_a_batch(20, None)
    hwm = {p: hi for p, (lo, hi) in kafka_broker.watermarks(topic).items()}
    wait_for_delta_txns(run, table, topic, hwm)
    assert run.stop() == 0, run.log()

    young = {k: v for k, v in every.items() if k not in old}
    assert len(young) == 20 + 30 + 20
    assert_both_formats_hold(run, table, root, young, spark_too=True)
    t = cat.load_table(f"kafka.{table}")
    retention_snap = [s for s in t.metadata.snapshots
                      if s.summary.get("floe.row-retention") is not None]
    assert len(retention_snap) == 1, t.metadata.snapshots
    assert retention_snap[0].summary.operation.value == "overwrite", retention_snap
    # Time travel inside snapshot.retention.ms still sees the old rows.
    rows = t.scan(snapshot_id=before_id).to_arrow().to_pylist()
    assert sorted((x["_kafka"]["partition"], x["_kafka"]["offset"]) for x in rows) == \
        sorted(k for k in every if k[1] < 110)
    # Delta recorded it as a DELETE with data changes.
    history = deltalake.DeltaTable(str(root)).history()
    deletes = [h for h in history if h.get("operation") == "DELETE"]
    assert len(deletes) == 1, history
    # A second pass finds nothing left past the retention.
    r = maintain(run)
    assert r.returncode == 0 and "no row is past the retention" in r.stdout, r.stdout


def test_a_crash_at_each_row_retention_step_loses_and_doubles_nothing(kafka_broker, registry,
                                                                      tmp_path):
    """`floe maintain` crashes at each row-retention crash point while Floe ingests; after
    each, ingestion goes on and Delta's files equal Iceberg's; in the end both formats hold
    exactly the records inside the retention."""
    topic = "ttl-crash"
    kafka_broker.create_topic(topic, partitions=1)
    table = default_table_name(topic)
    run = FloeRun(tmp_path, kafka_broker.bootstrap, registry.url,
                  [{"name": topic, **BOTH, "retention.ms": 3600000,
                    "compaction.min.input.files": 100}],
                  defaults={"commit.interval.ms": 1000},
                  extra={"maintenance": {"interval.ms": 3600000}})
    run.start()
    every, old, commit_a_batch = produce_aged(run, kafka_broker, registry, topic, table)
    for point in ("after-retention-write", "before-retention-commit",
                  "after-retention-commit"):
        before = live_files(run, table)
        env = dict(os.environ, FLOE_CRASH_AT=point)
        r = subprocess.run([str(floe_binary()), "maintain", "--config", str(run.config_path)],
                           capture_output=True, text=True, timeout=300, env=env)
        assert r.returncode == 86, (point, r.returncode, r.stdout, r.stderr)
        if point != "after-retention-commit":
            assert sorted(live_files(run, table)) == sorted(before), point
        commit_a_batch(10)
        hwm = {p: hi for p, (lo, hi) in kafka_broker.watermarks(topic).items()}
        root = wait_for_delta_txns(run, table, topic, hwm)
        dt = deltalake.DeltaTable(str(root))
        delta_files = {urllib.parse.unquote(u).removeprefix("file://") for u in dt.file_uris()}
        assert delta_files == {f.removeprefix("file://") for f in live_files(run, table)}, point
    assert run.stop() == 0, run.log()
    r = maintain(run)
    assert r.returncode == 0 and "no row is past the retention" in r.stdout, r.stdout
    assert_both_formats_hold(run, table, root, {k: v for k, v in every.items() if k not in old})


def test_3000_commits_with_compaction_keep_the_file_count_bounded(tmp_path):
    """3,000 commits of three records each through the production committer and Delta mirror
    with an injected clock (one second per commit; the binary would need 50 minutes):
    `floe_maintenance_soak` runs MaintainTable every 100 commits with Floe's default
    compaction settings and a two-minute snapshot retention. The live file count stays at
    most 101 (100 commits' files plus the compacted one) and is 1 after each compaction;
    after every one of the 30 compactions pyiceberg, DuckDB (iceberg and delta) and delta-rs
    read exactly the produced (id, offset) pairs, Spark's Delta reader too at commits 1,500
    and 3,000. Expiry frees the storage of what the compactions replaced."""
    from test_core import duckdb_connect
    from harness import spark
    soak = (floe_binary().resolve().parents[3] / "tools" / "maintenance_soak" /
            "floe_maintenance_soak")
    wh = tmp_path / "wh"
    wh.mkdir()
    db = tmp_path / "catalog.db"
    proc = subprocess.Popen([str(soak), "--warehouse", str(wh), "--catalog", str(db),
                             "--commits", "3000", "--records", "3", "--maintain-every", "100",
                             "--pause"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            text=True)
    cat = SqlCatalog("floe", uri=f"sqlite:///{db}", warehouse=f"file://{wh}")
    con = duckdb_connect()
    con.execute("LOAD iceberg")
    con.execute("LOAD delta")
    reports = []
    try:
        for line in proc.stdout:
            if not line.startswith("{"):
                continue  # a log line
            rep = json.loads(line)
            reports.append(rep)
            assert rep["max_live_files"] <= 101, rep
            assert rep["live_files"] == 1, rep
            want = [(i, i) for i in range(rep["records"])]
            t = cat.load_table("kafka.soak")
            root = t.metadata.location.removeprefix("file://")
            rows = t.scan(selected_fields=("id", "_kafka")).to_arrow().to_pylist()
            assert sorted((r["id"], r["_kafka"]["offset"]) for r in rows) == want, rep
            for scan in (f"iceberg_scan('{rep['metadata']}')", f"delta_scan('{root}')"):
                got = con.execute(f"SELECT id, _kafka.offset FROM {scan}").fetchall()
                assert sorted(got) == want, (scan, rep)
            drows = pa.table(deltalake.DeltaTable(root).scan(columns=["id", "_kafka"]))
            assert sorted((r["id"], r["_kafka"]["offset"]) for r in drows.to_pylist()) == want
            if rep["commits"] in (1500, 3000):
                meta, srows = spark.read_delta(root)
                assert sorted((r["id"], r["_kafka"]["offset"]) for r in srows) == want, rep
            proc.stdin.write("\n")
            proc.stdin.flush()
    finally:
        proc.stdin.close()
        assert proc.wait(timeout=60) == 0
    assert len(reports) == 30
    print(reports[-1])
    # Expiry deleted what only expired snapshots reached: far fewer data files than commits.
    assert reports[-1]["expired"] > 0 and reports[-1]["deleted"] > 0, reports[-1]
    on_disk = list(pathlib.Path(root, "data").glob("*.parquet"))
    assert len(on_disk) < 1000, len(on_disk)
    # And every file a retained snapshot or the Delta log references is there.
    t = cat.load_table("kafka.soak")
    for snap in t.metadata.snapshots:
        for m in snap.manifests(t.io):
            for e in m.fetch_manifest_entry(t.io):
                assert pathlib.Path(e.data_file.file_path.removeprefix("file://")).exists()
    for u in deltalake.DeltaTable(root).file_uris():
        assert pathlib.Path(urllib.parse.unquote(u).removeprefix("file://")).exists(), u


def test_compaction_settings_are_per_table_and_a_wait_triggers_it(kafka_broker, registry,
                                                                  tmp_path):
    """Two topics, three commits each: `quiet` has compaction.min.input.files 100,
    compaction.max.wait.ms 2000 and a sort order (qty descending, then address.zip, a field
    inside a struct, nulls first), `busy` the defaults (10 files, one hour, unsorted). Once
    the quiet table's oldest snapshot is two seconds old, `floe maintain` compacts its three
    files (the time trigger: far fewer than 100) into one file sorted by the order, which
    becomes the table's default sort order and the file's sort_order_id; busy's three stay.
    Both tables record their own settings as properties, and both formats hold every
    record."""
    quiet, busy = "quiet-orders", "busy-orders"
    for topic in (quiet, busy):
        kafka_broker.create_topic(topic, partitions=1)
    run = FloeRun(tmp_path, kafka_broker.bootstrap, registry.url,
                  [{"name": quiet, **BOTH, "compaction.min.input.files": 100,
                    "compaction.max.wait.ms": 2000,
                    "compaction.sort.order": "qty desc, address.zip"},
                   {"name": busy, **BOTH}],
                  defaults={"commit.interval.ms": 1000},
                  extra={"maintenance": {"interval.ms": 3600000}})
    run.start()
    produced = {quiet: {}, busy: {}}
    started = time.time()
    for _ in range(3):
        for topic in (quiet, busy):
            produced[topic].update(produce_orders(kafka_broker, registry, topic, 10, 1))
            hwm = {p: hi for p, (lo, hi) in kafka_broker.watermarks(topic).items()}
            run.wait_for_positions(default_table_name(topic), topic, hwm, timeout=120)
    roots = {t: wait_for_delta_txns(run, default_table_name(t), t,
                                    {p: hi for p, (lo, hi) in
                                     kafka_broker.watermarks(t).items()})
             for t in (quiet, busy)}
    assert run.stop() == 0, run.log()
    cat = SqlCatalog("floe", uri=f"sqlite:///{run.catalog_db}",
                     warehouse=f"file://{run.warehouse}")
    quiet_md = cat.load_table(f"kafka.{default_table_name(quiet)}").metadata
    props = quiet_md.properties
    assert props["floe.compaction.min-input-files"] == "100", props
    assert props["floe.compaction.max-wait-ms"] == "2000", props
    # The time trigger counts from the table's oldest snapshot: wait until that one (not the
    # test's start) is 2 s old, with a second to spare.
    oldest_s = min(s.timestamp_ms for s in quiet_md.snapshots) / 1000
    time.sleep(max(0.0, started + 4 - time.time(), oldest_s + 3 - time.time()))
    r = maintain(run)
    assert r.returncode == 0, r.stdout + r.stderr
    print(r.stdout)
    assert f"table kafka.{default_table_name(quiet)}: compaction rewrote 3 small files" in \
        r.stdout, r.stdout
    assert f"table kafka.{default_table_name(busy)}: no compaction (3 small files, fewer " \
           f"than 10)" in r.stdout, r.stdout
    assert len(live_files(run, default_table_name(quiet))) == 1
    assert len(live_files(run, default_table_name(busy))) == 3
    # The order, as pyiceberg reads it from the metadata, and the compacted file in it.
    t = cat.load_table(f"kafka.{default_table_name(quiet)}")
    schema = t.schema()
    order = t.sort_order()
    assert [(f.source_id, f.direction.value, f.null_order.value) for f in order.fields] == [
        (schema.find_field("qty").field_id, "desc", "nulls-last"),
        (schema.find_field("address.zip").field_id, "asc", "nulls-first")], order
    assert order.order_id == 1, order
    [task] = t.scan().plan_files()
    assert task.file.sort_order_id == 1, task.file
    rows = pa.parquet.read_table(task.file.file_path.removeprefix("file://")).to_pylist()
    assert len(rows) == len(produced[quiet])
    keys = [(-r["qty"], r["address"]["zip"] is not None, r["address"]["zip"] or 0)
            for r in rows]
    assert keys == sorted(keys), keys[:20]
    assert len(set(k[0] for k in keys)) > 1 and any(not k[1] for k in keys)
    busy_table = cat.load_table(f"kafka.{default_table_name(busy)}")
    assert busy_table.sort_order().is_unsorted
    # One more small file, the wait past again: the sorted file is not a candidate (it
    # would come out the same), so one file is too few.
    run.start()
    produced[quiet].update(produce_orders(kafka_broker, registry, quiet, 10, 1))
    hwm = {p: hi for p, (lo, hi) in kafka_broker.watermarks(quiet).items()}
    run.wait_for_positions(default_table_name(quiet), quiet, hwm, timeout=120)
    roots[quiet] = wait_for_delta_txns(run, default_table_name(quiet), quiet, hwm)
    assert run.stop() == 0, run.log()
    time.sleep(2.5)
    r = maintain(run)
    assert r.returncode == 0, r.stdout + r.stderr
    assert f"table kafka.{default_table_name(quiet)}: no compaction (1 small files, fewer " \
           f"than 100)" in r.stdout, r.stdout
    assert_both_formats_hold(run, default_table_name(quiet), roots[quiet], produced[quiet])
    for topic in (quiet, busy):
        assert_both_formats_hold(run, default_table_name(topic), roots[topic], produced[topic])
