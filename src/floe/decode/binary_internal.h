// Private to floe/decode: what the two binary decoders (Avro, Protobuf) share on the
// reading side: the base-128 varint both formats use, and how an invalid record is
// reported (one list of reasons, so that the faults both formats check are worded the
// same). ReadVarint is on the per-record path: it is always inlined, and so is the
// failure callback it takes (no indirect call); the rest runs only for invalid records.
#pragma once

#include <cstdint>
#include <string>

#include "floe/common/status.h"

namespace floe::decode::internal {

// Why a binary record is invalid. `a` and `b` of ErrorInfo are the numbers the text
// names.
enum class Reason : uint8_t {
  // Both formats.
  kTruncated,  // a bytes needed, b remain
  kVarintTooLong,
  kVarintOverflow,
  kLengthBeyondEnd,  // length a, b remaining
  kUtf8,
  // Avro.
  kIntRange,  // int value a
  kNegativeLength,
  kBadBoolean,
  kUnionIndex,  // index a of b branches
  kEnumIndex,   // index a of b symbols
  kDecimalTooLong,
  kDecimalPrecision,
  kTimestampOverflow,
  kTimestampRange,  // microseconds a
  kDateRange,       // days a
  kBlockCount,
  kBlockTooBig,
  kBlockSize,
  kTooManyItems,
  kTrailing,
  // Protobuf.
  kTagRange,
  kFieldZero,
  kBadWireType,   // wire type a, field b
  kWireMismatch,  // wire type a where the field's type needs b
  kGroupForField,
  kEndGroup,
  kGroupDepth,
  kGroupUnterminated,
  kInt32Range,  // value a
  kUIntRange,
  kPackedFixed,
  kRequired,
  kSecondsRange,
  kNanosRange,
};

// Where and why a record failed: `at` the first byte of the bad value (nullptr when no
// byte is to blame, e.g. a missing required field), `op` the op reading it.
struct ErrorInfo {
  const uint8_t* at = nullptr;
  uint32_t op = 0;
  Reason reason = Reason::kTruncated;
  int64_t a = 0;
  int64_t b = 0;
};

// Protobuf wire types by number (encoding spec "Message Structure"), for messages.
inline const char* ProtobufWireName(int64_t wire) {
  switch (wire) {
    case 0:
      return "varint";
    case 1:
      return "fixed64";
    case 2:
      return "length-delimited";
    case 3:
      return "start-group";
    case 4:
      return "end-group";
    case 5:
      return "fixed32";
    default:
      return "invalid";
  }
}

// "varint longer than 10 bytes", ...
[[gnu::noinline]] inline std::string ReasonText(const ErrorInfo& e) {
  const std::string a = std::to_string(e.a);
  const std::string b = std::to_string(e.b);
  switch (e.reason) {
    case Reason::kTruncated:
      return "truncated: the value needs " + a + " more byte(s), " + b + " remain";
    case Reason::kVarintTooLong:
      return "varint longer than 10 bytes";
    case Reason::kVarintOverflow:
      return "varint overflows 64 bits";
    case Reason::kLengthBeyondEnd:
      return "length " + a + " exceeds the " + b + " remaining bytes";
    case Reason::kUtf8:
      return "string is not valid UTF-8";
    case Reason::kIntRange:
      return "int value " + a + " is outside the 32-bit range";
    case Reason::kNegativeLength:
      return "negative length " + a;
    case Reason::kBadBoolean:
      return "boolean byte " + a + " is neither 0 nor 1";
    case Reason::kUnionIndex:
      return "union branch index " + a + " is outside the " + b + " branches (0 to " +
             std::to_string(e.b - 1) + ")";
    case Reason::kEnumIndex:
      return "enum index " + a + " is outside the " + b + " symbols";
    case Reason::kDecimalTooLong:
      return "decimal of " + a + " bytes does not fit 16 bytes (128 bits)";
    case Reason::kDecimalPrecision:
      return "decimal value has more digits than its precision " + a;
    case Reason::kTimestampOverflow:
      return "millisecond value " + a + " overflows int64 microseconds";
    case Reason::kTimestampRange:
      return "timestamp of " + a +
             " microseconds is outside 0001-01-01T00:00:00Z..9999-12-31T23:59:59.999999Z";
    case Reason::kDateRange:
      return "date of " + a + " days is outside 0001-01-01..9999-12-31";
    case Reason::kBlockCount:
      return "invalid block count " + a;
    case Reason::kBlockTooBig:
      return "block of " + a + " items cannot fit in the " + b + " remaining bytes";
    case Reason::kBlockSize:
      return "block byte size " + a + " does not match its items (" + b + " bytes)";
    case Reason::kTooManyItems:
      return "more than " + a + " zero-byte items in one record";
    case Reason::kTrailing:
      return a + " trailing byte(s) after the record";
    case Reason::kTagRange:
      return "tag " + a + " does not fit 32 bits";
    case Reason::kFieldZero:
      return "field number 0 is invalid";
    case Reason::kBadWireType:
      return "invalid wire type " + a + " (field " + b + ")";
    case Reason::kWireMismatch:
      return std::string("wire type ") + ProtobufWireName(e.a) +
             " does not match the field's type (" + ProtobufWireName(e.b) + ")";
    case Reason::kGroupForField:
      return "a group where the schema declares a non-group field";
    case Reason::kEndGroup:
      return "unexpected end-group tag (field " + a + ")";
    case Reason::kGroupDepth:
      return "groups nested deeper than " + a;
    case Reason::kGroupUnterminated:
      return "group of field " + a + " has no end tag";
    case Reason::kInt32Range:
      return "value " + a + " is outside the 32-bit range";
    case Reason::kUIntRange:
      return "value does not fit an unsigned 32-bit number";
    case Reason::kPackedFixed:
      return "packed run of " + a + " bytes is not a multiple of " + b;
    case Reason::kRequired:
      return "required field is missing";
    case Reason::kSecondsRange:
      return "Timestamp seconds " + a + " outside 0001-01-01..9999-12-31";
    case Reason::kNanosRange:
      return "Timestamp nanos " + a + " outside 0..999999999";
  }
  return "invalid";
}

// InvalidRecord("Avro field 'a.b' at byte 7: <reason>"): `format` names the format,
// `path` the op's path ("" for the record itself: "Avro record"), `data` the record's
// first byte.
[[gnu::noinline]] inline Status InvalidAt(const char* format, const std::string& path,
                                          const ErrorInfo& e, const uint8_t* data) {
  std::string where = path.empty() ? std::string(format) + " record"
                                   : std::string(format) + " field '" + path + "'";
  if (e.at != nullptr) where += " at byte " + std::to_string(e.at - data);
  return InvalidRecord(where + ": " + ReasonText(e));
}

// Reads a base-128 varint (least significant group first, as both formats write it) at
// `p`, advancing it: at most ten bytes, no bits beyond 64; with kCheckEnd never at or
// past `end` (without, the caller has made sure ten bytes are there). On a fault returns
// fail(start, reason, a) with the varint's first byte: kTruncated (a = 1),
// kVarintTooLong or kVarintOverflow.
template <bool kCheckEnd, typename Fail>
[[gnu::always_inline]] inline bool ReadVarint(const uint8_t*& p, const uint8_t* end,
                                              uint64_t* out, const Fail& fail) {
  const uint8_t* start = p;
  uint64_t v = 0;
  for (int shift = 0; shift < 70; shift += 7) {
    if (kCheckEnd && p == end) return fail(start, Reason::kTruncated, 1);
    const uint8_t b = *p++;
    v |= static_cast<uint64_t>(b & 0x7f) << shift;
    if (b < 0x80) {
      if (shift == 63 && b > 1) return fail(start, Reason::kVarintOverflow, 0);
      *out = v;
      return true;
    }
  }
  return fail(start, Reason::kVarintTooLong, 0);
}

}  // namespace floe::decode::internal
