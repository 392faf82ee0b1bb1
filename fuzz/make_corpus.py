#!/usr/bin/env python3
"""Writes the seed corpus fuzz/corpus/<target>/ (fuzz/README.md): a few small valid and
invalid inputs per fuzz target, encoded here from the specifications (Avro 1.11 "Binary
Encoding", Protobuf "Encoding", Confluent wire format) for the fixed schemas in
fuzz/<target>_fuzz.cc. Deterministic; rerun after changing a target's schema:

    python3 fuzz/make_corpus.py

Files it does not write (findings added by hand, fuzz/README.md) are left alone.
"""
import os
import re
import struct

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "corpus")


def write(target, name, data):
    d = os.path.join(ROOT, target)
    os.makedirs(d, exist_ok=True)
    if isinstance(data, str):
        data = data.encode()
    with open(os.path.join(d, name), "wb") as f:
        f.write(data)


def varint(v):
    out = bytearray()
    v &= (1 << 64) - 1
    while v >= 0x80:
        out.append((v & 0x7F) | 0x80)
        v >>= 7
    out.append(v)
    return bytes(out)


def zigzag(v):
    return varint((v << 1) ^ (v >> 63))


# --- framing ---------------------------------------------------------------------------
# Byte 0: 0xff = no __value_schema_id header, else header length = byte0 % 32.
def framing():
    write("framing", "prefix_index0", b"\xff" + b"\x00\x00\x00\x00\x07" + b"\x00" + b"\x08\x01")
    write("framing", "prefix_indexes", b"\xff" + b"\x00\x00\x00\x01\x00" + zigzag(3) +
          zigzag(1) + zigzag(0) + zigzag(2) + b"\x0a\x00")
    write("framing", "header_id", b"\x05" + b"\x00\x00\x00\x00\x2a" + b"\x02\x02\x04")
    write("framing", "header_guid", b"\x11" + b"\x01" + bytes(range(16)) + b"\x00payload")
    write("framing", "header_bad", b"\x04" + b"\x00\x00\x00\x01" + b"\x00\x00\x00\x00\x01")
    write("framing", "no_magic", b"\xff" + b"\x01\x00\x00\x00\x01\x00")
    write("framing", "short_prefix", b"\xff" + b"\x00\x00\x00")
    write("framing", "negative_count", b"\xff" + b"\x00\x00\x00\x00\x01" + zigzag(-1))
    write("framing", "too_many_indexes", b"\xff" + b"\x00\x00\x00\x00\x01" + zigzag(65) +
          b"\x00" * 65)
    write("framing", "long_varint", b"\xff" + b"\x00\x00\x00\x00\x01" + b"\xff" * 11)


# --- Avro (avro_fuzz.cc kWriter) ---------------------------------------------------------
def a_long(v):
    return zigzag(v)


def a_bytes(b):
    if isinstance(b, str):
        b = b.encode()
    return a_long(len(b)) + b


def dec_bytes(v, size=None):
    n = size or max(1, (v.bit_length() + 8) // 8)
    return v.to_bytes(n, "big", signed=True)


def a_p(x, tags):  # record P
    return a_long(x) + a_array([a_bytes(t) for t in tags])


def a_array(items):
    if not items:
        return a_long(0)
    return a_long(len(items)) + b"".join(items) + a_long(0)


def a_map(pairs):
    if not pairs:
        return a_long(0)
    return a_long(len(pairs)) + b"".join(a_bytes(k) + v for k, v in pairs) + a_long(0)


def a_i(q, fl):  # record I
    return struct.pack("<d", q) + struct.pack("<f", fl)


def avro_full():
    r = b"\x01" + a_long(-42) + a_long(5000000000) + struct.pack("<f", 1.5)
    r += struct.pack("<d", -2.25) + a_bytes(b"\x00\x01") + a_bytes("héllo") + a_long(2)
    r += b"abc" + a_bytes("123e4567-e89b-12d3-a456-426614174000") + a_long(19000)
    r += a_long(3723004) + a_long(3723004005) + a_long(1700000000123)
    r += a_long(1700000000123456) + a_long(1700000000123) + a_long(1700000000123456)
    r += a_bytes(dec_bytes(12345)) + dec_bytes(-98765432, 8) + dec_bytes(10**38 - 1, 16)
    r += a_long(1) + a_long(7)                      # nl
    r += a_long(0) + a_bytes("ns")                  # ns
    r += a_long(1) + a_long(3) + a_long(1) + a_bytes("y")
    r += a_array([a_long(5), a_long(-6)]) + a_map([("k", a_long(9))]) + a_i(0.5, 2.5)
    r += a_long(1) + a_array([a_long(1) + a_long(1), a_long(0)])  # al
    r += a_long(0) + a_map([("p", a_long(0)), ("q", a_long(1) + a_bytes("v"))])  # m
    r += a_long(1) + a_bytes(dec_bytes(-12345))     # nd
    r += a_long(3) + a_p(7, ["t1", "t2"])           # gu: P
    r += a_long(1) + a_bytes("text")                # r: string
    r += a_array([a_long(0) + a_bytes("s"), a_long(1), a_long(2) + a_p(1, [])])  # ul
    r += a_map([("a", a_long(0) + a_p(2, ["x"])), ("b", a_long(1) + a_long(1)),
                ("c", a_long(2) + a_bytes(dec_bytes(-125)))])  # mu
    r += a_array([a_map([("n", a_array([a_i(1.0, 2.0)]))]), a_map([])])  # nest
    r += a_long(99)                                 # tail
    return r


def avro_nulls_head():  # every field up to and including `r`
    r = b"\x00" + a_long(0) + a_long(0) + struct.pack("<f", 0) + struct.pack("<d", 0)
    r += a_bytes(b"") + a_bytes("") + a_long(0) + b"\x00\x00\x00" + a_bytes("")
    r += a_long(0) * 7 + a_bytes(dec_bytes(0)) + bytes(8) + bytes(16)
    r += a_long(0) + a_long(1) + a_long(0) + a_long(0) + a_long(1) + a_long(0)
    return r + a_long(0) + a_long(0) + a_long(0)  # gu null, r long 0


def avro_nulls():
    return avro_nulls_head() + a_array([]) + a_map([]) + a_array([]) + a_long(0)


def avro():
    full = avro_full()
    write("avro", "full", full)
    write("avro", "nulls", avro_nulls())
    write("avro", "truncated", full[: len(full) // 2])
    write("avro", "trailing_byte", full + b"\x00")
    write("avro", "bad_bool", b"\x02" + full[1:])
    write("avro", "long_varint", b"\x01" + b"\xff" * 11)
    bad_utf8 = full.replace("héllo".encode(), b"h\xc3\x28llo")
    write("avro", "bad_utf8", bad_utf8)
    # `ul` as a block with a negative count, followed by its byte size (spec allows it).
    item = a_long(0) + a_bytes("s")
    write("avro", "negative_block", avro_nulls_head() + a_long(-1) + a_long(len(item)) +
          item + a_long(0) + a_map([]) + a_array([]) + a_long(0))


# --- Protobuf (protobuf_fuzz.cc kProto3 / kProto2) --------------------------------------
def tag(num, wt):
    return varint((num << 3) | wt)


def f_varint(num, v):
    return tag(num, 0) + varint(v)


def f_sint(num, v):
    return tag(num, 0) + zigzag(v)


def f_fixed32(num, v, fmt="<I"):
    return tag(num, 5) + struct.pack(fmt, v)


def f_fixed64(num, v, fmt="<Q"):
    return tag(num, 1) + struct.pack(fmt, v)


def f_len(num, b):
    if isinstance(b, str):
        b = b.encode()
    return tag(num, 2) + varint(len(b)) + b


def inner(x, y, z=(), f=0.0):
    return f_varint(1, x) + f_len(2, y) + f_len(3, b"".join(zigzag(v) for v in z)) + \
        f_fixed32(4, f, "<f")


def proto3_full():
    m = f_varint(1, -5) + f_sint(2, -6) + f_fixed32(3, -7, "<i") + f_varint(4, -8)
    m += f_sint(5, -9) + f_fixed64(6, -10, "<q") + f_varint(7, 2**32 - 1)
    m += f_fixed32(8, 7) + f_varint(9, 2**64 - 1) + f_fixed64(10, 2**64 - 1)
    m += f_varint(11, 1) + f_fixed32(12, 1.5, "<f") + f_fixed64(13, -2.5, "<d")
    m += f_len(14, "héllo") + f_len(15, b"\x00\xff") + f_varint(16, 2) + f_varint(17, 0)
    m += f_len(18, "one") + f_len(19, inner(1, "b"))  # oneof: the last one wins
    m += f_len(21, inner(3, "in", (1, -1)))
    m += f_len(22, varint(1) + varint(2**64 - 1) + varint(300))  # packed
    m += f_len(23, struct.pack("<2d", 1.0, -1.0)) + f_len(24, "a") + f_len(24, "")
    m += f_len(25, inner(4, "r")) + f_len(25, b"")
    m += f_len(26, varint(0) + varint(7)) + f_len(27, b"\x01\x00")
    m += f_len(28, struct.pack("<Q", 5)) + f_sint(29, -3) + f_sint(29, 4)
    m += f_len(30, f_len(1, "k") + f_varint(2, 5)) + f_len(30, f_len(1, "k") + f_varint(2, 6))
    m += f_len(31, f_varint(1, 9) + f_len(2, inner(9, "v")))
    m += f_len(32, f_varint(1, 1) + f_len(2, f_fixed64(1, 0.5, "<d")))
    m += f_len(33, f_varint(1, 1) + f_len(2, b"\x01")) + f_len(34, f_fixed64(1, -1, "<q") +
                                                              f_varint(2, 1))
    m += f_len(35, f_varint(1, 1700000000) + f_varint(2, 123456789))
    m += f_len(36, f_varint(1, 0)) + f_len(36, f_varint(1, -62135596800))
    for num in range(37, 46):
        m += f_len(num, b"")  # wrappers present with their default value
    m += f_len(46, "opt") + f_varint(47, 1)
    m += f_len(48, f_len(1, inner(1, "d")) + f_len(2, f_len(1, f_len(1, "k") +
                                                         f_len(2, inner(2, "e"))) +
                                                   f_len(2, varint(3))))
    m += f_len(1000, b"unknown") + f_fixed32(1001, 1) + tag(1002, 3) + f_varint(1, 1) + \
        tag(1002, 4)  # unknown fields, a group included
    return m


def proto2_full():
    m = f_varint(1, 1) + f_varint(2, 2) + f_varint(3, 3) + f_len(4, "x") + f_varint(5, 6)
    m += f_varint(6, 5) + f_fixed64(7, 2.0, "<d") + f_varint(8, 0)
    m += f_len(9, varint(1) + varint(2)) + f_sint(10, -1) + f_fixed32(11, 3)
    m += f_len(12, f_len(1, "k") + f_len(2, b"v") + f_varint(3, 5) + f_varint(3, 6))
    m += f_varint(13, 1) + f_len(14, f_len(1, "a") + f_len(2, f_len(1, "k")))
    m += f_len(15, f_len(1, "r")) + f_fixed32(16, 0.25, "<f")
    return m


def protobuf():
    full = proto3_full()
    write("protobuf", "proto3_full", full)
    write("protobuf", "proto2_full", proto2_full())
    write("protobuf", "proto2_required_only", f_varint(1, 7))
    write("protobuf", "truncated", full[: len(full) // 2])
    write("protobuf", "bad_wire_type", f_fixed32(1, 1))
    write("protobuf", "bad_utf8", f_len(14, b"\xc3\x28") + f_varint(1, 1))
    write("protobuf", "long_varint", tag(1, 0) + b"\xff" * 11)
    write("protobuf", "length_past_end", tag(14, 2) + varint(100) + b"abc")
    write("protobuf", "bad_timestamp", f_len(35, f_varint(1, 2**62)) + f_varint(1, 1))
    write("protobuf", "zero_field_number", b"\x00\x01")


# --- JSON (json_fuzz.cc kWriter) ---------------------------------------------------------
def json():
    u = '"123e4567-e89b-12d3-a456-426614174000"'
    write("json", "full", (
        '{"b": true, "i": -9223372036854775808, "n": 1.5e300, "s": "h\\u00e9\\ud83d\\ude00",'
        ' "u": ' + u + ', "d": "2024-02-29", "ts": "2024-02-29T12:34:56.123456+02:00",'
        ' "t": "23:59:59.999999", "e": "a@b.c", "ni": null, "nts": "1970-01-01T00:00:00Z",'
        ' "addr": {"zip": "1011", "geo": {"lat": -0.5, "at": "10:00:00+01:00"}},'
        ' "any": {"sku": "a", "qty": 1, "id": ' + u + '},'
        ' "lines": [{"sku": "x", "qty": 2}, {"sku": "y", "qty": 3, "extra": [null]}],'
        ' "tags": ["a", null, ""], "attrs": {"k": 1, "l": -1},'
        ' "by_sku": {"x": {"sku": "x", "qty": 0}}, "grid": [[1, 2.5], [], [1e-3]],'
        ' "days": ["0001-01-01", "9999-12-31"], "flags": {"on": true, "off": null}}'))
    write("json", "minimal", '{"b": false, "i": 0, "lines": []}')
    write("json", "nulls", '{"b": false, "i": 1, "lines": [], "ni": null, "nts": null,'
          ' "addr": null, "any": null, "days": null, "unknown": {"deep": [[[]]]}}')
    write("json", "missing_required", '{"b": true, "lines": []}')
    write("json", "duplicate_key", '{"b": true, "b": false, "i": 1, "lines": []}')
    write("json", "wrong_type", '{"b": 1, "i": "1", "lines": {}}')
    write("json", "bad_date_time", '{"b": true, "i": 1, "lines": [], "ts": "2024-13-01T00:00:00Z"}')
    write("json", "too_deep", '{"b": true, "i": 1, "lines": [], "x": ' + "[" * 130 + "]" * 130 +
          "}")
    write("json", "trailing_garbage", '{"b": true, "i": 1, "lines": []} x')
    write("json", "bad_utf8", b'{"b": true, "i": 1, "lines": [], "s": "\xc3\x28"}')
    write("json", "big_integer", '{"b": true, "i": 18446744073709551615, "lines": []}')


# --- schema targets: schema text, NUL, one record ------------------------------------------
def schema_of(target, name):
    src = open(os.path.join(os.path.dirname(ROOT), target + "_fuzz.cc")).read()
    return re.search(r'constexpr char %s\[\] =\s*R"\((.*?)\)";' % name, src, re.S).group(1)


def avro_schema():
    write("avro_schema", "all_types", schema_of("avro", "kWriter").encode() + b"\0" + avro_full())
    write("avro_schema", "evolved", schema_of("avro", "kEvolved"))
    write("avro_schema", "long", b'"long"\0' + a_long(-1))
    write("avro_schema", "nullable_map", b'{"type": "record", "name": "R", "fields": [{"name": '
          b'"m", "type": ["null", {"type": "map", "values": "bytes"}]}]}\0' + a_long(1) +
          a_map([("k", a_bytes(b"v"))]))
    write("avro_schema", "recursive", '{"type": "record", "name": "N", "fields": [{"name": '
          '"next", "type": ["null", "N"]}]}')
    write("avro_schema", "bad_decimal", '{"type": "bytes", "logicalType": "decimal", '
          '"precision": 0}')
    write("avro_schema", "union_in_union", '["null", ["int", "long"]]')


def json_schema():
    full = open(os.path.join(ROOT, "json", "full"), "rb").read()
    write("json_schema", "all_types", schema_of("json", "kWriter").encode() + b"\0" + full)
    write("json_schema", "evolved", schema_of("json", "kEvolved"))
    write("json_schema", "small", b'{"type": "object", "properties": {"a": {"type": '
          b'"integer"}, "b": {"type": ["null", "string"], "format": "date"}}}\0'
          b'{"a": 1, "b": "2024-01-01"}')
    write("json_schema", "recursive", '{"type": "object", "properties": {"n": {"$ref": "#"}}}')
    write("json_schema", "pattern_properties", '{"type": "object", "patternProperties": '
          '{"^a": {"type": "string"}}}')
    write("json_schema", "defs_and_anyof", '{"$defs": {"X": {"type": "object", "properties": '
          '{"v": {"type": "number"}}}}, "type": "object", "properties": {"x": {"anyOf": '
          '[{"$ref": "#/$defs/X"}, {"type": "null"}]}, "l": {"type": "array", "items": '
          '{"type": "array", "items": {"type": "string", "format": "uuid"}}}}}\0'
          '{"x": {"v": 1}, "l": [[]]}')


if __name__ == "__main__":
    framing()
    avro()
    protobuf()
    json()
    avro_schema()
    json_schema()
