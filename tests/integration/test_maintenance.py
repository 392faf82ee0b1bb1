"""Issue 20, orphan cleanup: `floe maintain` deletes the files under a table's location that
no retained Iceberg snapshot and no Delta version references (here: what a crash between
the metadata write and the pointer swap left behind), only once they are older than
maintenance.orphan.min.age.ms, and never a referenced file. The referenced set is computed
independently here, with pyiceberg (every snapshot's manifests, entries of every status)
and delta-rs (every version's files); afterwards pyiceberg, DuckDB and delta-rs read
exactly the produced rows, at the current and the oldest snapshot / version.
"""
from __future__ import annotations

import os
import pathlib
import subprocess
import time
import urllib.parse

import deltalake
import pyarrow as pa
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

    # Young: nothing goes.
    r = maintain(run)
    assert r.returncode == 0, r.stderr
    assert f"table kafka.{table}:" in r.stdout and "; 0 orphans" in r.stdout, r.stdout
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
