"""Spark reads through Floe's built-in Iceberg REST catalog (issue 38 item 7): Apache Spark 4.0
with Apache Iceberg's Spark runtime 1.11 (tools/spark-reader SparkSql, catalog `floe` =
SparkCatalog type=rest) queries a table that pyiceberg wrote through the catalog, and its
metadata tables `files`, `snapshots` and `history`.

Why the metadata tables: Iceberg's REST client loads `floe.ns.t.files` first as table `files`
in namespace `ns.t`, and falls back to the metadata table `files` of `ns.t` only when that load
fails with NoSuchTableException. A server that answers NoSuchNamespaceException there (the
namespace `ns.t` does not exist) makes every metadata-table query fail.

Every query runs in one Spark JVM (about 10-20 s); values are compared with what pyiceberg
wrote and what pyiceberg reports about the same table (inspect.files(), the snapshot log).
"""
from __future__ import annotations

import datetime as dt

import pytest

from harness.rest import http, pyiceberg_rest, start_catalog
from harness.spark import run_sql
from test_rest_catalog import PY_ROWS, PY_ROWS_2, PY_SCHEMA, arrow, by_id

UTC = dt.timezone.utc
SEP = "%1F"


@pytest.fixture
def server(tmp_path):
    srv = start_catalog(tmp_path / "rest")
    try:
        yield srv
    finally:
        rc = srv.stop()
        assert rc == 0, f"floe catalog serve exited {rc} on SIGTERM:\n{srv.log()}"


def _ms(ts_ms: int) -> dt.datetime:
    return dt.datetime.fromtimestamp(ts_ms / 1000, tz=UTC).replace(
        microsecond=(ts_ms % 1000) * 1000)


def _files(pa_files) -> list[dict]:
    """pyiceberg's inspect.files() rows, the columns compared with Spark's `files` table."""
    return sorted(({"content": f["content"], "file_path": f["file_path"],
                    "file_format": f["file_format"], "spec_id": f["spec_id"],
                    "record_count": f["record_count"],
                    "file_size_in_bytes": f["file_size_in_bytes"],
                    "value_counts": dict(f["value_counts"]),
                    "null_value_counts": dict(f["null_value_counts"]),
                    "lower_bounds": dict(f["lower_bounds"]),
                    "upper_bounds": dict(f["upper_bounds"])}
                   for f in pa_files.to_pylist()), key=lambda f: f["file_path"])


def _spark_files(rows) -> list[dict]:
    maps = ("value_counts", "null_value_counts", "lower_bounds", "upper_bounds")
    return sorted(({k: dict(v) if k in maps else v for k, v in r.items()} for r in rows),
                  key=lambda f: f["file_path"])


def test_spark_reads_table_and_metadata_tables_through_rest(server):
    base = server.uri + "/v1"
    cat = pyiceberg_rest(server.uri)
    cat.create_namespace("ns")
    t = cat.create_table(("ns", "t"), PY_SCHEMA)
    t.append(arrow(PY_ROWS))
    t.append(arrow(PY_ROWS_2))
    # Nested namespace: `floe.ns.inner.t2.snapshots` is first loaded as table `snapshots` in
    # namespace ns.inner.t2 (three levels).
    cat.create_namespace(("ns", "inner"))
    t2 = cat.create_table(("ns", "inner", "t2"), PY_SCHEMA)
    t2.append(arrow(PY_ROWS_2))
    t, t2 = cat.load_table(("ns", "t")), cat.load_table(("ns", "inner", "t2"))

    snaps = t.snapshots()
    assert len(snaps) == 2
    first, second = snaps[0].snapshot_id, snaps[1].snapshot_id
    assert snaps[1].parent_snapshot_id == first and snaps[0].parent_snapshot_id is None

    # What the Iceberg client asks first for `ns.t.files`: a table in a namespace that does not
    # exist is NoSuchTableException (the spec's loadTable 404), never NoSuchNamespaceException.
    for path in (f"namespaces/ns{SEP}t/tables/files", f"namespaces/ns{SEP}t/tables/snapshots",
                 f"namespaces/ns{SEP}inner{SEP}t2/tables/snapshots"):
        r = http("GET", f"{base}/{path}")
        assert r.status == 404, (path, r)
        err = r.json()["error"]
        assert err["code"] == 404 and err["type"] == "NoSuchTableException", (path, err)
    # A missing namespace itself is still NoSuchNamespaceException where the namespace is the
    # object of the request.
    r = http("GET", f"{base}/namespaces/ns{SEP}t")
    assert r.status == 404 and r.json()["error"]["type"] == "NoSuchNamespaceException", r

    statements = [
        "SELECT * FROM floe.ns.t",
        f"SELECT * FROM floe.ns.t VERSION AS OF {first}",
        "SELECT content, file_path, file_format, spec_id, record_count, file_size_in_bytes, "
        "value_counts, null_value_counts, lower_bounds, upper_bounds FROM floe.ns.t.files",
        "SELECT committed_at, snapshot_id, parent_id, operation, manifest_list "
        "FROM floe.ns.t.snapshots",
        "SELECT made_current_at, snapshot_id, parent_id, is_current_ancestor "
        "FROM floe.ns.t.history",
        "SELECT * FROM floe.ns.inner.t2",
        "SELECT snapshot_id, parent_id, operation FROM floe.ns.inner.t2.snapshots",
        "SELECT file_path, record_count FROM floe.ns.inner.t2.files",
        # Neither a table nor a metadata table of one: Spark says the table is not found.
        "SELECT * FROM floe.ns.missing",
        "SELECT * FROM floe.ns.missing.files",
    ]
    timing, res = run_sql(server.uri, statements)
    print(f"SparkSql timing: {timing}")
    for i, r in enumerate(res[:8]):
        assert "error" not in r, f"{statements[i]!r} failed in Spark: {r}"
    data, travel, files, snapshots, history, data2, snapshots2, files2, missing, missing_md = res

    assert [f["name"] for f in data["schema"]["fields"]] == [f.name for f in PY_SCHEMA.fields]
    assert by_id(data["rows"]) == by_id(PY_ROWS + PY_ROWS_2)
    assert by_id(travel["rows"]) == by_id(PY_ROWS)
    assert by_id(data2["rows"]) == by_id(PY_ROWS_2)

    py_files = _files(t.inspect.files())
    assert len(py_files) == 2 and sorted(f["record_count"] for f in py_files) == \
        [len(PY_ROWS_2), len(PY_ROWS)]
    assert _spark_files(files["rows"]) == py_files

    assert sorted(snapshots["rows"], key=lambda r: r["committed_at"]) == [
        {"committed_at": _ms(s.timestamp_ms), "snapshot_id": s.snapshot_id,
         "parent_id": s.parent_snapshot_id, "operation": s.summary.operation.value,
         "manifest_list": s.manifest_list} for s in snaps]
    assert [r["operation"] for r in snapshots["rows"]] == ["append", "append"]

    log = t.metadata.snapshot_log
    assert [e.snapshot_id for e in log] == [first, second]
    assert history["rows"] == [
        {"made_current_at": _ms(e.timestamp_ms), "snapshot_id": e.snapshot_id,
         "parent_id": t.metadata.snapshot_by_id(e.snapshot_id).parent_snapshot_id,
         "is_current_ancestor": True} for e in log]

    s2 = t2.current_snapshot()
    assert snapshots2["rows"] == [{"snapshot_id": s2.snapshot_id, "parent_id": None,
                                   "operation": "append"}]
    assert sorted((r["file_path"], r["record_count"]) for r in files2["rows"]) == \
        sorted((f["file_path"], f["record_count"]) for f in t2.inspect.files().to_pylist())

    for r, name in ((missing, "ns.missing"), (missing_md, "ns.missing.files")):
        assert "error" in r, f"SELECT from {name} did not fail: {r}"
        assert "TABLE_OR_VIEW_NOT_FOUND" in r["message"], r
