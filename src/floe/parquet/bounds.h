// Iceberg column bounds: single-value binary serialization (Iceberg spec, Appendix D) and
// the truncation of string/binary bounds that Iceberg's Java writer applies by default
// (MetricsModes truncate(16)). Arrow-free, so manifest code can use it cheaply.
//
// All functions are pure and thread-safe.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "floe/iceberg/schema.h"

namespace floe::parquet {

// Java's default `write.metadata.metrics.default` is truncate(16).
inline constexpr int kDefaultBoundTruncateLength = 16;

// ---- Appendix D encoders -------------------------------------------------------------
// boolean: one byte, 0x00 false / 0x01 true.
std::string EncodeBoolean(bool v);
// int, date (days since 1970-01-01): 4 bytes little-endian.
std::string EncodeInt(int32_t v);
// long, time (micros of day), timestamp, timestamptz (micros since epoch): 8 bytes LE.
std::string EncodeLong(int64_t v);
// float / double: IEEE 754 bits, little-endian.
std::string EncodeFloat(float v);
std::string EncodeDouble(double v);
// decimal: unscaled value as two's complement big-endian in the minimum number of bytes,
// as Java's BigInteger.toByteArray(): 0 -> 00, 127 -> 7f, 128 -> 00 80, -129 -> ff 7f.
std::string EncodeDecimal(int64_t unscaled);
// Same, from a two's complement big-endian value of any width >= 1 byte (e.g. the
// FIXED_LEN_BYTE_ARRAY of a Parquet decimal): strips redundant sign bytes.
std::string MinimalTwosComplement(std::string_view big_endian);
// uuid: the 16 bytes in big-endian (canonical text) order; string/binary/fixed: the raw
// bytes. These need no encoder.

// Compares two Appendix D encoded values of the same primitive Iceberg type in Iceberg's
// order: signed integers, IEEE order with -0.0 < +0.0, unsigned lexicographic bytes for
// string (UTF-8 byte order = code point order), binary, fixed and uuid, signed for
// decimal. Returns <0, 0, >0. Values must be well-formed for `type` (as produced above).
int CompareBounds(iceberg::TypeId type, std::string_view a, std::string_view b);

// ---- Truncation ----------------------------------------------------------------------
// Lower bound of a string: its first `max_code_points` code points (a prefix sorts
// first). Invalid UTF-8 falls back to byte truncation, which is still a valid lower
// bound.
std::string TruncateStringLower(std::string_view utf8,
                                int max_code_points = kDefaultBoundTruncateLength);
// Upper bound of a string: unchanged when it has at most `max_code_points` code points;
// otherwise the prefix of that many code points with its last code point incremented
// (skipping the surrogate range U+D800..U+DFFF). A trailing U+10FFFF cannot be
// incremented, so it is dropped and the one before it is incremented; nullopt when no
// code point can be incremented, i.e. no upper bound may be written. Invalid UTF-8 falls
// back to bytes.
std::optional<std::string> TruncateStringUpper(
    std::string_view utf8, int max_code_points = kDefaultBoundTruncateLength);
// Binary (and fixed) bounds, the same rules on bytes: lower = prefix; upper = prefix with
// its last byte below 0xFF incremented and what follows dropped; nullopt if all are 0xFF.
std::string TruncateBinaryLower(std::string_view bytes,
                                int max_bytes = kDefaultBoundTruncateLength);
std::optional<std::string> TruncateBinaryUpper(
    std::string_view bytes, int max_bytes = kDefaultBoundTruncateLength);

}  // namespace floe::parquet
