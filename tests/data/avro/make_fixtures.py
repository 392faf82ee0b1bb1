#!/usr/bin/env python3
"""Writes Avro fixtures with fastavro (an independent encoder) for floe_decode_test.

    .venv/bin/python tests/data/avro/make_fixtures.py

Outputs, next to this script, for each fixture (all_types; unions: general unions and
named-type references):
  all_types.avsc           the writer schema
  all_types.records.bin    records, each as a 4-byte big-endian length + the Avro binary
                           encoding (fastavro.schemaless_writer: no framing, no container)
  all_types.expected.json  {column: [values]} in the JSON form Arrow's ArrayFromJSONString
                           reads for the table's Arrow types (decimals as strings, times
                           and timestamps in microseconds, dates in days, maps as pairs)

Deterministic (fixed seed), so regenerating gives identical files.
"""
import datetime as dt
import decimal
import io
import json
import os
import random
import struct
import uuid

import fastavro

HERE = os.path.dirname(os.path.abspath(__file__))

SCHEMA = {
    "type": "record", "name": "Fixture", "namespace": "floe.test",
    "fields": [
        {"name": "id", "type": "long"},
        {"name": "flag", "type": "boolean"},
        {"name": "small", "type": "int"},
        {"name": "ratio", "type": "float"},
        {"name": "value", "type": "double"},
        {"name": "name", "type": "string"},
        {"name": "payload", "type": "bytes"},
        {"name": "color", "type": {"type": "enum", "name": "Color",
                                   "symbols": ["RED", "GREEN", "BLUE"]}},
        {"name": "hash", "type": {"type": "fixed", "name": "Hash", "size": 4}},
        {"name": "uid", "type": {"type": "string", "logicalType": "uuid"}},
        {"name": "day", "type": {"type": "int", "logicalType": "date"}},
        {"name": "tod_ms", "type": {"type": "int", "logicalType": "time-millis"}},
        {"name": "tod_us", "type": {"type": "long", "logicalType": "time-micros"}},
        {"name": "ts_ms", "type": {"type": "long", "logicalType": "timestamp-millis"}},
        {"name": "ts_us", "type": {"type": "long", "logicalType": "timestamp-micros"}},
        {"name": "lts_ms", "type": {"type": "long", "logicalType": "local-timestamp-millis"}},
        {"name": "lts_us", "type": {"type": "long", "logicalType": "local-timestamp-micros"}},
        {"name": "price", "type": {"type": "bytes", "logicalType": "decimal",
                                   "precision": 10, "scale": 3}},
        {"name": "big", "type": {"type": "fixed", "name": "Big", "size": 16,
                                 "logicalType": "decimal", "precision": 38, "scale": 5}},
        {"name": "maybe", "type": ["null", "string"]},
        {"name": "maybe_rev", "type": ["long", "null"]},
        {"name": "tags", "type": {"type": "array", "items": "string"}},
        {"name": "scores", "type": {"type": "map", "values": ["null", "double"]}},
        {"name": "address", "type": ["null", {
            "type": "record", "name": "Address", "fields": [
                {"name": "street", "type": "string"},
                {"name": "zip", "type": ["null", "int"]},
                {"name": "geo", "type": {"type": "array", "items": {
                    "type": "record", "name": "Point", "fields": [
                        {"name": "lat", "type": "double"},
                        {"name": "lon", "type": "double"}]}}}]}]},
        {"name": "matrix", "type": {"type": "array",
                                    "items": {"type": "array", "items": "int"}}},
    ],
}

WORDS = ["", "a", "kafka", "iceberg", "h\u00e9llo", "\u20ac", "\U0001F600 ok", "\u4e2d\u6587",
         "tab\tnew\nline", "quote\"back\\slash"]
EPOCH = dt.datetime(1970, 1, 1, tzinfo=dt.timezone.utc)


def nice(x):
    """A double with few significant bits, which every JSON parser reads back exactly."""
    return round(x * 1024) / 1024


def record(rng, i):
    """One record as fastavro values and the expected Arrow JSON values."""
    small = rng.choice([0, 1, -1, 2**31 - 1, -2**31, rng.randint(-1000, 1000)])
    ratio = rng.choice([0.0, 1.5, -2.25, 3.0e38, 1e-45, nice(rng.uniform(-10, 10))])
    ratio = struct.unpack("<f", struct.pack("<f", ratio))[0]  # what a float can hold
    value = rng.choice([0.0, -0.0, 1e308, -5e-324, nice(rng.uniform(-1e6, 1e6))])
    payload = "".join(rng.choice("abcXYZ019 ") for _ in range(rng.randint(0, 12)))
    hsh = "".join(rng.choice("0123456789abcdef") for _ in range(4))
    uid = str(uuid.UUID(int=rng.getrandbits(128)))
    day = rng.randint(-719162, 2932896)
    tod_ms = rng.randint(0, 86399999)
    tod_us = rng.randint(0, 86399999999)
    ts_ms = rng.randint(-62135596800000, 253402300799999)
    # Years 1..9999, as Floe stores instants from every format.
    ts_us = rng.randint(-62135596800000000, 253402300799999999)
    ctx = decimal.Context(prec=60)  # the default 28 digits would round 38-digit values
    price = decimal.Decimal(rng.randint(-10**10 + 1, 10**10 - 1)).scaleb(-3, context=ctx)
    big = decimal.Decimal(rng.randint(-10**38 + 1, 10**38 - 1)).scaleb(-5, context=ctx)
    maybe = None if i % 3 == 0 else rng.choice(WORDS)
    maybe_rev = None if i % 4 == 1 else rng.randint(-2**63, 2**63 - 1)
    tags = [rng.choice(WORDS) for _ in range(rng.randint(0, 4))]
    scores = {}
    for k in range(rng.randint(0, 3)):
        scores["k%d" % k] = None if rng.random() < 0.3 else nice(rng.uniform(-1, 1))
    if i % 5 == 2:
        address = None
    else:
        address = {"street": rng.choice(WORDS),
                   "zip": None if rng.random() < 0.5 else rng.randint(1000, 99999),
                   "geo": [{"lat": nice(rng.uniform(-90, 90)), "lon": nice(rng.uniform(-180, 180))}
                           for _ in range(rng.randint(0, 2))]}
    matrix = [[rng.randint(-5, 5) for _ in range(rng.randint(0, 3))]
              for _ in range(rng.randint(0, 3))]

    avro = {
        "id": i, "flag": i % 2 == 0, "small": small, "ratio": ratio, "value": value,
        "name": WORDS[i % len(WORDS)], "payload": payload.encode(),
        "color": ["RED", "GREEN", "BLUE"][i % 3],
        "hash": hsh.encode(), "uid": uid, "day": day, "tod_ms": tod_ms, "tod_us": tod_us,
        "ts_ms": ts_ms, "ts_us": ts_us, "lts_ms": ts_ms, "lts_us": ts_us,
        "price": price, "big": big, "maybe": maybe, "maybe_rev": maybe_rev, "tags": tags,
        "scores": scores, "address": address, "matrix": matrix,
    }
    expected = {
        "id": i, "flag": i % 2 == 0, "small": small, "ratio": ratio, "value": value,
        "name": WORDS[i % len(WORDS)], "payload": payload,
        "color": ["RED", "GREEN", "BLUE"][i % 3], "hash": hsh, "uid": uid, "day": day,
        "tod_ms": tod_ms * 1000, "tod_us": tod_us, "ts_ms": ts_ms * 1000, "ts_us": ts_us,
        "lts_ms": ts_ms * 1000, "lts_us": ts_us,
        "price": format(price, "f"), "big": format(big, "f"), "maybe": maybe, "maybe_rev": maybe_rev,
        "tags": tags, "scores": [[k, v] for k, v in scores.items()],
        "address": address, "matrix": matrix,
    }
    return avro, expected


# General unions (docs/type-mapping.md): each maps to a struct of optional members
# member0, member1, ... (one per non-null branch, in order), null when the null branch is
# chosen. Named types are defined once and referenced by short and full name. Values are
# written with fastavro's tuple notation (branch name, value) so that the branch is explicit.
UNION_SCHEMA = {
    "type": "record", "name": "UnionFixture", "namespace": "floe.test",
    "fields": [
        {"name": "id", "type": "long"},
        {"name": "any", "type": [
            "null", "long", "string",
            {"type": "record", "name": "Point", "fields": [
                {"name": "x", "type": "double"}, {"name": "y", "type": "double"}]},
            {"type": "enum", "name": "Suit", "symbols": ["HEARTS", "SPADES"]}]},
        {"name": "req", "type": ["int", "string", {"type": "array", "items": "Point"}]},
        {"name": "mid", "type": ["string", "null",
                                 {"type": "long", "logicalType": "timestamp-millis"}]},
        {"name": "items", "type": {"type": "array",
                                   "items": ["null", "floe.test.Point", "boolean", "Suit"]}},
        {"name": "lookup", "type": {"type": "map", "values": [
            "Point", {"type": "fixed", "name": "Tag", "size": 2}]}},
        {"name": "when", "type": {"type": "long", "logicalType": "local-timestamp-millis"}},
        {"name": "nested", "type": ["null", {"type": "record", "name": "Box", "fields": [
            {"name": "inner", "type": ["floe.test.Point", "string"]}]}]},
    ],
}

POINT = "floe.test.Point"
SUIT = "floe.test.Suit"


def members(n, k, value):
    """The expected struct of a union with n non-null branches, member k set."""
    out = {"member%d" % j: None for j in range(n)}
    out["member%d" % k] = value
    return out


def union_record(rng, i):
    def point():
        p = {"x": nice(rng.uniform(-100, 100)), "y": nice(rng.uniform(-100, 100))}
        return p, dict(p)

    kind = i % 5
    if kind == 0:
        any_avro, any_exp = None, None
    elif kind == 1:
        v = rng.randint(-2**63, 2**63 - 1)
        any_avro, any_exp = ("long", v), members(4, 0, v)
    elif kind == 2:
        w = rng.choice(WORDS)
        any_avro, any_exp = ("string", w), members(4, 1, w)
    elif kind == 3:
        p, pe = point()
        any_avro, any_exp = (POINT, p), members(4, 2, pe)
    else:
        s = rng.choice(["HEARTS", "SPADES"])
        any_avro, any_exp = (SUIT, s), members(4, 3, s)

    kind = i % 3
    if kind == 0:
        v = rng.randint(-2**31, 2**31 - 1)
        req_avro, req_exp = ("int", v), members(3, 0, v)
    elif kind == 1:
        w = rng.choice(WORDS)
        req_avro, req_exp = ("string", w), members(3, 1, w)
    else:
        pts = [point() for _ in range(rng.randint(0, 3))]
        req_avro, req_exp = ("array", [p for p, _ in pts]), members(3, 2, [e for _, e in pts])

    kind = i % 4
    if kind in (0, 3):
        ms = rng.randint(-62135596800000, 253402300799999)
        mid_avro, mid_exp = ("long", ms), members(2, 1, ms * 1000)
    elif kind == 1:
        mid_avro, mid_exp = None, None
    else:
        w = rng.choice(WORDS)
        mid_avro, mid_exp = ("string", w), members(2, 0, w)

    items_avro, items_exp = [], []
    for _ in range(rng.randint(0, 4)):
        k = rng.randint(0, 3)
        if k == 0:
            items_avro.append(None)
            items_exp.append(None)
        elif k == 1:
            p, pe = point()
            items_avro.append((POINT, p))
            items_exp.append(members(3, 0, pe))
        elif k == 2:
            b = rng.random() < 0.5
            items_avro.append(("boolean", b))
            items_exp.append(members(3, 1, b))
        else:
            s = rng.choice(["HEARTS", "SPADES"])
            items_avro.append((SUIT, s))
            items_exp.append(members(3, 2, s))

    lookup_avro, lookup_exp = {}, []
    for k in range(rng.randint(0, 3)):
        key = "k%d" % k
        if rng.random() < 0.5:
            p, pe = point()
            lookup_avro[key] = (POINT, p)
            lookup_exp.append([key, members(2, 0, pe)])
        else:
            tag = "".join(rng.choice("abcXYZ") for _ in range(2))
            lookup_avro[key] = ("floe.test.Tag", tag.encode())
            lookup_exp.append([key, members(2, 1, tag)])

    when = rng.randint(-62135596800000, 253402300799999)
    if i % 3 == 0:
        nested_avro, nested_exp = None, None
    elif i % 3 == 1:
        p, pe = point()
        nested_avro, nested_exp = {"inner": (POINT, p)}, {"inner": members(2, 0, pe)}
    else:
        w = rng.choice(WORDS)
        nested_avro, nested_exp = {"inner": ("string", w)}, {"inner": members(2, 1, w)}

    avro = {"id": i, "any": any_avro, "req": req_avro, "mid": mid_avro,
            "items": items_avro, "lookup": lookup_avro, "when": when,
            "nested": nested_avro}
    expected = {"id": i, "any": any_exp, "req": req_exp, "mid": mid_exp,
                "items": items_exp, "lookup": lookup_exp, "when": when * 1000,
                "nested": nested_exp}
    return avro, expected


def write_fixture(name, schema_json, make_record, seed, count):
    rng = random.Random(seed)
    schema = fastavro.parse_schema(schema_json)
    columns = {f["name"]: [] for f in schema_json["fields"]}
    out = io.BytesIO()
    for i in range(count):
        avro, expected = make_record(rng, i)
        buf = io.BytesIO()
        fastavro.schemaless_writer(buf, schema, avro)
        data = buf.getvalue()
        out.write(struct.pack(">I", len(data)))
        out.write(data)
        for k, v in expected.items():
            columns[k].append(v)
    with open(os.path.join(HERE, name + ".avsc"), "w") as f:
        json.dump(schema_json, f, indent=1)
        f.write("\n")
    with open(os.path.join(HERE, name + ".records.bin"), "wb") as f:
        f.write(out.getvalue())
    with open(os.path.join(HERE, name + ".expected.json"), "w") as f:
        json.dump(columns, f, ensure_ascii=False, allow_nan=False)
        f.write("\n")


def main():
    write_fixture("all_types", SCHEMA, record, 20240601, 300)
    write_fixture("unions", UNION_SCHEMA, union_record, 20240602, 200)


if __name__ == "__main__":
    main()
