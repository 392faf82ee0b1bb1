"""End to end for the Delta log library (src/floe/delta): a table whose data files Floe's
Parquet writer produced and whose log the library wrote (column mapping `name` mode,
reader 3 / writer 7, timestamp_ntz, stats from the Iceberg metrics, txn per app, a
checkpoint at version 10) must be read by delta-rs (the `deltalake` package): rows, txn
version, protocol, stats. And the library must read back a checkpoint delta-rs writes.

The C++ side is the test program floe_delta_fixture.
"""
import decimal
import json
import pathlib
import shutil
import subprocess

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import deltalake

from harness.paths import build_dir, fixture_program

FIXTURE = build_dir() / "tests" / "fixtures" / "floe_delta_fixture"
APP_ID = "floe:6a1f3c2e-5b4d-4e8f-9a0b-1c2d3e4f5a6b:orders:0"
APPENDS = 11  # versions 1..11 after the create at 0: checkpoint at 10, then JSON 11

ICEBERG_SCHEMA = {
    "type": "struct",
    "schema-id": 0,
    "fields": [
        {"id": 1, "name": "id", "required": True, "type": "long"},
        {"id": 2, "name": "name", "required": False, "type": "string"},
        {"id": 3, "name": "price", "required": False, "type": "decimal(10,2)"},
        {"id": 4, "name": "local_ts", "required": False, "type": "timestamp"},
        {"id": 5, "name": "day", "required": False, "type": "date"},
        {"id": 6, "name": "ratio", "required": False, "type": "float"},
        {"id": 7, "name": "ok", "required": False, "type": "boolean"},
        {"id": 8, "name": "tags", "required": False,
         "type": {"type": "list", "element-id": 9, "element": "string", "element-required": False}},
        {"id": 10, "name": "attrs", "required": False,
         "type": {"type": "map", "key-id": 11, "key": "string", "value-id": 12, "value": "long",
                  "value-required": False}},
        {"id": 13, "name": "_kafka", "required": True, "type": {"type": "struct", "fields": [
            {"id": 14, "name": "partition", "required": True, "type": "int"},
            {"id": 15, "name": "offset", "required": True, "type": "long"},
            {"id": 16, "name": "timestamp", "required": False, "type": "timestamptz"},
            {"id": 17, "name": "key", "required": False, "type": "binary"},
            {"id": 18, "name": "headers", "required": False, "type": {
                "type": "list", "element-id": 19, "element-required": True, "element": {
                    "type": "struct", "fields": [
                        {"id": 20, "name": "key", "required": True, "type": "string"},
                        {"id": 21, "name": "value", "required": False, "type": "binary"}]}}},
        ]}},
    ],
}


def fid(n):
    return {"PARQUET:field_id": str(n)}


def arrow_schema():
    header = pa.struct([pa.field("key", pa.string(), nullable=False, metadata=fid(20)),
                        pa.field("value", pa.binary(), metadata=fid(21))])
    kafka = pa.struct([
        pa.field("partition", pa.int32(), nullable=False, metadata=fid(14)),
        pa.field("offset", pa.int64(), nullable=False, metadata=fid(15)),
        pa.field("timestamp", pa.timestamp("us", tz="UTC"), metadata=fid(16)),
        pa.field("key", pa.binary(), metadata=fid(17)),
        pa.field("headers", pa.list_(pa.field("element", header, nullable=False, metadata=fid(19))),
                 metadata=fid(18)),
    ])
    return pa.schema([
        pa.field("id", pa.int64(), nullable=False, metadata=fid(1)),
        pa.field("name", pa.string(), metadata=fid(2)),
        pa.field("price", pa.decimal128(10, 2), metadata=fid(3)),
        pa.field("local_ts", pa.timestamp("us"), metadata=fid(4)),
        pa.field("day", pa.date32(), metadata=fid(5)),
        pa.field("ratio", pa.float32(), metadata=fid(6)),
        pa.field("ok", pa.bool_(), metadata=fid(7)),
        pa.field("tags", pa.list_(pa.field("element", pa.string(), metadata=fid(9))), metadata=fid(8)),
        pa.field("attrs", pa.map_(pa.field("key", pa.string(), nullable=False, metadata=fid(11)),
                                  pa.field("value", pa.int64(), metadata=fid(12))), metadata=fid(10)),
        pa.field("_kafka", kafka, nullable=False, metadata=fid(13)),
    ])


TS = 1_704_164_645_123_456  # 2024-01-02T03:04:05.123456
ROWS = [
    {"id": i, "name": name, "price": price, "local_ts": TS + i, "day": 19_724 + i,
     "ratio": ratio, "ok": i % 2 == 0, "tags": tags, "attrs": attrs,
     "_kafka": {"partition": 0, "offset": 100 + i, "timestamp": TS + i, "key": b"k",
                "headers": [{"key": "h", "value": None}]}}
    for i, name, price, ratio, tags, attrs in [
        (1, "apple", decimal.Decimal("1.50"), 0.5, ["x"], [("a", 1)]),
        (2, "pear", decimal.Decimal("-20.25"), None, [], []),
        (3, None, None, 2.5, None, None),
        (4, "z\u00e9", decimal.Decimal("99999999.99"), 1.25, ["y", None], [("b", None)]),
        (5, "banana", decimal.Decimal("0.01"), -3.0, ["z"], [("c", 3)]),
    ]
]


@pytest.fixture(scope="module")
def table(tmp_path_factory):
    fixture_program("floe_delta_fixture")  # fails the test when not built
    tmp = tmp_path_factory.mktemp("delta")
    schema = arrow_schema()
    data = pa.Table.from_pylist(ROWS, schema=schema)
    source = tmp / "input.parquet"
    pq.write_table(data, source)
    schema_file = tmp / "schema.json"
    schema_file.write_text(json.dumps(ICEBERG_SCHEMA))
    root = tmp / "table"
    proc = subprocess.run([str(FIXTURE), "write", str(root), str(source), str(schema_file),
                           str(APPENDS), APP_ID], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    snapshot = json.loads(proc.stdout.strip().splitlines()[-1])
    return root, data, snapshot


def test_log_files(table):
    root, _, snapshot = table
    log = root / "_delta_log"
    names = sorted(p.name for p in log.iterdir())
    assert names == [f"{v:020d}.json" for v in range(10)] + [
        "00000000000000000010.checkpoint.parquet", "00000000000000000010.json",
        "00000000000000000011.json", "_last_checkpoint"]
    assert json.loads((log / "_last_checkpoint").read_text())["version"] == 10
    assert snapshot["version"] == 11 and snapshot["txns"] == {APP_ID: 1100}
    first = [json.loads(line) for line in (log / f"{0:020d}.json").read_text().splitlines()]
    protocol = next(a["protocol"] for a in first if "protocol" in a)
    assert protocol == {"minReaderVersion": 3, "minWriterVersion": 7,
                        "readerFeatures": ["columnMapping", "timestampNtz"],
                        "writerFeatures": ["columnMapping", "timestampNtz", "invariants"]}
    # The checkpoint as any Parquet reader sees it.
    cp = pq.read_table(log / "00000000000000000010.checkpoint.parquet")
    assert set(cp.column_names) == {"txn", "add", "remove", "metaData", "protocol"}
    assert cp.num_rows == 1 + 1 + 1 + 10
    adds = [r for r in cp.column("add").to_pylist() if r]
    assert len(adds) == 10 and all(json.loads(a["stats"])["numRecords"] == 5 for a in adds)


def scan(dt, predicate=None):
    # delta-rs 1.6.6 reads column-mapped tables through its DataFusion scan only: the
    # pyarrow path (to_pyarrow_table/dataset) refuses the `columnMapping` reader feature.
    return pa.table(dt.scan(predicate=predicate))


def test_delta_rs_reads_rows_and_txn(table):
    root, data, _ = table
    dt = deltalake.DeltaTable(str(root))
    assert dt.version() == 11
    assert dt.transaction_version(APP_ID) == 1100
    assert dt.transaction_version("floe:other:orders:0") is None
    got = scan(dt)
    assert got.num_rows == 5 * APPENDS
    assert got.column_names == [f["name"] for f in ICEBERG_SCHEMA["fields"]]
    key = lambda r: (r["id"], repr(r))  # noqa: E731
    assert sorted(got.to_pylist(), key=key) == sorted(data.to_pylist() * APPENDS, key=key)
    sql = deltalake.QueryBuilder().register("t", dt).execute(
        "select count(*) as c, max(local_ts) as m from t where price > 1")
    assert pa.table(sql).to_pylist() == [
        {"c": 2 * APPENDS, "m": data.column("local_ts")[3].as_py()}]


def test_delta_rs_sees_protocol_schema_and_stats(table):
    root, _, _ = table
    dt = deltalake.DeltaTable(str(root))
    proto = dt.protocol()
    assert (proto.min_reader_version, proto.min_writer_version) == (3, 7)
    assert sorted(proto.reader_features) == ["columnMapping", "timestampNtz"]
    config = dt.metadata().configuration
    assert config["delta.columnMapping.mode"] == "name"
    assert config["delta.columnMapping.maxColumnId"] == "21"
    assert dt.metadata().id == "6a1f3c2e-5b4d-4e8f-9a0b-1c2d3e4f5a6b"
    fields = {f.name: f for f in dt.schema().fields}
    assert str(fields["local_ts"].type.type) == "timestamp_ntz"
    assert fields["local_ts"].metadata["delta.columnMapping.id"] == 4

    actions = pa.table(dt.get_add_actions(flatten=True)).to_pylist()
    assert len(actions) == APPENDS
    a = actions[0]
    assert a["num_records"] == 5
    assert a["min.id"] == 1 and a["max.id"] == 5
    assert a["null_count.name"] == 1
    assert a["min.name"] == "apple" and a["max.name"] == "z\u00e9"
    assert a["min.price"] == decimal.Decimal("-20.25")
    assert a["max.price"] == decimal.Decimal("99999999.99")
    assert a["min.ratio"] == -3.0 and a["max.ratio"] == 2.5
    assert a["min._kafka.offset"] == 101 and a["max._kafka.offset"] == 105
    assert "min.tags" not in a and "min._kafka.key" not in a
    assert a["min.local_ts"] == a["max.local_ts"].replace(microsecond=123457)
    assert a["max._kafka.timestamp"].isoformat() == "2024-01-02T03:04:05.123461+00:00"
    assert a["min.day"].isoformat() == "2024-01-03"
    # Filters through the stats.
    assert scan(dt, "id > 5").num_rows == 0
    assert scan(dt, "id = 3").num_rows == APPENDS


def test_delta_rs_reads_through_floes_checkpoint(table, tmp_path):
    root, data, _ = table
    copy = tmp_path / "copy"
    shutil.copytree(root, copy)
    for v in range(11):  # versions 0..10 now exist only in the checkpoint
        (copy / "_delta_log" / f"{v:020d}.json").unlink()
    dt = deltalake.DeltaTable(str(copy))
    assert dt.version() == 11
    assert dt.transaction_version(APP_ID) == 1100
    assert scan(dt).num_rows == 5 * APPENDS
    assert dt.metadata().configuration["delta.columnMapping.mode"] == "name"
    stats = pa.table(dt.get_add_actions(flatten=True)).to_pylist()
    assert len(stats) == APPENDS and all(a["max.id"] == 5 for a in stats)


def test_floe_reads_a_checkpoint_delta_rs_wrote(table, tmp_path):
    root, _, snapshot = table
    copy = tmp_path / "copy"
    shutil.copytree(root, copy)
    dt = deltalake.DeltaTable(str(copy))
    dt.create_checkpoint()  # delta-rs's own checkpoint of version 11
    assert (copy / "_delta_log" / "00000000000000000011.checkpoint.parquet").exists()
    for v in range(12):  # only the checkpoint can rebuild the state now
        (copy / "_delta_log" / f"{v:020d}.json").unlink()
    proc = subprocess.run([str(FIXTURE), "read", str(copy)], capture_output=True, text=True,
                          timeout=60)
    assert proc.returncode == 0, proc.stderr
    theirs = json.loads(proc.stdout)
    assert theirs["version"] == 11 and theirs["checkpoint_version"] == 11
    assert theirs["txns"] == {APP_ID: 1100}
    assert theirs["files"].keys() == snapshot["files"].keys()
    assert theirs["configuration"] == snapshot["configuration"]
    assert theirs["schema_string"] == snapshot["schema_string"]
