"""Floe's Avro object container encoder/decoder (src/floe/iceberg/avro_file.h) against fastavro,
in both directions: fastavro reads what Floe writes with equal values, and Floe reads what
fastavro writes (codecs null, deflate, zstandard; several blocks; named types; recursion).

The C++ side is the test program floe_iceberg_avro_fixture; values cross over as JSON in one
normalized form (bytes/fixed as "hex:..", enums as symbols, NaN/inf as strings).
"""
import datetime
import json
import math
import pathlib
import subprocess

import fastavro
import pytest

from harness.wire import zigzag_varint
from harness.paths import build_dir, fixture_program

FIXTURE = build_dir() / "tests" / "fixtures" / "floe_iceberg_avro_fixture"

EPOCH = datetime.datetime(1970, 1, 1, tzinfo=datetime.timezone.utc)


def normalize(value):
    """fastavro's Python values in the fixture's JSON form."""
    if isinstance(value, (bytes, bytearray)):
        return "hex:" + bytes(value).hex()
    if isinstance(value, bool) or value is None or isinstance(value, str):
        return value
    if isinstance(value, int):
        return value
    if isinstance(value, float):
        if math.isnan(value):
            return "NaN"
        if math.isinf(value):
            return "Infinity" if value > 0 else "-Infinity"
        return value
    if isinstance(value, datetime.datetime):  # timestamp-micros logical type
        return (value - EPOCH) // datetime.timedelta(microseconds=1)
    if isinstance(value, dict):
        return {k: normalize(v) for k, v in value.items()}
    if isinstance(value, list):
        return [normalize(v) for v in value]
    raise TypeError(f"unexpected value {value!r}")


def same(a, b):
    """Equality that tells -0.0 from 0.0."""
    if isinstance(a, float) and isinstance(b, float):
        return a == b and math.copysign(1, a) == math.copysign(1, b)
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    return type(a) is type(b) and a == b


def floe_read(path):
    proc = subprocess.run([str(FIXTURE), "read", str(path)], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


@pytest.fixture(scope="module", autouse=True)
def _fixture_built():
    fixture_program("floe_iceberg_avro_fixture")  # fails the test when not built


@pytest.mark.parametrize("name", ["sample.avro", "multi_block.avro", "empty.avro"])
def test_fastavro_reads_floe_files(tmp_path, name):
    subprocess.run([str(FIXTURE), "write", str(tmp_path)], check=True)
    path = tmp_path / name
    expected = json.loads((tmp_path / f"{name}.expected.json").read_text())
    with open(path, "rb") as f:
        reader = fastavro.reader(f)
        assert reader.codec == "null"
        assert reader.metadata["writer"] == "floe"
        assert reader.metadata["utf8"] == "h\u00e9llo"
        schema = reader.writer_schema
        records = [normalize(r) for r in reader]
    assert len(records) == len(expected)
    for got, want in zip(records, expected):
        assert same(got, want), (got, want)
    # Iceberg ids survive in the schema fastavro sees.
    fields = {f["name"]: f for f in schema["fields"]}
    assert fields["id"]["field-id"] == 1
    assert fields["nums"]["type"]["element-id"] == 12
    if name == "multi_block.avro":
        with open(path, "rb") as f:
            blocks = list(fastavro.block_reader(f))
        assert len(blocks) > 10


SCHEMA = {
    "type": "record",
    "name": "event",
    "namespace": "com.example",
    "fields": [
        {"name": "id", "type": "long", "field-id": 1},
        {"name": "ok", "type": "boolean"},
        {"name": "n", "type": "int"},
        {"name": "f", "type": "float"},
        {"name": "d", "type": "double"},
        {"name": "s", "type": "string"},
        {"name": "b", "type": "bytes"},
        {"name": "ts", "type": {"type": "long", "logicalType": "timestamp-micros"}},
        {"name": "kind", "type": {"type": "enum", "name": "Kind", "symbols": ["A", "B", "C"]}},
        {"name": "hash", "type": {"type": "fixed", "name": "Hash", "size": 8}},
        {"name": "hash2", "type": "com.example.Hash"},
        {"name": "opt", "type": ["null", "string"], "default": None},
        {"name": "multi", "type": ["null", "long", "string", "Kind"], "default": None},
        {"name": "tags", "type": {"type": "array", "items": "string"}},
        {"name": "props", "type": {"type": "map", "values": {"type": "array", "items": "int"}}},
        {"name": "nested", "type": {"type": "record", "name": "Node", "fields": [
            {"name": "v", "type": "int"},
            {"name": "next", "type": ["null", "Node"], "default": None}]}},
    ],
}


def make_record(i):
    chain = None
    for depth in range(i % 4):
        chain = {"v": depth, "next": chain}
    return {
        "id": i * 1_000_003 - 2**40,
        "ok": i % 2 == 0,
        "n": -i,
        "f": i / 8,
        "d": [0.1, -0.0, 1e308, float("nan"), float("-inf")][i % 5],
        "s": f"event-{i}-\u00fc\u4e2d",
        "b": bytes(range(i % 7)),
        "ts": EPOCH + datetime.timedelta(microseconds=1_700_000_000_000_000 + i),
        "kind": "ABC"[i % 3],
        "hash": i.to_bytes(8, "big"),
        "hash2": b"\xff" * 8,
        "opt": None if i % 3 else f"o{i}",
        "multi": [None, i, f"m{i}", "B"][i % 4],
        "tags": [f"t{j}" for j in range(i % 3)],
        "props": {f"k{j}": list(range(j)) for j in range(i % 4)},
        "nested": {"v": i, "next": chain},
    }


@pytest.mark.parametrize(
    "codec,sync_interval,count",
    [("null", 16000, 50), ("deflate", 16000, 50), ("zstandard", 16000, 50),
     ("null", 200, 300), ("deflate", 300, 300), ("null", 16000, 0)],
)
def test_floe_reads_fastavro_files(tmp_path, codec, sync_interval, count):
    records = [make_record(i) for i in range(count)]
    path = tmp_path / f"fa-{codec}-{sync_interval}.avro"
    # fastavro 1.13 needs backports.zstd for zstandard: write null, then recompress.
    with open(path, "wb") as f:
        fastavro.writer(f, fastavro.parse_schema(SCHEMA), records,
                        codec="null" if codec == "zstandard" else codec,
                        sync_interval=sync_interval, metadata={"origin": "fastavro"})
    if codec == "zstandard":
        recompress_zstandard(path)
    out = floe_read(path)
    assert out["codec"] == codec
    assert out["metadata"]["origin"] == "hex:" + b"fastavro".hex()
    assert len(out["records"]) == count
    for got, rec in zip(out["records"], records):
        want = normalize(rec)
        assert same(got, want), (got, want)


def recompress_zstandard(path):
    """Rewrites an Avro file with its blocks in the zstandard codec (Avro spec framing)."""
    import zstandard

    with open(path, "rb") as f:
        reader = fastavro.reader(f)
        metadata = dict(reader.metadata)
    with open(path, "rb") as f:
        blocks = list(fastavro.block_reader(f))
    metadata["avro.codec"] = "zstandard"
    sync = b"Z" * 16
    out = bytearray(b"Obj\x01")
    out += zigzag_varint(len(metadata))
    for k, v in metadata.items():
        kb, vb = k.encode(), (v if isinstance(v, bytes) else v.encode())
        out += zigzag_varint(len(kb)) + kb + zigzag_varint(len(vb)) + vb
    out += zigzag_varint(0) + sync
    for block in blocks:
        raw = block.bytes_.getvalue() if hasattr(block.bytes_, "getvalue") else bytes(block.bytes_)
        packed = zstandard.ZstdCompressor().compress(raw)
        out += zigzag_varint(block.num_records) + zigzag_varint(len(packed)) + packed + sync
    path.write_bytes(bytes(out))


def test_floe_rejects_truncated_and_corrupt_fastavro_files(tmp_path):
    path = tmp_path / "whole.avro"
    with open(path, "wb") as f:
        fastavro.writer(f, fastavro.parse_schema(SCHEMA), [make_record(i) for i in range(40)],
                        codec="deflate", sync_interval=500)
    data = path.read_bytes()
    for cut in [10, len(data) // 3, len(data) // 2, len(data) - 5]:
        bad = tmp_path / f"cut-{cut}.avro"
        bad.write_bytes(data[:cut])
        proc = subprocess.run([str(FIXTURE), "read", str(bad)], capture_output=True, text=True)
        assert proc.returncode == 1, (cut, proc.returncode, proc.stderr)  # an error, not a crash
        assert proc.stderr.startswith("error:")
    flipped = bytearray(data)
    flipped[len(data) // 2] ^= 0xFF
    bad = tmp_path / "flipped.avro"
    bad.write_bytes(bytes(flipped))
    proc = subprocess.run([str(FIXTURE), "read", str(bad)], capture_output=True, text=True)
    assert proc.returncode in (0, 1), proc.stderr  # never a signal
