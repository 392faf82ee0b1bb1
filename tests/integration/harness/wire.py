"""Byte-level encodings the tests and benchmarks write by hand."""
from __future__ import annotations


def zigzag_varint(n: int) -> bytes:
    """A signed 64-bit value as a zig-zag varint (Avro's int and long, Confluent's
    Protobuf message indexes)."""
    n = (n << 1) ^ (n >> 63)
    out = bytearray()
    while n >= 0x80:
        out.append((n & 0x7F) | 0x80)
        n >>= 7
    out.append(n)
    return bytes(out)
