"""floe/parquet DataFileWriter checked by an independent reader (pyarrow).

floe_parquet_writer_fixture writes 1000 rows with every Iceberg primitive type, a struct, a
list, a map and a struct holding a list (nulls, NaN, ±0.0, ±inf, long and non-ASCII strings)
in row groups of 300 rows, the same rows as Arrow IPC, and prints its DataFile as JSON. This
test recomputes every metric from the data and the footer and compares.
"""
import datetime
import decimal
import json
import math
import os
import pathlib
import struct
import subprocess

import pyarrow as pa
import pyarrow.ipc as ipc
import pyarrow.parquet as pq
import pytest
from harness.paths import build_dir, fixture_program

ROOT = pathlib.Path(__file__).resolve().parents[2]
FIXTURE = build_dir() / "tests" / "fixtures" / "floe_parquet_writer_fixture"

ROWS = 1000
ROW_GROUP_ROWS = 300

# Parquet column path -> (field id, Iceberg type) for leaves that carry metrics.
LEAVES = {
    "id": (1, "long"), "b": (2, "boolean"), "i": (3, "int"), "l": (4, "long"),
    "f": (5, "float"), "d": (6, "double"), "dec9": (7, "decimal(9,2)"),
    "dec18": (8, "decimal(18,4)"), "dec38": (9, "decimal(38,10)"), "day": (10, "date"),
    "tod": (11, "time"), "ts": (12, "timestamp"), "tstz": (13, "timestamptz"),
    "s": (14, "string"), "bin": (15, "binary"), "fx": (16, "fixed[20]"), "u": (17, "uuid"),
    "st.a": (19, "int"), "st.b": (20, "string"), "st.c": (21, "double"),
    "st2.x": (28, "long"), "nothing": (31, "string"), "allnan": (32, "double"),
    "bigstr": (33, "string"), "zeros": (34, "double"),
}
# Leaves inside a list or a map: column_sizes only (REFERENCE.md "Column metrics and bounds").
REPEATED = {
    "lst.list.element": 23, "m.key_value.key": 25, "m.key_value.value": 26,
    "st2.tags.list.element": 30,
}
# Every Arrow field read back, by Parquet-style path, with the id it must carry.
ALL_IDS = dict({p: i for p, (i, _) in LEAVES.items()}, **REPEATED,
               st=18, lst=22, m=24, st2=27, **{"st2.tags": 29})


@pytest.fixture(scope="module")
def written(tmp_path_factory):
    fixture_program("floe_parquet_writer_fixture")  # fails the test when not built
    d = tmp_path_factory.mktemp("parquet")
    path, arrow_path = d / "data.parquet", d / "data.arrow"
    proc = subprocess.run([str(FIXTURE), str(path), str(arrow_path), str(ROWS),
                           str(ROW_GROUP_ROWS)], check=True, capture_output=True, text=True)
    data_file = json.loads(proc.stdout)
    with pa.memory_map(str(arrow_path)) as src:
        expected = ipc.open_file(src).read_all()
    return path, data_file, expected


def column_values(table, path):
    """Python values of a top-level or struct leaf; a null struct makes its leaves null."""
    parts = path.split(".")
    rows = table.column(parts[0]).to_pylist()
    for p in parts[1:]:
        rows = [None if r is None else r[p] for r in rows]
    return rows


def same(a, b):
    """Deep equality where NaN equals NaN and -0.0 differs from +0.0."""
    if isinstance(a, float) and isinstance(b, float):
        if math.isnan(a) or math.isnan(b):
            return math.isnan(a) and math.isnan(b)
        return a == b and math.copysign(1, a) == math.copysign(1, b)
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    return type(a) is type(b) and a == b


def test_values_read_back_equal_what_was_written(written):
    path, _, expected = written
    actual = pq.read_table(path)
    assert actual.num_rows == expected.num_rows == ROWS
    assert actual.column_names == expected.column_names
    for name in expected.column_names:
        a, e = actual.column(name).to_pylist(), expected.column(name).to_pylist()
        bad = [i for i, (x, y) in enumerate(zip(a, e)) if not same(x, y)]
        assert not bad, f"{name}: row {bad[0]}: {a[bad[0]]!r} != {e[bad[0]]!r}"


def test_footer_zstd_field_ids_and_iceberg_schema(written):
    path, _, _ = written
    f = pq.ParquetFile(path)
    md = f.metadata
    assert md.num_row_groups == math.ceil(ROWS / ROW_GROUP_ROWS)
    for r in range(md.num_row_groups):
        for c in range(md.num_columns):
            assert md.row_group(r).column(c).compression == "ZSTD"

    # Field ids on every field, including list elements and map keys/values.
    ids = {}

    def walk(field, prefix):
        p = f"{prefix}.{field.name}" if prefix else field.name
        assert field.metadata and b"PARQUET:field_id" in field.metadata, p
        ids[p] = int(field.metadata[b"PARQUET:field_id"])
        t = field.type
        if pa.types.is_struct(t):
            for k in range(t.num_fields):
                walk(t.field(k), p)
        elif pa.types.is_map(t):
            walk(t.key_field, p + ".key_value")
            walk(t.item_field, p + ".key_value")
        elif pa.types.is_list(t):
            walk(t.value_field, p + ".list")

    for field in f.schema_arrow:
        walk(field, "")
    assert ids == ALL_IDS
    column_paths = {f.schema.column(i).path for i in range(len(f.schema))}
    assert column_paths == set(LEAVES) | set(REPEATED)

    schema = json.loads(md.metadata[b"iceberg.schema"])
    assert schema["type"] == "struct"
    assert [x["id"] for x in schema["fields"]] == [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13,
                                                  14, 15, 16, 17, 18, 22, 24, 27, 31, 32, 33,
                                                  34]


def test_size_record_count_and_split_offsets(written):
    path, df, _ = written
    md = pq.ParquetFile(path).metadata
    assert df["file_size_in_bytes"] == os.path.getsize(path)
    assert df["record_count"] == ROWS
    assert df["file_format"] == "PARQUET"
    assert df["file_path"] == f"file://{path}"
    starts = []
    for r in range(md.num_row_groups):
        c0 = md.row_group(r).column(0)
        offsets = [c0.data_page_offset]
        if c0.has_dictionary_page and c0.dictionary_page_offset is not None:
            offsets.append(c0.dictionary_page_offset)
        starts.append(min(offsets))
    assert df["split_offsets"] == starts
    assert starts == sorted(starts) and starts[0] == 4


def test_column_sizes_and_counts(written):
    path, df, expected = written
    md = pq.ParquetFile(path).metadata
    schema = pq.ParquetFile(path).schema
    for c in range(md.num_columns):
        p = schema.column(c).path
        fid = LEAVES[p][0] if p in LEAVES else REPEATED[p]
        size = sum(md.row_group(r).column(c).total_compressed_size
                   for r in range(md.num_row_groups))
        assert df["column_sizes"][str(fid)] == size, p

    for p, (fid, typ) in LEAVES.items():
        vals = column_values(expected, p)
        key = str(fid)
        assert df["value_counts"][key] == ROWS, p
        assert df["null_value_counts"][key] == sum(v is None for v in vals), p
        if typ in ("float", "double"):
            nans = sum(v is not None and math.isnan(v) for v in vals)
            assert df["nan_value_counts"][key] == nans, p
        else:
            assert key not in df["nan_value_counts"], p
    assert df["null_value_counts"]["31"] == ROWS
    assert df["nan_value_counts"]["32"] == ROWS // 2
    assert df["nan_value_counts"]["21"] > 0  # NaN under null structs is not counted

    for fid in REPEATED.values():
        for metric in ("value_counts", "null_value_counts", "nan_value_counts",
                       "lower_bounds", "upper_bounds"):
            assert str(fid) not in df[metric], (metric, fid)


def truncate_upper_str(s, n=16):
    if len(s) <= n:
        return s
    for j in range(n - 1, -1, -1):
        c = ord(s[j]) + 1
        if 0xD800 <= c <= 0xDFFF:
            c = 0xE000
        if c <= 0x10FFFF:
            return s[:j] + chr(c)
    return None


def truncate_upper_bytes(b, n=16):
    if len(b) <= n:
        return b
    b = bytearray(b[:n])
    while b:
        if b[-1] != 0xFF:
            b[-1] += 1
            return bytes(b)
        b.pop()
    return None


def to_number(v, typ):
    """A value as the number its Iceberg bound encodes."""
    if typ == "date":
        return (v - datetime.date(1970, 1, 1)).days
    if typ == "time":
        return ((v.hour * 60 + v.minute) * 60 + v.second) * 1_000_000 + v.microsecond
    if typ in ("timestamp", "timestamptz"):
        epoch = datetime.datetime(1970, 1, 1, tzinfo=v.tzinfo)
        delta = v - epoch
        return (delta.days * 86400 + delta.seconds) * 1_000_000 + delta.microseconds
    if typ.startswith("decimal"):
        scale = int(typ.split(",")[1].rstrip(")"))
        # decimal's default context has 28 digits; decimal(38) needs more.
        return int(v.scaleb(scale, context=decimal.Context(prec=80)))
    return v


def decode(b, typ):
    if typ == "boolean":
        assert len(b) == 1
        return b[0] != 0
    if typ in ("int", "date"):
        return struct.unpack("<i", b)[0]
    if typ in ("long", "time", "timestamp", "timestamptz"):
        return struct.unpack("<q", b)[0]
    if typ == "float":
        return struct.unpack("<f", b)[0]
    if typ == "double":
        return struct.unpack("<d", b)[0]
    if typ.startswith("decimal"):
        n = int.from_bytes(b, "big", signed=True)
        minimal = max(1, (n.bit_length() + 8) // 8)  # two's complement incl. sign bit
        assert len(b) == minimal, f"decimal bound {b.hex()} is not minimal"
        return n
    if typ == "string":
        return b.decode("utf-8")
    return b  # binary, fixed, uuid


def float_key(x):
    return (x, math.copysign(1.0, x))  # -0.0 sorts before +0.0


def test_bounds_decode_to_true_min_max(written):
    _, df, expected = written
    for p, (fid, typ) in LEAVES.items():
        key = str(fid)
        vals = [v for v in column_values(expected, p)
                if v is not None and not (isinstance(v, float) and math.isnan(v))]
        if not vals:
            assert key not in df["lower_bounds"] and key not in df["upper_bounds"], p
            continue
        lower = decode(bytes.fromhex(df["lower_bounds"][key]), typ)
        upper_hex = df["upper_bounds"].get(key)
        if typ in ("float", "double"):
            lo, hi = min(vals, key=float_key), max(vals, key=float_key)
            upper = decode(bytes.fromhex(upper_hex), typ)
            assert float_key(lower) == float_key(lo), (p, lower, lo)
            assert float_key(upper) == float_key(hi), (p, upper, hi)
        elif typ == "string":
            lo = min(vals, key=lambda s: s.encode())
            hi = max(vals, key=lambda s: s.encode())
            assert lower == lo[:16], p
            if p == "bigstr":
                # The max is 5000 bytes: Arrow drops statistics above 4 KiB rather than
                # truncating them, so the writer omits the upper bound.
                assert len(hi.encode()) > 4096 and upper_hex is None
                continue
            exp = truncate_upper_str(hi)
            assert (None if upper_hex is None else decode(bytes.fromhex(upper_hex), typ)) == exp, p
        elif typ in ("binary", "uuid") or typ.startswith("fixed"):
            lo, hi = min(vals), max(vals)
            assert lower == lo[:16], p
            exp = truncate_upper_bytes(hi) if typ != "uuid" else hi
            assert (None if upper_hex is None else bytes.fromhex(upper_hex)) == exp, p
        else:
            nums = [to_number(v, typ) for v in vals]
            assert lower == min(nums), (p, lower, min(nums))
            assert decode(bytes.fromhex(upper_hex), typ) == max(nums), p

    # The interesting cases are really exercised by the data.
    assert df["lower_bounds"]["34"] == struct.pack("<d", -0.0).hex()
    assert df["upper_bounds"]["34"] == struct.pack("<d", 0.0).hex()
    assert df["upper_bounds"]["6"] == struct.pack("<d", math.inf).hex()
    assert "15" not in df["upper_bounds"]  # binary max is 20 x 0xFF: no upper bound possible
    assert bytes.fromhex(df["upper_bounds"]["14"]).decode() == "\U0001F600" * 15 + "\U0001F601"
    assert len(bytes.fromhex(df["upper_bounds"]["16"])) == 16
    assert df["lower_bounds"]["3"] == struct.pack("<i", -2**31).hex()
    assert df["lower_bounds"]["4"] == struct.pack("<q", -2**63).hex()
    assert decimal.Decimal(int.from_bytes(bytes.fromhex(df["upper_bounds"]["7"]), "big",
                                          signed=True)).scaleb(-2) == decimal.Decimal("9999999.99")
