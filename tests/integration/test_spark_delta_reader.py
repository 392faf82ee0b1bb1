"""A JVM reader reads Floe's Delta table: Spark local with delta-spark (tools/spark-reader,
Spark 4.0.1 + Delta 4.0.1) must return exactly the rows and values that were written, the same
as delta-rs and DuckDB's delta extension, also when the state comes from Floe's checkpoint.

The table is test_delta_log's: floe_delta_fixture writes 11 appends of the same 5 rows (column
mapping `name`, reader 3 / writer 7 with columnMapping + timestampNtz, and the writer feature
`invariants` because the schema has non-nullable columns — Delta Spark refuses a writer-7 table
with non-nullable columns that does not list it; checkpoint at version 10).
"""
from __future__ import annotations

import json
import pathlib
import shutil
import sysconfig

import deltalake
import duckdb
import pyarrow as pa
import pytest

from harness.spark import read_delta
from test_delta_log import APPENDS, ICEBERG_SCHEMA, table  # noqa: F401  (module fixture)

LOG = "_delta_log"


def key(row):
    return (row["id"], row["_kafka"]["offset"])


def expected(data):
    return sorted(data.to_pylist() * APPENDS, key=key)


def delta_rs_rows(path):
    return sorted(pa.table(deltalake.DeltaTable(str(path)).scan()).to_pylist(), key=key)


@pytest.fixture(scope="module")
def checkpoint_only(table, tmp_path_factory):  # noqa: F811
    """A copy of Floe's table with the JSON commits 0..10 removed: the state before version 11
    comes only from Floe's checkpoint."""
    root, _, _ = table
    copy = tmp_path_factory.mktemp("spark") / "table"
    shutil.copytree(root, copy)
    log = copy / LOG
    for v in range(11):
        (log / f"{v:020d}.json").unlink()
    assert json.loads((log / "_last_checkpoint").read_text())["version"] == 10
    return copy


@pytest.fixture(scope="module")
def spark_latest(checkpoint_only):
    return read_delta(checkpoint_only)


def test_spark_reads_floes_table_as_written(table):  # noqa: F811
    root, data, _ = table
    meta, rows = read_delta(root)
    assert meta["version"] == 11 and meta["count"] == 5 * APPENDS
    assert sorted(rows, key=key) == expected(data)


def test_spark_reads_every_value_through_floes_checkpoint(table, checkpoint_only, spark_latest):  # noqa: F811,E501
    _, data, _ = table
    meta, rows = spark_latest
    assert meta["version"] == 11 and meta["count"] == 5 * APPENDS == len(rows)
    got = sorted(rows, key=key)
    assert got == expected(data)
    assert got == delta_rs_rows(checkpoint_only)
    # Spot checks against the fixture's literal values (test_delta_log.ROWS).
    r4 = next(r for r in got if r["id"] == 4)
    assert str(r4["price"]) == "99999999.99" and r4["name"] == "z\u00e9"
    assert r4["local_ts"].isoformat() == "2024-01-02T03:04:05.123460"
    assert r4["_kafka"]["timestamp"].isoformat() == "2024-01-02T03:04:05.123460+00:00"
    assert r4["tags"] == ["y", None] and r4["attrs"] == [("b", None)]
    assert r4["_kafka"]["key"] == b"k" and r4["_kafka"]["headers"] == [{"key": "h", "value": None}]
    r3 = next(r for r in got if r["id"] == 3)
    assert r3["name"] is r3["price"] is r3["tags"] is r3["attrs"] is None and r3["ratio"] == 2.5


def test_spark_schema_is_the_logical_column_mapped_schema(spark_latest):
    meta, _ = spark_latest
    fields = {f["name"]: f for f in meta["schema"]["fields"]}
    assert list(fields) == [f["name"] for f in ICEBERG_SCHEMA["fields"]]
    assert {n: f["type"] for n, f in fields.items() if isinstance(f["type"], str)} == {
        "id": "long", "name": "string", "price": "decimal(10,2)", "local_ts": "timestamp_ntz",
        "day": "date", "ratio": "float", "ok": "boolean"}
    assert not fields["id"]["nullable"] and not fields["_kafka"]["nullable"]
    kafka = {f["name"]: f["type"] for f in fields["_kafka"]["type"]["fields"]}
    assert kafka["timestamp"] == "timestamp" and kafka["key"] == "binary"
    # Physical names and column-mapping ids stay inside Delta: Spark shows logical names only.
    assert all(f["metadata"] == {} for f in meta["schema"]["fields"])


def test_spark_time_travel_to_the_checkpoint_version(table):  # noqa: F811
    root, data, _ = table
    meta, rows = read_delta(root, version=10)
    assert meta["version"] == 10 and meta["count"] == 5 * 10
    assert sorted(rows, key=key) == sorted(data.to_pylist() * 10, key=key)


def duckdb_connect():
    ext_dir = pathlib.Path(sysconfig.get_paths()["purelib"]) / "duckdb_ext" / "extensions"
    con = duckdb.connect(config={"autoinstall_known_extensions": False,
                                 "autoload_known_extensions": False,
                                 "extension_directory": str(ext_dir)})
    con.execute("LOAD delta")
    con.execute("SET TimeZone = 'UTC'")
    return con


def test_duckdb_delta_scan_reads_the_same_rows(table, tmp_path):  # noqa: F811
    root, data, _ = table
    # As written, and through the checkpoint alone (JSON commits 0..10 removed).
    copy = tmp_path / "copy"
    shutil.copytree(root, copy)
    for v in range(11):
        (copy / LOG / f"{v:020d}.json").unlink()
    con = duckdb_connect()
    for path in (root, copy):
        got = con.execute(f"SELECT * FROM delta_scan('{path}')").fetch_arrow_table()
        assert got.column_names == [f["name"] for f in ICEBERG_SCHEMA["fields"]]
        assert sorted(got.to_pylist(), key=key) == expected(data), path
