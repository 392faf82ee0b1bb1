"""Floe's built-in Iceberg REST catalog (`floe catalog serve`) against independent clients:
pyiceberg's RestCatalog, Apache Iceberg's Java RESTCatalog (tools/jvm-reader RestExercise),
DuckDB's iceberg extension, and raw HTTP. Every endpoint is exercised; readers compare values
(not only counts) with what the other side wrote; errors map to the spec's exception types;
bearer tokens are enforced on every route.

The pyiceberg, DuckDB and raw-HTTP tests run twice (issue 18): on a local warehouse and on an
`s3://` warehouse in SeaweedFS, where pyiceberg writes and reads with nothing but the catalog's
URI (endpoint, region and vended credentials come from the catalog), the server writes every
metadata file and deletes a purged table's files on S3, and DuckDB reads through httpfs. The
Java tests stay on the local warehouse: tools/jvm-reader has no S3 FileIO.
"""
from __future__ import annotations

import datetime as dt
import pathlib
import sysconfig
import urllib.parse
from decimal import Decimal

import pyarrow as pa
import pytest
from pyiceberg.exceptions import (
    CommitFailedException,
    NamespaceAlreadyExistsError,
    NamespaceNotEmptyError,
    NoSuchNamespaceError,
    NoSuchTableError,
    TableAlreadyExistsError,
    UnauthorizedError,
)
from pyiceberg.schema import Schema
from pyiceberg.types import (
    BooleanType,
    DateType,
    DecimalType,
    DoubleType,
    IntegerType,
    ListType,
    LongType,
    NestedField,
    StringType,
    StructType,
    TimestamptzType,
)

from harness import jvm
from harness.rest import http, pyiceberg_rest, start_catalog
from harness.s3 import start_s3

UTC = dt.timezone.utc
SEP = "%1F"  # namespace level separator in paths

# Endpoints a client may only use when /v1/config lists them (spec strings, as Java checks).
SERVED_ENDPOINTS = {
    "GET /v1/{prefix}/namespaces",
    "POST /v1/{prefix}/namespaces",
    "GET /v1/{prefix}/namespaces/{namespace}",
    "HEAD /v1/{prefix}/namespaces/{namespace}",
    "DELETE /v1/{prefix}/namespaces/{namespace}",
    "POST /v1/{prefix}/namespaces/{namespace}/properties",
    "GET /v1/{prefix}/namespaces/{namespace}/tables",
    "POST /v1/{prefix}/namespaces/{namespace}/tables",
    "GET /v1/{prefix}/namespaces/{namespace}/tables/{table}",
    "HEAD /v1/{prefix}/namespaces/{namespace}/tables/{table}",
    "POST /v1/{prefix}/namespaces/{namespace}/tables/{table}",
    "DELETE /v1/{prefix}/namespaces/{namespace}/tables/{table}",
    "POST /v1/{prefix}/namespaces/{namespace}/register",
    "POST /v1/{prefix}/namespaces/{namespace}/tables/{table}/metrics",
    "POST /v1/{prefix}/tables/rename",
    "POST /v1/{prefix}/transactions/commit",
}

# ---- data -------------------------------------------------------------------------------------

# Field ids in the order a catalog assigns fresh ids (top-level fields first), so the created
# table's schema equals this one.
PY_SCHEMA = Schema(
    NestedField(1, "id", IntegerType(), required=True),
    NestedField(2, "l", LongType()),
    NestedField(3, "s", StringType()),
    NestedField(4, "d", DoubleType()),
    NestedField(5, "ts", TimestamptzType()),
    NestedField(6, "dec", DecimalType(10, 2)),
    NestedField(7, "tags", ListType(11, StringType(), element_required=False)),
    NestedField(8, "st", StructType(NestedField(12, "a", IntegerType()),
                                    NestedField(13, "b", StringType()))),
    NestedField(9, "dt", DateType()),
    NestedField(10, "flag", BooleanType()),
)


def _row(id, l, s, d, ts, dec, tags, st, date, flag):
    return {"id": id, "l": l, "s": s, "d": d, "ts": ts, "dec": dec, "tags": tags, "st": st,
            "dt": date, "flag": flag}


PY_ROWS = [
    _row(1, 2**40, "alpha", 1.5, dt.datetime(2024, 1, 2, 3, 4, 5, 123456, tzinfo=UTC),
         Decimal("12.34"), ["a", "b"], {"a": 1, "b": "x"}, dt.date(2024, 1, 2), True),
    _row(2, -1, "", -0.25, dt.datetime(1969, 12, 31, 23, 59, 59, 999999, tzinfo=UTC),
         Decimal("-0.01"), [], {"a": -2, "b": None}, dt.date(1969, 12, 31), False),
    _row(3, None, None, None, None, None, None, None, None, None),
    _row(4, 2**63 - 1, "ünïcødé ✓", 1e300, dt.datetime(2038, 1, 19, 3, 14, 7, tzinfo=UTC),
         Decimal("99999999.99"), ["x", None, "z"], {"a": 2**31 - 1, "b": "y"},
         dt.date(9999, 12, 31), True),
]
PY_ROWS_2 = [
    _row(5, -(2**63), "beta", -1e-300, dt.datetime(2000, 2, 29, 12, tzinfo=UTC),
         Decimal("-99999999.99"), ["only"], {"a": -(2**31), "b": ""}, dt.date(2000, 2, 29), None),
]


def arrow(rows) -> pa.Table:
    return pa.Table.from_pylist(rows, schema=PY_SCHEMA.as_arrow())


def by_id(rows):
    return sorted(rows, key=lambda r: r["id"])


def java_rows(batch: str) -> list[dict]:
    """The rows RestExercise writes (its batchA/batchB/batchC), as Python values."""
    def r(id, l, s, d, ts, dec, tags, st):
        return {"id": id, "l": l, "s": s, "d": d, "ts": ts,
                "dec": None if dec is None else Decimal(dec), "tags": tags, "st": st}
    a = [
        r(1, 2**40, "alpha", 1.5, dt.datetime(2024, 1, 2, 3, 4, 5, 123456, tzinfo=UTC), "12.34",
          ["a", "b"], {"a": 1, "b": "x"}),
        r(2, -1, "", -0.25, dt.datetime(1969, 12, 31, 23, 59, 59, 999999, tzinfo=UTC), "-0.01",
          [], {"a": -2, "b": None}),
        r(3, None, None, None, None, None, None, None),
        r(4, 2**63 - 1, "ünïcødé ✓", 1e300, dt.datetime(2038, 1, 19, 3, 14, 7, tzinfo=UTC),
          "99999999.99", ["x", None, "z"], {"a": 2**31 - 1, "b": "y"}),
    ]
    b = [
        r(5, -(2**63), "beta", -1e-300, dt.datetime(2000, 2, 29, 12, tzinfo=UTC), "-99999999.99",
          ["only"], {"a": -(2**31), "b": ""}),
        r(6, 0, "gamma", 0.0, dt.datetime(1970, 1, 1, tzinfo=UTC), "0.00", None,
          {"a": 0, "b": "z"}),
    ]
    c = [
        r(7, 7, "delta", 7.75, dt.datetime(2025, 6, 30, 23, 59, 59, 500000, tzinfo=UTC), "7.70",
          ["m"], {"a": 7, "b": "seven"}),
    ]
    return {"A": a, "B": b, "C": c, "AB": a + b, "ABC": a + b + c}[batch]


def enc(rows) -> list[dict]:
    return by_id([jvm.encode(r) for r in rows])


def exists(server, location: str) -> bool:
    """Whether a file a table references is in the server's warehouse (local or S3)."""
    if server.s3 is not None:
        import pyarrow.fs as pafs
        assert location.startswith("s3://"), location
        info = server.s3.fs().get_file_info(location[len("s3://"):])
        return info.type != pafs.FileType.NotFound
    path = urllib.parse.urlparse(location).path if location.startswith("file:") else location
    return pathlib.Path(path).exists()


def in_warehouse(server, location: str) -> bool:
    if server.s3 is not None:
        return location.startswith(server.s3.uri("lake/"))
    path = urllib.parse.urlparse(location).path if location.startswith("file:") else location
    return pathlib.Path(path).resolve().is_relative_to(server.warehouse.resolve())


def data_files(table) -> list[str]:
    return sorted(t.file.file_path for t in table.scan().plan_files())


# ---- fixtures ---------------------------------------------------------------------------------

def s3_catalog_extra(s3) -> dict:
    """An `s3://` warehouse, with the store's test credentials both for the server and vended
    to clients that ask (`rest.client.s3.*`)."""
    return {
        "warehouse": s3.uri("lake"),
        "s3": {"endpoint": f"http://{s3.endpoint}", "region": s3.region,
               "access.key.id": s3.access_key, "secret.access.key": s3.secret_key},
        "rest": {"client.s3.access.key.id": s3.access_key,
                 "client.s3.secret.access.key": s3.secret_key},
    }


def _serve(tmp_path, storage: str):
    store = start_s3(tmp_path / "s3") if storage == "s3" else None
    try:
        srv = start_catalog(tmp_path / "rest",
                            extra=s3_catalog_extra(store) if store else None)
    except BaseException:
        if store:
            store.stop()
        raise
    srv.s3 = store
    try:
        yield srv
    finally:
        rc = srv.stop()
        if store:
            store.stop()
        assert rc == 0, f"floe catalog serve exited {rc} on SIGTERM:\n{srv.log()}"


@pytest.fixture(params=["local", "s3"])
def server(request, tmp_path):
    yield from _serve(tmp_path, request.param)


@pytest.fixture
def local_server(tmp_path):
    """For the Java client, which has no S3 FileIO here."""
    yield from _serve(tmp_path, "local")


@pytest.fixture
def cat(server):
    return pyiceberg_rest(server.uri)


# ---- pyiceberg --------------------------------------------------------------------------------

def test_pyiceberg_namespaces(cat):
    assert ("pyns",) not in cat.list_namespaces()
    cat.create_namespace("pyns", {"owner": "py", "purpose": "test"})
    cat.create_namespace(("pyns", "b"), {"level": "2"})
    cat.create_namespace(("pyns", "b", "c"))
    with pytest.raises(NamespaceAlreadyExistsError):
        cat.create_namespace("pyns")

    assert ("pyns",) in cat.list_namespaces()
    assert ("pyns", "b") not in cat.list_namespaces()
    assert cat.list_namespaces("pyns") == [("pyns", "b")]
    assert cat.list_namespaces(("pyns", "b")) == [("pyns", "b", "c")]
    assert cat.list_namespaces(("pyns", "b", "c")) == []
    with pytest.raises(NoSuchNamespaceError):
        cat.list_namespaces("nope")

    props = cat.load_namespace_properties("pyns")
    assert props["owner"] == "py" and props["purpose"] == "test"
    assert cat.load_namespace_properties(("pyns", "b"))["level"] == "2"
    with pytest.raises(NoSuchNamespaceError):
        cat.load_namespace_properties("nope")
    assert cat.namespace_exists(("pyns", "b", "c"))
    assert not cat.namespace_exists(("pyns", "x"))

    summary = cat.update_namespace_properties("pyns", removals={"purpose", "absent"},
                                              updates={"owner": "py2", "k": "v"})
    assert sorted(summary.removed) == ["purpose"]
    assert sorted(summary.updated) == ["k", "owner"]
    assert sorted(summary.missing) == ["absent"]
    props = cat.load_namespace_properties("pyns")
    assert props["owner"] == "py2" and props["k"] == "v" and "purpose" not in props
    with pytest.raises(NoSuchNamespaceError):
        cat.update_namespace_properties("nope", updates={"a": "b"})

    # (Whether a namespace with child namespaces counts as "not empty" is left open by the
    # spec; NamespaceNotEmptyError for a namespace with tables is checked in the tables test.)
    cat.drop_namespace(("pyns", "b", "c"))
    cat.drop_namespace(("pyns", "b"))
    with pytest.raises(NoSuchNamespaceError):
        cat.drop_namespace(("pyns", "b"))
    assert cat.list_namespaces("pyns") == []
    cat.drop_namespace("pyns")
    assert not cat.namespace_exists("pyns")


def test_pyiceberg_tables(cat, server):
    ns = ("pyt", "inner")  # two levels: every table path carries %1F
    cat.create_namespace(("pyt",))
    cat.create_namespace(ns)
    ident = ns + ("t1",)

    # No client-side retries: a conflicting append must surface the server's 409.
    t = cat.create_table(ident, PY_SCHEMA, properties={"created-by": "pyiceberg",
                                                       "commit.retry.num-retries": "0"})
    assert t.schema().as_struct() == PY_SCHEMA.as_struct()
    assert t.properties["created-by"] == "pyiceberg"
    assert t.current_snapshot() is None
    assert in_warehouse(server, t.location()), t.location()
    with pytest.raises(TableAlreadyExistsError):
        cat.create_table(ident, PY_SCHEMA)
    with pytest.raises(NoSuchNamespaceError):
        cat.create_table(("nope", "t"), PY_SCHEMA)

    t.append(arrow(PY_ROWS))
    t.append(arrow(PY_ROWS_2))
    loaded = cat.load_table(ident)
    assert len(loaded.snapshots()) == 2
    assert by_id(loaded.scan().to_arrow().to_pylist()) == by_id(PY_ROWS + PY_ROWS_2)

    # Stage-create: invisible until the transaction commits, data appended in the same commit.
    staged = ns + ("staged",)
    with cat.create_table_transaction(staged, PY_SCHEMA, properties={"staged": "yes"}) as txn:
        assert not cat.table_exists(staged)
        txn.append(arrow(PY_ROWS))
        assert not cat.table_exists(staged)
    assert cat.table_exists(staged)
    st = cat.load_table(staged)
    assert st.properties["staged"] == "yes"
    assert by_id(st.scan().to_arrow().to_pylist()) == by_id(PY_ROWS)

    assert sorted(cat.list_tables(ns)) == [ns + ("staged",), ns + ("t1",)]
    assert cat.list_tables(("pyt",)) == []
    assert cat.table_exists(ident)
    assert not cat.table_exists(ns + ("missing",))
    with pytest.raises(NoSuchTableError):
        cat.load_table(ns + ("missing",))

    # Stale commit: both handles start from the same snapshot; the second append must get 409
    # (assert-ref-snapshot-id fails) and change nothing.
    h1 = cat.load_table(ident)
    h2 = cat.load_table(ident)
    h1.append(arrow(PY_ROWS_2))
    with pytest.raises(CommitFailedException):
        h2.append(arrow(PY_ROWS))
    assert by_id(cat.load_table(ident).scan().to_arrow().to_pylist()) == \
        by_id(PY_ROWS + PY_ROWS_2 + PY_ROWS_2)

    # Rename (also across namespaces), then register the renamed table's metadata file.
    renamed = ("pyt", "renamed")
    r = cat.rename_table(ident, renamed)
    assert tuple(r.name())[-2:] == renamed
    assert not cat.table_exists(ident) and cat.table_exists(renamed)
    expected = by_id(PY_ROWS + PY_ROWS_2 + PY_ROWS_2)
    assert by_id(cat.load_table(renamed).scan().to_arrow().to_pylist()) == expected
    with pytest.raises(NoSuchTableError):
        cat.rename_table(ident, ns + ("again",))
    with pytest.raises(TableAlreadyExistsError):
        cat.rename_table(renamed, staged)

    # Register: one location belongs to one table, so the live table's metadata under a
    # second name is refused (409); dropped without purge, it registers under a new name.
    metadata = cat.load_table(renamed).metadata_location
    with pytest.raises(TableAlreadyExistsError):
        cat.register_table(("pyt", "registered"), metadata)
    cat.drop_table(renamed)
    reg = cat.register_table(("pyt", "registered"), metadata)
    assert reg.metadata_location == metadata
    assert by_id(cat.load_table(("pyt", "registered")).scan().to_arrow().to_pylist()) == expected
    with pytest.raises(TableAlreadyExistsError):
        cat.register_table(("pyt", "registered"), metadata)
    with pytest.raises(TableAlreadyExistsError):
        cat.register_table(renamed, metadata)

    with pytest.raises(NamespaceNotEmptyError):
        cat.drop_namespace(ns)

    # drop without purge keeps every file; purge deletes the table's data and metadata.
    cat.drop_table(("pyt", "registered"))
    assert not cat.table_exists(("pyt", "registered"))
    assert exists(server, metadata), "drop_table without purge deleted the metadata file"
    with pytest.raises(NoSuchTableError):
        cat.drop_table(("pyt", "registered"))

    cat.register_table(renamed, metadata)
    purged = cat.load_table(renamed)
    files = data_files(purged)
    purged_metadata = purged.metadata_location
    assert files and all(exists(server, f) for f in files)
    cat.purge_table(renamed)
    assert not cat.table_exists(renamed)
    assert [f for f in files if exists(server, f)] == [], "purge_table left data files"
    assert not exists(server, purged_metadata), "purge_table left the metadata file"

    cat.drop_table(staged)
    cat.drop_namespace(ns)
    cat.drop_namespace(("pyt",))
    assert ("pyt",) not in cat.list_namespaces()


# ---- Java RESTCatalog -------------------------------------------------------------------------

EXERCISE_STEPS = [
    "initialize", "list_namespaces_before", "create_namespace", "list_namespaces",
    "load_namespace_metadata", "namespace_exists", "set_remove_properties", "create_table",
    "append", "load_table_scan", "stage_create", "list_tables", "table_exists", "stale_commit",
    "rename_table", "register_table", "multi_table_commit_conflict", "multi_table_commit",
    "drop_namespace_not_empty", "drop_table", "purge_table", "drop_namespace",
]


def test_java_rest_exercise(local_server):
    server = local_server
    steps = jvm.run_rest(server.uri, "exercise", "jns")
    assert [s["step"] for s in steps] == EXERCISE_STEPS
    by_step = {s["step"]: s for s in steps}

    # Rows Java printed after its own writes equal the values it wrote (checked here again,
    # independently of RestExercise's own comparison).
    assert by_id(by_step["load_table_scan"]["scanned"]["jns.t1"]) == enc(java_rows("AB"))
    assert by_id(by_step["stage_create"]["scanned"]["jns.t2_staged"]) == enc(java_rows("A"))
    assert by_id(by_step["rename_table"]["scanned"]["jns.t1_renamed"]) == enc(java_rows("AB"))
    assert by_id(by_step["register_table"]["scanned"]["jns.t1_registered"]) == \
        enc(java_rows("AB"))
    mt = by_step["multi_table_commit"]["scanned"]
    assert by_id(mt["jns.t1_renamed"]) == enc(java_rows("ABC"))
    assert by_id(mt["jns.t1_registered"]) == enc(java_rows("AB"))

    assert by_step["stale_commit"]["conflict"] == "CommitFailedException"
    assert by_step["multi_table_commit_conflict"]["conflict"] == "CommitFailedException"
    assert by_step["drop_table"]["metadata_exists_after"] is True
    purge = by_step["purge_table"]
    assert purge["data_files"], purge
    assert purge["data_files_remaining"] == [], f"purge left data files: {purge}"
    assert purge["metadata_exists_after"] is False, f"purge left the metadata file: {purge}"

    # Nothing is left behind in the catalog.
    cat = pyiceberg_rest(server.uri)
    assert ("jns",) not in cat.list_namespaces()


def test_java_and_pyiceberg_read_each_other(local_server):
    server = local_server
    cat = pyiceberg_rest(server.uri)

    # Java writes; Java's scan and pyiceberg's scan both return the written values.
    steps = jvm.run_rest(server.uri, "write", "xns.java_written")
    java_seen = steps[-1]["scanned"]["xns.java_written"]
    assert by_id(java_seen) == enc(java_rows("AB"))
    t = cat.load_table(("xns", "java_written"))
    py_seen = t.scan().to_arrow().to_pylist()
    assert enc(py_seen) == enc(java_rows("AB"))
    assert by_id(py_seen) == by_id(java_rows("AB"))

    # pyiceberg writes (two snapshots); Java reads the same values through REST.
    cat.create_table(("xns", "py_written"), PY_SCHEMA)
    pt = cat.load_table(("xns", "py_written"))
    pt.append(arrow(PY_ROWS))
    pt.append(arrow(PY_ROWS_2))
    steps = jvm.run_rest(server.uri, "scan", "xns.py_written")
    assert by_id(steps[-1]["scanned"]["xns.py_written"]) == enc(PY_ROWS + PY_ROWS_2)


# ---- DuckDB -----------------------------------------------------------------------------------

def duckdb_connect():
    import duckdb

    ext_dir = pathlib.Path(sysconfig.get_paths()["purelib"]) / "duckdb_ext" / "extensions"
    con = duckdb.connect(config={"autoinstall_known_extensions": False,
                                 "autoload_known_extensions": False,
                                 "extension_directory": str(ext_dir)})
    for ext in ("iceberg", "avro", "httpfs"):
        con.execute(f"LOAD {ext}")
    con.execute("SET TimeZone = 'UTC'")
    return con


def test_duckdb_attach_reads_pyiceberg_table(server):
    cat = pyiceberg_rest(server.uri)
    cat.create_namespace("duck")
    t = cat.create_table(("duck", "rows"), PY_SCHEMA)
    t.append(arrow(PY_ROWS))
    t.append(arrow(PY_ROWS_2))

    con = duckdb_connect()
    if server.s3 is None:
        con.execute(f"ATTACH '' AS floe_cat (TYPE iceberg, ENDPOINT '{server.uri}', "
                    "AUTHORIZATION_TYPE 'none')")
    else:  # httpfs with the store's endpoint and test credentials
        s3 = server.s3
        con.execute(f"CREATE SECRET s3 (TYPE S3, KEY_ID '{s3.access_key}', SECRET "
                    f"'{s3.secret_key}', ENDPOINT '{s3.endpoint}', URL_STYLE 'path', "
                    f"USE_SSL false, REGION '{s3.region}')")
        con.execute(f"ATTACH '' AS floe_cat (TYPE iceberg, ENDPOINT '{server.uri}', "
                    "AUTHORIZATION_TYPE 'none', ACCESS_DELEGATION_MODE 'none')")
    tables = con.execute("SELECT schema_name, table_name FROM duckdb_tables() "
                         "WHERE database_name = 'floe_cat'").fetchall()
    assert ("duck", "rows") in tables, tables
    got = con.execute("SELECT * FROM floe_cat.duck.rows ORDER BY id").fetch_arrow_table()
    assert got.to_pylist() == by_id(PY_ROWS + PY_ROWS_2)


# ---- raw HTTP ---------------------------------------------------------------------------------

def _mk_table(cat, ns: str, name: str):
    if not cat.namespace_exists(ns):
        cat.create_namespace(ns)
    t = cat.create_table((ns, name), PY_SCHEMA)
    return t


def test_http_config_listing_etag_head_metrics_errors(server):
    base = server.uri + "/v1"
    r = http("GET", base + "/config")
    assert r.status == 200, r
    cfg = r.json()
    assert isinstance(cfg.get("defaults"), dict) and isinstance(cfg.get("overrides"), dict), cfg
    assert isinstance(cfg.get("endpoints"), list), cfg
    assert SERVED_ENDPOINTS <= set(cfg["endpoints"]), \
        f"missing from endpoints: {sorted(SERVED_ENDPOINTS - set(cfg['endpoints']))}"
    prefix = cfg["overrides"].get("prefix")
    assert prefix in (None, ""), f"server announced prefix {prefix!r}; these tests use none"

    cat = pyiceberg_rest(server.uri)
    t = _mk_table(cat, "h", "t")
    tpath = f"{base}/namespaces/h/tables/t"

    # Listings: empty pageToken accepted, next-page-token null, arrays always present.
    r = http("GET", base + "/namespaces?pageToken=")
    assert r.status == 200, r
    body = r.json()
    assert ["h"] in body["namespaces"] and body.get("next-page-token") is None, body
    r = http("GET", base + "/namespaces?parent=h")
    assert r.status == 200 and r.json()["namespaces"] == [], r
    r = http("GET", base + "/namespaces/h/tables?pageToken=")
    assert r.status == 200, r
    assert r.json()["identifiers"] == [{"namespace": ["h"], "name": "t"}], r
    assert r.json().get("next-page-token") is None, r

    # ETag / If-None-Match.
    r = http("GET", tpath)
    assert r.status == 200, r
    etag = r.headers.get("ETag")
    assert etag, f"no ETag on load table: {dict(r.headers)}"
    assert r.json()["metadata-location"] == t.metadata_location
    r = http("GET", tpath, headers={"If-None-Match": etag})
    assert r.status == 304, r
    assert r.body == b""
    t.append(arrow(PY_ROWS))
    r = http("GET", tpath, headers={"If-None-Match": etag})
    assert r.status == 200, f"stale ETag answered {r.status} after a commit"
    assert r.headers.get("ETag") and r.headers.get("ETag") != etag

    # HEAD.
    assert http("HEAD", tpath).status in (200, 204)
    assert http("HEAD", f"{base}/namespaces/h/tables/missing").status == 404
    assert http("HEAD", f"{base}/namespaces/missing/tables/t").status == 404
    assert http("HEAD", f"{base}/namespaces/h").status in (200, 204)
    assert http("HEAD", f"{base}/namespaces/missing").status == 404

    # Metrics.
    snap = cat.load_table(("h", "t")).current_snapshot().snapshot_id
    report = {"report-type": "scan-report", "table-name": "floe.h.t", "snapshot-id": snap,
              "filter": True, "schema-id": 0, "projected-field-ids": [1],
              "projected-field-names": ["id"], "metrics": {}}
    r = http("POST", tpath + "/metrics", body=report)
    assert r.status == 204, r

    # Error bodies and codes.
    r = http("GET", f"{base}/namespaces/h/tables/missing")
    assert r.status == 404, r
    err = r.json()["error"]
    assert err["code"] == 404 and err["type"] == "NoSuchTableException" and err["message"], err
    r = http("GET", f"{base}/namespaces/missing")
    assert r.status == 404 and r.json()["error"]["type"] == "NoSuchNamespaceException", r

    uuid = http("GET", tpath).json()["metadata"]["table-uuid"]
    # A failing requirement is 409; unknown requirement / update types are 400.
    r = http("POST", tpath, body={"requirements": [{"type": "assert-table-uuid",
                                                    "uuid": "00000000-0000-0000-0000-000000000000"}],
                                  "updates": [{"action": "set-properties",
                                               "updates": {"x": "y"}}]})
    assert r.status == 409, r
    assert r.json()["error"]["type"] == "CommitFailedException", r
    r = http("POST", tpath, body={"requirements": [{"type": "assert-bogus"}], "updates": []})
    assert r.status == 400, r
    r = http("POST", tpath, body={"requirements": [], "updates": [{"action": "bogus-update"}]})
    assert r.status == 400, r
    assert "x" not in cat.load_table(("h", "t")).properties

    # A commit that applies: returns the new metadata location and metadata.
    r = http("POST", tpath, body={"requirements": [{"type": "assert-table-uuid", "uuid": uuid}],
                                  "updates": [{"action": "set-properties",
                                               "updates": {"raw": "1"}}]})
    assert r.status == 200, r
    assert r.json()["metadata"]["properties"]["raw"] == "1"
    assert cat.load_table(("h", "t")).properties["raw"] == "1"


def test_http_multi_table_transaction_is_atomic(server):
    cat = pyiceberg_rest(server.uri)
    a = _mk_table(cat, "tx", "a")
    b = _mk_table(cat, "tx", "b")
    base = server.uri + "/v1"

    def change(tbl, uuid, props):
        return {"identifier": {"namespace": ["tx"], "name": tbl},
                "requirements": [{"type": "assert-table-uuid", "uuid": uuid}],
                "updates": [{"action": "set-properties", "updates": props}]}

    ua = a.metadata.table_uuid
    ub = b.metadata.table_uuid
    bad = "00000000-0000-0000-0000-000000000000"
    r = http("POST", base + "/transactions/commit",
             body={"table-changes": [change("a", str(ua), {"tx": "1"}),
                                     change("b", bad, {"tx": "1"})]})
    assert r.status == 409, r
    assert "tx" not in cat.load_table(("tx", "a")).properties, "half of a failed transaction applied"
    assert "tx" not in cat.load_table(("tx", "b")).properties

    r = http("POST", base + "/transactions/commit",
             body={"table-changes": [change("a", str(ua), {"tx": "2"}),
                                     change("b", str(ub), {"tx": "2"})]})
    assert r.status == 204, r
    assert cat.load_table(("tx", "a")).properties["tx"] == "2"
    assert cat.load_table(("tx", "b")).properties["tx"] == "2"


# ---- auth -------------------------------------------------------------------------------------

TOKEN = "s3cret-token"
OTHER = "second-token"


def _all_routes(base: str) -> list[tuple[str, str, dict | None]]:
    t = f"{base}/namespaces/a{SEP}b/tables/t"
    return [
        ("GET", f"{base}/config", None),
        ("GET", f"{base}/namespaces", None),
        ("POST", f"{base}/namespaces", {"namespace": ["z"], "properties": {}}),
        ("GET", f"{base}/namespaces/a{SEP}b", None),
        ("HEAD", f"{base}/namespaces/a{SEP}b", None),
        ("DELETE", f"{base}/namespaces/a{SEP}b", None),
        ("POST", f"{base}/namespaces/a{SEP}b/properties", {"removals": [], "updates": {"k": "v"}}),
        ("GET", f"{base}/namespaces/a{SEP}b/tables", None),
        ("POST", f"{base}/namespaces/a{SEP}b/tables",
         {"name": "u", "schema": {"type": "struct", "schema-id": 0, "fields": [
             {"id": 1, "name": "x", "required": False, "type": "int"}]}}),
        ("GET", t, None),
        ("HEAD", t, None),
        ("POST", t, {"requirements": [], "updates": [{"action": "set-properties",
                                                      "updates": {"k": "v"}}]}),
        ("DELETE", t, None),
        ("DELETE", t + "?purgeRequested=true", None),
        ("POST", t + "/metrics", {"report-type": "scan-report"}),
        ("POST", f"{base}/tables/rename", {"source": {"namespace": ["a", "b"], "name": "t"},
                                           "destination": {"namespace": ["a", "b"], "name": "t2"}}),
        ("POST", f"{base}/namespaces/a{SEP}b/register",
         {"name": "r", "metadata-location": "/nonexistent.metadata.json"}),
        ("POST", f"{base}/transactions/commit", {"table-changes": []}),
    ]


def test_bearer_tokens(tmp_path):
    srv = start_catalog(tmp_path / "rest", tokens=[TOKEN, OTHER])
    try:
        # The right token: everything works (both configured tokens are accepted).
        cat = pyiceberg_rest(srv.uri, token=TOKEN)
        cat.create_namespace("a")
        cat.create_namespace(("a", "b"))
        t = cat.create_table(("a", "b", "t"), PY_SCHEMA)
        t.append(arrow(PY_ROWS))
        other = pyiceberg_rest(srv.uri, token=OTHER)
        assert by_id(other.load_table(("a", "b", "t")).scan().to_arrow().to_pylist()) == \
            by_id(PY_ROWS)
        steps = jvm.run_rest(srv.uri, "scan", "a.b.t", token=TOKEN)
        assert by_id(steps[-1]["scanned"]["a.b.t"]) == enc(PY_ROWS)

        # No token or a wrong one: 401 on every route, and nothing changes.
        base = srv.uri + "/v1"
        for label, hdr in [("none", None), ("wrong", "wrong-token"), ("prefix", TOKEN[:-1]),
                           ("suffix", TOKEN + "x")]:
            for method, url, body in _all_routes(base):
                r = http(method, url, body=body, token=hdr)
                assert r.status == 401, f"{method} {url} with {label} token: {r}"
        r = http("GET", base + "/config", headers={"Authorization": f"Basic {TOKEN}"})
        assert r.status == 401, f"non-Bearer scheme accepted: {r}"
        with pytest.raises(UnauthorizedError):
            pyiceberg_rest(srv.uri)
        with pytest.raises(UnauthorizedError):
            pyiceberg_rest(srv.uri, token="wrong-token")
        with pytest.raises(jvm.JvmReaderError):
            jvm.run_rest(srv.uri, "scan", "a.b.t", token="wrong-token")

        assert cat.list_tables(("a", "b")) == [("a", "b", "t")]
        assert "k" not in cat.load_namespace_properties(("a", "b"))
        assert "k" not in cat.load_table(("a", "b", "t")).properties
        assert not cat.namespace_exists("z")
    finally:
        rc = srv.stop()
    assert rc == 0, f"floe catalog serve exited {rc} on SIGTERM:\n{srv.log()}"
