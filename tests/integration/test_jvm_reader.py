"""The JVM reader (tools/jvm-reader, Apache Iceberg's Java libraries) reads back exactly what
pyiceberg wrote: every primitive type plus struct, list and map, nulls and edge values, through
the SQLite catalog and through a metadata file, with time travel, deletes and each Parquet codec.
"""
from __future__ import annotations

import datetime as dt
import math
import uuid
from decimal import Decimal

import pyarrow as pa
import pytest
from pyiceberg.catalog.sql import SqlCatalog
from pyiceberg.schema import Schema
from pyiceberg.types import (
    BinaryType,
    BooleanType,
    DateType,
    DecimalType,
    DoubleType,
    FixedType,
    FloatType,
    IntegerType,
    ListType,
    LongType,
    MapType,
    NestedField,
    StringType,
    StructType,
    TimestampType,
    TimestamptzType,
    TimeType,
    UUIDType,
)

from harness import jvm

CATALOG = "floe_test"
UTC = dt.timezone.utc


def make_catalog(tmp_path) -> SqlCatalog:
    (tmp_path / "wh").mkdir()
    cat = SqlCatalog(
        CATALOG,
        uri=f"sqlite:///{tmp_path / 'catalog.db'}",
        warehouse=f"file://{tmp_path / 'wh'}",
    )
    cat.create_namespace("ns")
    return cat


def read(tmp_path, table: str, snapshot_id: int | None = None) -> list[dict]:
    return jvm.read_table(tmp_path / "catalog.db", CATALOG, tmp_path / "wh", table, snapshot_id)


ALL_TYPES = Schema(
    NestedField(1, "id", LongType(), required=True),
    NestedField(2, "b", BooleanType()),
    NestedField(3, "i", IntegerType()),
    NestedField(4, "l", LongType()),
    NestedField(5, "f", FloatType()),
    NestedField(6, "d", DoubleType()),
    NestedField(7, "dec", DecimalType(9, 2)),
    NestedField(8, "dec38", DecimalType(38, 10)),
    NestedField(9, "dt", DateType()),
    NestedField(10, "tm", TimeType()),
    NestedField(11, "ts", TimestampType()),
    NestedField(12, "tstz", TimestamptzType()),
    NestedField(13, "s", StringType()),
    NestedField(14, "u", UUIDType()),
    NestedField(15, "fx", FixedType(4)),
    NestedField(16, "bin", BinaryType()),
    NestedField(
        17,
        "st",
        StructType(
            NestedField(18, "a", IntegerType(), required=True),
            NestedField(19, "b", StringType()),
            NestedField(20, "inner", StructType(NestedField(21, "x", DoubleType()))),
        ),
    ),
    NestedField(22, "lst", ListType(23, LongType(), element_required=False)),
    NestedField(24, "mp", MapType(25, StringType(), 26, IntegerType(), value_required=False)),
    NestedField(
        27,
        "headers",
        ListType(
            28,
            StructType(
                NestedField(29, "key", StringType(), required=True),
                NestedField(30, "value", BinaryType()),
            ),
            element_required=True,
        ),
    ),
    NestedField(
        31,
        "mp_int",
        MapType(32, IntegerType(), 33, ListType(34, StringType(), element_required=False)),
    ),
)

NULL_ROW = {f.name: None for f in ALL_TYPES.fields} | {"id": 2}

ROWS = [
    {
        "id": 1,
        "b": True,
        "i": 42,
        "l": 2**40,
        "f": 0.1,
        "d": 3.141592653589793,
        "dec": Decimal("-12.50"),
        "dec38": Decimal("1234567890123456789012345678.0123456789"),
        "dt": dt.date(2024, 1, 2),
        "tm": dt.time(3, 4, 5),
        "ts": dt.datetime(2024, 1, 2, 3, 4, 5, 123456),
        "tstz": dt.datetime(2024, 1, 2, 3, 4, 5, 123456, tzinfo=UTC),
        "s": "hello",
        "u": uuid.UUID("12345678-1234-5678-9abc-def012345678"),
        "fx": b"\x00\x01\xfe\xff",
        "bin": b"\x00\xff",
        "st": {"a": 1, "b": "x", "inner": {"x": 1.5}},
        "lst": [1, None, 3],
        "mp": [("a", 1), ("b", None)],
        "headers": [{"key": "h1", "value": b"\x01"}, {"key": "h2", "value": None}],
        "mp_int": [(1, ["x"]), (2, [])],
    },
    NULL_ROW,
    {
        "id": 3,
        "b": False,
        "i": -(2**31),
        "l": -(2**63),
        "f": math.nan,
        "d": -math.inf,
        "dec": Decimal("0.00"),
        "dec38": Decimal("-0.0000000001"),
        "dt": dt.date(1969, 12, 31),
        "tm": dt.time(23, 59, 59, 999999),
        "ts": dt.datetime(1969, 12, 31, 23, 59, 59, 999999),
        # +02:00 input: stored as UTC, read back as 23:00Z the day before.
        "tstz": dt.datetime(2024, 7, 1, 1, 0, 0, tzinfo=dt.timezone(dt.timedelta(hours=2))),
        "s": "",
        "u": uuid.UUID(int=0),
        "fx": b"\x00\x00\x00\x00",
        "bin": b"",
        "st": {"a": -1, "b": None, "inner": None},
        "lst": [],
        "mp": [],
        "headers": [],
        "mp_int": [(-1, [None, ""])],
    },
    {
        "id": 4,
        "b": None,
        "i": 2**31 - 1,
        "l": 2**63 - 1,
        "f": math.inf,
        "d": -0.0,
        "dec": Decimal("9999999.99"),
        "dec38": Decimal("9" * 28 + "." + "9" * 10),
        "dt": dt.date(9999, 12, 31),
        "tm": dt.time(0, 0),
        "ts": dt.datetime(9999, 12, 31, 23, 59, 59, 999999),
        "tstz": dt.datetime(1970, 1, 1, tzinfo=UTC),
        "s": "zé 日本 🎉 \"quoted\" \\ \n tab\t",
        "u": uuid.UUID("ffffffff-ffff-ffff-ffff-ffffffffffff"),
        "fx": b"abcd",
        "bin": bytes(range(256)),
        "st": {"a": 7, "b": "y", "inner": {"x": math.nan}},
        "lst": None,
        "mp": None,
        "headers": None,
        "mp_int": None,
    },
    NULL_ROW
    | {
        "id": 5,
        "f": 3.4028234663852886e38,  # largest float32
        "d": 5e-324,  # smallest subnormal double
        "dt": dt.date(1, 1, 1),
        "ts": dt.datetime(1, 1, 1),
        "tstz": dt.datetime(1, 1, 1, tzinfo=UTC),
        "tm": dt.time(12, 0, 0, 1),
    },
]


def by_id(rows):
    return sorted(rows, key=lambda r: r["id"])


def test_every_type_round_trips(tmp_path):
    cat = make_catalog(tmp_path)
    table = cat.create_table("ns.all_types", schema=ALL_TYPES)
    arrow_schema = table.schema().as_arrow()
    written = pa.Table.from_pylist(ROWS, schema=arrow_schema)
    table.append(written)
    # What pyiceberg itself reads back is the expected value (float32 widened, tstz in UTC).
    expected = by_id(table.scan().to_arrow().to_pylist())
    assert len(expected) == len(ROWS)

    got = by_id(read(tmp_path, "ns.all_types"))

    assert len(got) == len(expected)
    names = [f.name for f in table.schema().fields]
    for want, have in zip(expected, got):
        assert list(have) == names, "keys must be the schema's field names in order"
        for name in names:
            assert have[name] == jvm.encode(want[name]), f"row {want['id']} field {name}"

    # Pin the documented encoding independently of jvm.encode().
    r1, r2, r3, r4, r5 = got
    assert r1["b"] is True and r1["i"] == 42 and r1["l"] == 2**40
    assert r1["f"] == 0.10000000149011612  # float widened exactly to double
    assert r1["d"] == 3.141592653589793
    assert r1["dec"] == "-12.50"
    assert r1["dec38"] == "1234567890123456789012345678.0123456789"
    assert r1["dt"] == "2024-01-02"
    assert r1["tm"] == "03:04:05.000000"
    assert r1["ts"] == "2024-01-02T03:04:05.123456"
    assert r1["tstz"] == "2024-01-02T03:04:05.123456Z"
    assert r1["u"] == "12345678-1234-5678-9abc-def012345678"
    assert r1["fx"] == "0001feff"
    assert r1["bin"] == "00ff"
    assert r1["st"] == {"a": 1, "b": "x", "inner": {"x": 1.5}}
    assert r1["lst"] == [1, None, 3]
    assert r1["mp"] == [["a", 1], ["b", None]]
    assert r1["headers"] == [{"key": "h1", "value": "01"}, {"key": "h2", "value": None}]
    assert r1["mp_int"] == [[1, ["x"]], [2, []]]
    # pyiceberg 0.12 writes a null list<required struct> as [] (see the Parquet file itself), so
    # `headers` is whatever pyiceberg reads back; every other field of row 2 is null.
    assert r2 == {n: None for n in names} | {"id": 2, "headers": jvm.encode(expected[1]["headers"])}
    assert r3["f"] == "NaN" and r3["d"] == "-Infinity"
    assert r3["i"] == -(2**31) and r3["l"] == -(2**63)
    assert r3["dec"] == "0.00" and r3["dec38"] == "-0.0000000001"
    assert r3["dt"] == "1969-12-31"
    assert r3["tm"] == "23:59:59.999999"
    assert r3["ts"] == "1969-12-31T23:59:59.999999"
    assert r3["tstz"] == "2024-06-30T23:00:00.000000Z"
    assert r3["s"] == "" and r3["bin"] == "" and r3["u"] == "00000000-0000-0000-0000-000000000000"
    assert r3["st"] == {"a": -1, "b": None, "inner": None}
    assert r3["lst"] == [] and r3["mp"] == [] and r3["headers"] == []
    assert r3["mp_int"] == [[-1, [None, ""]]]
    assert r4["f"] == "Infinity"
    assert r4["d"] == 0.0 and math.copysign(1.0, r4["d"]) == -1.0
    assert r4["l"] == 2**63 - 1
    assert r4["dec"] == "9999999.99"
    assert r4["dt"] == "9999-12-31" and r4["ts"] == "9999-12-31T23:59:59.999999"
    assert r4["tstz"] == "1970-01-01T00:00:00.000000Z"
    assert r4["tm"] == "00:00:00.000000"
    assert r4["s"] == "zé 日本 🎉 \"quoted\" \\ \n tab\t"
    assert r4["bin"] == bytes(range(256)).hex()
    assert r4["st"]["inner"] == {"x": "NaN"}
    assert r5["f"] == 3.4028234663852886e38 and r5["d"] == 5e-324
    assert r5["dt"] == "0001-01-01"
    assert r5["ts"] == "0001-01-01T00:00:00.000000"
    assert r5["tstz"] == "0001-01-01T00:00:00.000000Z"
    assert r5["tm"] == "12:00:00.000001"


SMALL = Schema(
    NestedField(1, "id", LongType(), required=True),
    NestedField(2, "s", StringType()),
)


def small_rows(ids):
    return pa.Table.from_pylist([{"id": i, "s": f"v{i}"} for i in ids], schema=SMALL.as_arrow())


def test_snapshots_deletes_and_metadata_file(tmp_path):
    cat = make_catalog(tmp_path)
    table = cat.create_table("ns.small", schema=SMALL)
    table.append(small_rows([1, 2]))
    first = table.current_snapshot().snapshot_id
    table.append(small_rows([3]))
    table.delete("id = 1")
    table = cat.load_table("ns.small")
    assert len(table.snapshots()) >= 3

    assert by_id(read(tmp_path, "ns.small")) == [{"id": 2, "s": "v2"}, {"id": 3, "s": "v3"}]
    assert by_id(read(tmp_path, "ns.small", snapshot_id=first)) == [
        {"id": 1, "s": "v1"},
        {"id": 2, "s": "v2"},
    ]
    # The metadata file directly (a file:// URI here), no catalog involved.
    assert table.metadata_location.startswith("file://")
    assert by_id(jvm.read_metadata(table.metadata_location)) == [
        {"id": 2, "s": "v2"},
        {"id": 3, "s": "v3"},
    ]


def test_every_parquet_codec(tmp_path):
    """One table whose data files use different codecs: one JVM run reads them all."""
    cat = make_catalog(tmp_path)
    table = cat.create_table("ns.codecs", schema=SMALL)
    codecs = ["zstd", "snappy", "gzip", "uncompressed", "lz4"]
    for n, codec in enumerate(codecs):
        with table.transaction() as tx:
            tx.set_properties({"write.parquet.compression-codec": codec})
        table.append(small_rows([n]))
    assert by_id(read(tmp_path, "ns.codecs")) == [{"id": n, "s": f"v{n}"} for n in range(5)]


def test_empty_table_and_errors(tmp_path):
    cat = make_catalog(tmp_path)
    empty = cat.create_table("ns.empty", schema=SMALL)
    assert jvm.read_metadata(empty.metadata_location) == []

    with pytest.raises(jvm.JvmReaderError) as err:
        read(tmp_path, "ns.missing")
    assert err.value.returncode == 1
    assert "NoSuchTableException" in str(err.value) and "ns.missing" in str(err.value)
