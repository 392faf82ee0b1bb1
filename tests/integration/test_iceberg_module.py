"""End to end for the generic Iceberg library (src/floe/iceberg): a table created with
NewTableMetadata + UpdateTable and appended to through FastAppend, the way Floe's committer
does it, must be readable by pyiceberg (and by Apache Iceberg's Java reader and DuckDB when
available); its manifests and manifest lists must carry the spec's field ids and header keys
(checked with fastavro); and 150 appends with expiry must keep the metadata bounded.

The C++ side is the test program floe_iceberg_table_fixture.
"""
import json
import os
import pathlib
import subprocess

import fastavro
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from pyiceberg.table import StaticTable
from harness.paths import build_dir, fixture_program

FIXTURE = build_dir() / "tests" / "fixtures" / "floe_iceberg_table_fixture"

ICEBERG_SCHEMA = {
    "type": "struct",
    "schema-id": 0,
    "fields": [
        {"id": 1, "name": "id", "required": True, "type": "long"},
        {"id": 2, "name": "name", "required": False, "type": "string"},
        {"id": 3, "name": "tags", "required": False,
         "type": {"type": "list", "element-id": 4, "element": "string", "element-required": False}},
        {"id": 5, "name": "price", "required": False, "type": "double"},
        {"id": 6, "name": "ts", "required": False, "type": "timestamptz"},
    ],
}

ROWS = {
    "id": [1, 2, 3, 4, 5],
    "name": ["a", "b", None, "d", "e\u00e9"],
    "tags": [["x"], [], None, ["y", None], ["z", "w"]],
    "price": [1.5, -2.0, None, 0.0, 1e10],
    "ts": [1_700_000_000_000_000 + i for i in range(5)],
}


def fid(n):
    return {"PARQUET:field_id": str(n)}


def write_inputs(tmp_path):
    warehouse = tmp_path / "wh"
    (warehouse / "data").mkdir(parents=True)
    schema = pa.schema([
        pa.field("id", pa.int64(), nullable=False, metadata=fid(1)),
        pa.field("name", pa.string(), metadata=fid(2)),
        pa.field("tags", pa.list_(pa.field("element", pa.string(), metadata=fid(4))), metadata=fid(3)),
        pa.field("price", pa.float64(), metadata=fid(5)),
        pa.field("ts", pa.timestamp("us", tz="UTC"), metadata=fid(6)),
    ])
    table = pa.table({**ROWS, "ts": pa.array(ROWS["ts"], pa.timestamp("us", tz="UTC"))}, schema=schema)
    parquet = warehouse / "data" / "sample.parquet"
    pq.write_table(table, parquet)
    schema_file = tmp_path / "schema.json"
    schema_file.write_text(json.dumps(ICEBERG_SCHEMA))
    return warehouse, parquet, schema_file, table


def run_fixture(warehouse, parquet, schema_file, appends, *extra):
    fixture_program("floe_iceberg_table_fixture")  # fails the test when not built
    proc = subprocess.run(
        [str(FIXTURE), str(warehouse), str(parquet), str(schema_file), "5", str(appends), *extra],
        capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr
    location = proc.stdout.strip().splitlines()[-1]
    assert location.startswith("file://") and location.endswith(".metadata.json")
    return location


def local(uri):
    assert uri.startswith("file://")
    return uri[len("file://"):]


@pytest.fixture(scope="module")
def three_appends(tmp_path_factory):
    tmp_path = tmp_path_factory.mktemp("iceberg3")
    warehouse, parquet, schema_file, table = write_inputs(tmp_path)
    location = run_fixture(warehouse, parquet, schema_file, 3)
    return location, parquet, table


def test_pyiceberg_reads_three_appends(three_appends):
    location, _, table = three_appends
    assert pathlib.Path(local(location)).name.startswith("00003-")
    static = StaticTable.from_metadata(location)
    result = static.scan().to_arrow()
    assert result.num_rows == 15
    expected = sorted(table.to_pylist() * 3, key=lambda r: (r["id"], repr(r)))
    got = sorted(result.to_pylist(), key=lambda r: (r["id"], repr(r)))
    assert got == expected
    # Metadata as pyiceberg sees it.
    meta = static.metadata
    assert meta.format_version == 2
    assert len(meta.snapshots) == 3
    assert meta.last_sequence_number == 3
    snap = static.current_snapshot()
    assert snap.sequence_number == 3
    summary = snap.summary
    assert summary["total-records"] == "15"
    assert summary["total-data-files"] == "3"
    assert summary["added-records"] == "5"
    assert summary["floe.kafka.offsets"] == '{"topic":{"0":15}}'
    assert meta.properties["floe.kafka.offsets"] == '{"topic":{"0":15}}'
    assert [s.snapshot_id for s in static.history()] == [s.snapshot_id for s in meta.snapshots]


def test_metadata_json_shape(three_appends):
    location, _, _ = three_appends
    meta = json.loads(pathlib.Path(local(location)).read_text())
    for key in ["format-version", "table-uuid", "location", "last-sequence-number", "last-updated-ms",
                "last-column-id", "schemas", "current-schema-id", "partition-specs", "default-spec-id",
                "last-partition-id", "sort-orders", "default-sort-order-id"]:
        assert key in meta, key
    assert meta["partition-specs"] == [{"spec-id": 0, "fields": []}]
    assert meta["last-partition-id"] == 999
    assert meta["sort-orders"] == [{"order-id": 0, "fields": []}]
    assert meta["refs"]["main"] == {"snapshot-id": meta["current-snapshot-id"], "type": "branch"}
    assert len(meta["metadata-log"]) == 3
    assert [e["metadata-file"].rsplit("/", 1)[1][:5] for e in meta["metadata-log"]] == ["00000", "00001", "00002"]
    times = [e["timestamp-ms"] for e in meta["snapshot-log"]]
    assert times == sorted(times)
    assert all(s["sequence-number"] <= meta["last-sequence-number"] for s in meta["snapshots"])


def field_ids(avro_schema):
    return {f["name"]: f.get("field-id") for f in avro_schema["fields"]}


def test_manifests_with_fastavro(three_appends):
    location, parquet, _ = three_appends
    meta = json.loads(pathlib.Path(local(location)).read_text())
    current = next(s for s in meta["snapshots"] if s["snapshot-id"] == meta["current-snapshot-id"])
    list_path = local(current["manifest-list"])
    assert pathlib.Path(list_path).name.startswith(f"snap-{current['snapshot-id']}-1-")
    with open(list_path, "rb") as f:
        reader = fastavro.reader(f)
        header = reader.metadata
        list_schema = reader.writer_schema
        manifests = list(reader)
    assert header["snapshot-id"] == str(current["snapshot-id"])
    assert header["parent-snapshot-id"] == str(current["parent-snapshot-id"])
    assert header["sequence-number"] == "3"
    assert header["format-version"] == "2"
    assert field_ids(list_schema) == {
        "manifest_path": 500, "manifest_length": 501, "partition_spec_id": 502, "content": 517,
        "sequence_number": 515, "min_sequence_number": 516, "added_snapshot_id": 503,
        "added_files_count": 504, "existing_files_count": 505, "deleted_files_count": 506,
        "added_rows_count": 512, "existing_rows_count": 513, "deleted_rows_count": 514,
        "partitions": 507, "key_metadata": 519}
    assert len(manifests) == 3
    assert sorted(m["sequence_number"] for m in manifests) == [1, 2, 3]
    parquet_size = os.path.getsize(parquet)
    table_schema = meta["schemas"][0]
    for m in manifests:
        path = local(m["manifest_path"])
        assert pathlib.Path(path).name.endswith("-m0.avro")
        assert m["manifest_length"] == os.path.getsize(path)  # exact
        assert m["content"] == 0 and m["partition_spec_id"] == 0
        assert m["min_sequence_number"] == m["sequence_number"]
        assert m["added_files_count"] == 1 and m["added_rows_count"] == 5
        assert m["existing_files_count"] == 0 and m["deleted_files_count"] == 0
        assert m["partitions"] == []
        with open(path, "rb") as f:
            reader = fastavro.reader(f)
            mh = reader.metadata
            entry_schema = reader.writer_schema
            entries = list(reader)
        # The header holds the TABLE schema, not the manifest entry schema.
        assert json.loads(mh["schema"]) == table_schema
        assert mh["schema-id"] == "0"
        assert json.loads(mh["partition-spec"]) == []
        assert mh["partition-spec-id"] == "0"
        assert mh["format-version"] == "2"
        assert mh["content"] == "data"
        assert field_ids(entry_schema) == {"status": 0, "snapshot_id": 1, "sequence_number": 3,
                                           "file_sequence_number": 4, "data_file": 2}
        data_file = next(f for f in entry_schema["fields"] if f["name"] == "data_file")["type"]
        assert data_file["name"] == "r2"
        ids = field_ids(data_file)
        for name, fid_ in {"content": 134, "file_path": 100, "file_format": 101, "partition": 102,
                           "record_count": 103, "file_size_in_bytes": 104, "column_sizes": 108,
                           "value_counts": 109, "null_value_counts": 110, "nan_value_counts": 137,
                           "lower_bounds": 125, "upper_bounds": 128, "split_offsets": 132}.items():
            assert ids[name] == fid_, name
        by_name = {f["name"]: f for f in data_file["fields"]}
        assert by_name["partition"]["type"]["name"] == "r102"
        cs = by_name["column_sizes"]["type"][1]
        assert cs["logicalType"] == "map" and cs["items"]["name"] == "k117_v118"
        assert [x["field-id"] for x in cs["items"]["fields"]] == [117, 118]
        assert by_name["split_offsets"]["type"][1]["element-id"] == 133
        assert len(entries) == 1
        e = entries[0]
        assert e["status"] == 1
        assert e["snapshot_id"] == m["added_snapshot_id"]
        assert e["sequence_number"] is None and e["file_sequence_number"] is None  # inherited
        df = e["data_file"]
        assert df["content"] == 0
        assert df["file_path"] == "file://" + str(parquet)
        assert df["file_format"] == "PARQUET"
        assert df["partition"] == {}
        assert df["record_count"] == 5
        assert df["file_size_in_bytes"] == parquet_size


def test_java_reader_reads_three_appends(three_appends):
    from harness import jvm
    location, _, table = three_appends
    rows = jvm.read_metadata(local(location))  # set up by scripts/setup.sh: never skipped
    assert len(rows) == 15
    assert sorted(r["id"] for r in rows) == sorted(ROWS["id"] * 3)
    assert sorted(r["price"] for r in rows if r["price"] is not None) == sorted(
        [p for p in ROWS["price"] if p is not None] * 3)


def test_duckdb_reads_three_appends(three_appends):
    import duckdb
    ext_dir = pathlib.Path(duckdb.__file__).parent.parent / "duckdb_ext" / "extensions"
    ext = next(ext_dir.glob(f"v{duckdb.__version__}/*/iceberg.duckdb_extension"), None)
    assert ext is not None, f"no offline DuckDB iceberg extension under {ext_dir} (scripts/setup.sh)"
    location, _, _ = three_appends
    con = duckdb.connect(config={"autoinstall_known_extensions": False,
                                 "autoload_known_extensions": False,
                                 "allow_unsigned_extensions": True})
    for name in ["avro", "iceberg"]:
        con.execute(f"LOAD '{ext.parent / (name + '.duckdb_extension')}'")
    count, ids = con.execute(
        f"SELECT count(*), sum(id) FROM iceberg_scan('{local(location)}')").fetchone()
    assert count == 15
    assert ids == sum(ROWS["id"]) * 3


def test_continues_a_pyiceberg_table_and_merges_its_manifests(tmp_path):
    """Floe appends on top of pyiceberg's commits: it must read pyiceberg's (deflate) manifest
    lists to carry them forward, and its manifests to merge them (max 2 manifests here)."""
    import datetime

    from pyiceberg.catalog.sql import SqlCatalog
    from pyiceberg.schema import Schema
    from pyiceberg.types import DoubleType, ListType, LongType, NestedField, StringType, TimestamptzType

    warehouse = tmp_path / "wh"
    (warehouse / "data").mkdir(parents=True)
    catalog = SqlCatalog("t", uri=f"sqlite:///{tmp_path}/c.db", warehouse=f"file://{warehouse}")
    catalog.create_namespace("ns")
    table = catalog.create_table("ns.t", schema=Schema(
        NestedField(1, "id", LongType(), required=True),
        NestedField(2, "name", StringType(), required=False),
        NestedField(3, "tags", ListType(4, StringType(), element_required=False), required=False),
        NestedField(5, "price", DoubleType(), required=False),
        NestedField(6, "ts", TimestamptzType(), required=False)))
    epoch = datetime.datetime(1970, 1, 1, tzinfo=datetime.timezone.utc)
    rows = dict(ROWS, ts=[epoch + datetime.timedelta(microseconds=t) for t in ROWS["ts"]])
    # The table's own Arrow schema carries its (pyiceberg-assigned) field ids.
    data = pa.Table.from_pydict(rows, schema=table.schema().as_arrow())
    table.append(data)
    table.append(data)
    table = catalog.load_table("ns.t")
    first_list = table.current_snapshot().manifest_list
    with open(local(first_list), "rb") as f:
        assert fastavro.reader(f).codec == "deflate"  # pyiceberg's default: Floe must inflate
    parquet = warehouse / "data" / "floe.parquet"
    pq.write_table(data, parquet)

    location = run_fixture(warehouse, parquet, "-", 3, "--existing", table.metadata_location,
                           "--max-manifests", "2")
    static = StaticTable.from_metadata(location)
    result = static.scan().to_arrow()
    assert result.num_rows == 25
    assert sorted(result.column("id").to_pylist()) == sorted(ROWS["id"] * 5)
    snap = static.current_snapshot()
    assert snap.summary["total-records"] == "25"
    assert snap.summary["total-data-files"] == "5"
    assert snap.sequence_number == 5
    with open(local(snap.manifest_list), "rb") as f:
        manifests = list(fastavro.reader(f))
    assert len(manifests) <= 2
    entries = []
    for m in manifests:
        with open(local(m["manifest_path"]), "rb") as f:
            entries += [(m, e) for e in fastavro.reader(f)]
    existing = [e for _, e in entries if e["status"] == 0]
    assert existing, "merge should have rewritten earlier entries as EXISTING"
    # Merged entries keep the sequence numbers of the commits that added them: pyiceberg's
    # two commits (1, 2) were merged first.
    seqs = {e["sequence_number"] for e in existing}
    assert {1, 2} <= seqs <= {1, 2, 3, 4}
    assert all(e["file_sequence_number"] == e["sequence_number"] for e in existing)
    try:
        from harness import jvm
        rows_java = jvm.read_metadata(local(location))
    except ImportError:
        return
    except Exception as e:  # noqa: BLE001 - only a missing JVM setup is tolerated
        if "setup.sh" in str(e) or "java not found" in str(e):
            return
        raise
    assert len(rows_java) == 25


def test_150_appends_stay_bounded(tmp_path):
    warehouse, parquet, schema_file, _ = write_inputs(tmp_path)
    location = run_fixture(warehouse, parquet, schema_file, 150, "--expire", "--max-age-ms", "0")
    path = pathlib.Path(local(location))
    assert path.stat().st_size < 1024 * 1024
    meta = json.loads(path.read_text())
    assert meta["last-sequence-number"] == 150
    # Expired down to the newest 100 (+ the protected newest snapshot with offsets, which is
    # the current one here).
    assert len(meta["snapshots"]) <= 101
    assert len(meta["metadata-log"]) <= 100
    current = next(s for s in meta["snapshots"] if s["snapshot-id"] == meta["current-snapshot-id"])
    with open(local(current["manifest-list"]), "rb") as f:
        manifests = list(fastavro.reader(f))
    assert len(manifests) <= 101
    assert sum(m["added_files_count"] + m["existing_files_count"] for m in manifests) == 150
    assert current["summary"]["total-data-files"] == "150"
    assert current["summary"]["total-records"] == "750"
    static = StaticTable.from_metadata(location)
    assert static.scan().to_arrow().num_rows == 750
