// The compiled JSON decoder (RFC 8259 documents, JSON Schema draft-07 / 2020-12 types,
// RFC 3339 date/time strings).
//
// Make() turns (writer schema, table schema) into a Program: a flat vector of Ops in
// pre-order (children of one op are contiguous and come after it). The program is
// defined in json_program_internal.h and compiled in json_compiler.cc; this file is the
// per-record part. Decode():
//
//   1. Parse: simdjson's DOM parser (reused; it validates the JSON grammar and UTF-8
//      and bounds the depth iteratively, so hostile nesting cannot overflow the stack).
//   2. Walk: one walk of the parsed document along the program that checks each value
//      and appends it (Arrow's capacity-checked appends). A record that fails part way
//      is taken out again (ColumnCheck::Rollback), and the next validate_after_invalid
//      records are checked by a walk that appends nothing before they are appended.
//
// The walk recurses along the schema only (bounded by kMaxJsonSchemaDepth); keys the
// schema does not declare are never walked.
// A number simdjson cannot hold makes it refuse the whole document; NumberScan
// (json_number_scan.cc) then explains it.
#include "floe/decode/json_decoder.h"

#include <arrow/array/builder_binary.h>
#include <arrow/array/builder_nested.h>
#include <arrow/array/builder_primitive.h>
#include <arrow/array/builder_time.h>
#include <arrow/type.h>
#include <simdjson.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <string_view>
#include <vector>

#include "floe/decode/compiled_decoder_internal.h"
#include "floe/decode/json_number_scan_internal.h"
#include "floe/decode/json_program_internal.h"

namespace floe::decode {

using internal::Link;
using internal::json::Kind;
using internal::json::NumberScan;
using internal::json::Op;
using internal::json::Sink;
namespace dom = ::simdjson::dom;

const size_t JsonDecoder::kPadding = ::simdjson::SIMDJSON_PADDING;

namespace {

using Program = internal::JsonProgram;

constexpr int64_t kMaxExactDouble = int64_t{1} << 53;
constexpr int64_t kMicrosPerSecond = 1000000;
constexpr int64_t kMicrosPerDay = 86400 * kMicrosPerSecond;
// Instants and dates are bounded to years 1..9999 in UTC (compiled_decoder_internal.h);
// four-digit years reach the bounds only as year 0000 or through an offset.
using internal::kMaxTimestampMicros;
using internal::kMinDateDays;
using internal::kMinTimestampMicros;

// ---------------------------------------------------------------------------------------
// RFC 3339 strings (strict: fixed widths, ranges checked, no leap second)

inline bool Digits(std::string_view s, size_t pos, size_t n, int* out) {
  if (pos + n > s.size()) return false;
  int v = 0;
  for (size_t k = pos; k < pos + n; ++k) {
    const char c = s[k];
    if (c < '0' || c > '9') return false;
    v = v * 10 + (c - '0');
  }
  *out = v;
  return true;
}

// Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's days_from_civil).
inline int64_t DaysFromCivil(int64_t y, int m, int d) {
  y -= m <= 2;
  const int64_t era = (y >= 0 ? y : y - 399) / 400;
  const int64_t yoe = y - era * 400;
  const int64_t doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1;
  const int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + doe - 719468;
}

inline bool ParseDateAt(std::string_view s, size_t pos, int64_t* days) {
  int y, m, d;
  if (!Digits(s, pos, 4, &y) || pos + 10 > s.size() || s[pos + 4] != '-' ||
      !Digits(s, pos + 5, 2, &m) || s[pos + 7] != '-' || !Digits(s, pos + 8, 2, &d)) {
    return false;
  }
  static constexpr int kDays[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  if (m < 1 || m > 12 || d < 1) return false;
  const bool leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
  if (d > kDays[m - 1] + (m == 2 && leap ? 1 : 0)) return false;
  *days = DaysFromCivil(y, m, d);
  return true;
}

// "HH:MM:SS[.fraction]" then, if `offset` is given, an optional (required when
// `offset_required`) "Z" or "±HH:MM" that is returned in seconds east of UTC.
inline bool ParseTimeAt(std::string_view s, size_t pos, int64_t* micros,
                        bool offset_required, bool* has_offset, int64_t* offset_seconds) {
  int h, mi, se;
  if (!Digits(s, pos, 2, &h) || pos + 8 > s.size() || s[pos + 2] != ':' ||
      !Digits(s, pos + 3, 2, &mi) || s[pos + 5] != ':' || !Digits(s, pos + 6, 2, &se)) {
    return false;
  }
  if (h > 23 || mi > 59 || se > 59) return false;
  pos += 8;
  int64_t frac = 0;
  if (pos < s.size() && s[pos] == '.') {
    ++pos;
    size_t n = 0;
    while (pos < s.size() && s[pos] >= '0' && s[pos] <= '9') {
      if (n < 6) {
        frac = frac * 10 + (s[pos] - '0');
      } else if (s[pos] != '0') {
        return false;  // sub-microsecond precision would be lost
      }
      ++n;
      ++pos;
    }
    if (n == 0) return false;
    for (size_t k = n; k < 6; ++k) frac *= 10;
  }
  *micros = (int64_t{h} * 3600 + mi * 60 + se) * kMicrosPerSecond + frac;
  *has_offset = false;
  *offset_seconds = 0;
  if (pos == s.size()) return !offset_required;
  if (s[pos] == 'Z' || s[pos] == 'z') {
    *has_offset = true;
    return pos + 1 == s.size();
  }
  if (s[pos] != '+' && s[pos] != '-') return false;
  int oh, om;
  if (pos + 6 != s.size() || !Digits(s, pos + 1, 2, &oh) || s[pos + 3] != ':' ||
      !Digits(s, pos + 4, 2, &om) || oh > 23 || om > 59) {
    return false;
  }
  *has_offset = true;
  *offset_seconds = (s[pos] == '-' ? -1 : 1) * (int64_t{oh} * 3600 + om * 60);
  return true;
}

inline bool ParseDate(std::string_view s, int64_t* days) {
  return s.size() == 10 && ParseDateAt(s, 0, days);
}

inline bool ParseDateTime(std::string_view s, int64_t* micros) {
  int64_t days, tod, offset;
  bool has_offset;
  if (s.size() < 20 || !ParseDateAt(s, 0, &days) || (s[10] != 'T' && s[10] != 't') ||
      !ParseTimeAt(s, 11, &tod, /*offset_required=*/true, &has_offset, &offset)) {
    return false;
  }
  *micros = days * kMicrosPerDay + tod - offset * kMicrosPerSecond;
  return true;
}

// A time of day, with or without an offset; with one, it is converted to UTC, and the
// result may leave [0, kMicrosPerDay) (the day changed: the caller refuses it).
inline bool ParseTime(std::string_view s, int64_t* micros) {
  int64_t tod, offset;
  bool has_offset;
  if (!ParseTimeAt(s, 0, &tod, /*offset_required=*/false, &has_offset, &offset)) {
    return false;
  }
  *micros = tod - offset * kMicrosPerSecond;
  return true;
}

inline bool IsUuid(std::string_view s) {
  if (s.size() != 36) return false;
  for (size_t k = 0; k < 36; ++k) {
    const char c = s[k];
    if (k == 8 || k == 13 || k == 18 || k == 23) {
      if (c != '-') return false;
    } else if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') ||
                 (c >= 'A' && c <= 'F'))) {
      return false;
    }
  }
  return true;
}

const char* KindName(Kind k) {
  switch (k) {
    case Kind::kBoolean:
      return "boolean";
    case Kind::kInteger:
      return "integer";
    case Kind::kNumber:
      return "number";
    case Kind::kString:
      return "string";
    case Kind::kUuid:
      return "uuid string";
    case Kind::kDate:
      return "date string";
    case Kind::kDateTime:
      return "date-time string";
    case Kind::kTime:
      return "time string";
    case Kind::kObject:
    case Kind::kMap:
      return "object";
    case Kind::kArray:
      return "array";
    case Kind::kAbsent:
      return "nothing";
  }
  return "?";
}

const char* ElementName(dom::element_type t) {
  switch (t) {
    case dom::element_type::ARRAY:
      return "array";
    case dom::element_type::OBJECT:
      return "object";
    case dom::element_type::INT64:
    case dom::element_type::UINT64:
      return "integer";
    case dom::element_type::DOUBLE:
      return "number";
    case dom::element_type::STRING:
      return "string";
    case dom::element_type::BOOL:
      return "boolean";
    case dom::element_type::NULL_VALUE:
      return "null";
  }
  return "?";
}

// A double that is an integer JSON Schema accepts (1.0, 1e3) and that int64 holds
// exactly.
inline bool IntegralDouble(double d) {
  return std::trunc(d) == d && std::fabs(d) <= static_cast<double>(kMaxExactDouble);
}

// Whether the `n` bytes at `a` and `b` are equal, for the short keys of JSON objects:
// two overlapping loads of 8 (or 4) bytes compare up to 16 bytes without a call (memcmp
// per key was 4.8% of a W4 drain's instructions).
inline bool SameBytes(const char* a, const char* b, size_t n) {
  if (n >= 8) {
    uint64_t x, y;
    std::memcpy(&x, a, 8);
    std::memcpy(&y, b, 8);
    if (x != y) return false;
    std::memcpy(&x, a + n - 8, 8);
    std::memcpy(&y, b + n - 8, 8);
    if (x != y) return false;
    return n <= 16 || std::memcmp(a + 8, b + 8, n - 16) == 0;
  }
  if (n >= 4) {
    uint32_t x, y;
    std::memcpy(&x, a, 4);
    std::memcpy(&y, b, 4);
    if (x != y) return false;
    std::memcpy(&x, a + n - 4, 4);
    std::memcpy(&y, b + n - 4, 4);
    return x == y;
  }
  for (size_t i = 0; i < n; ++i) {
    if (a[i] != b[i]) return false;
  }
  return true;
}

// Finds the property child of object op `o` named `key`, or -1. Keys usually come in
// schema order, so the search starts after the previous match.
inline int FindProperty(Program& p, uint32_t i, const Op& o, std::string_view key) {
  const uint32_t n = o.num_props;
  uint32_t k = p.hint[i];
  for (uint32_t tried = 0; tried < n; ++tried, ++k) {
    if (k >= n) k = 0;
    const std::string& name = p.names[o.first_child + k];
    if (name.size() == key.size() && SameBytes(name.data(), key.data(), key.size())) {
      p.hint[i] = k + 1;
      return static_cast<int>(k);
    }
  }
  return -1;
}

// ---------------------------------------------------------------------------------------
// The walk: checks each value of the parsed document, then (kAppend) appends it. Without
// kAppend it only checks (Validate, and the records after an invalid one).

template <bool kAppend>
class Walk {
 public:
  explicit Walk(Program* p) : p_(*p), ops_(p->ops.data()) {}

  bool Run(dom::element root) {
    if (root.type() != dom::element_type::OBJECT) {
      return Fail(0, std::string("expected object, got ") + ElementName(root.type()));
    }
    return Object(0, root.get_object().value_unsafe());
  }

  uint32_t error_op() const { return err_op_; }
  const std::string& error() const { return err_; }
  // Not OK when an append failed (memory, Arrow's limits) rather than the document.
  const Status& status() const { return st_; }

 private:
  bool Fail(uint32_t op, std::string what) {
    err_op_ = op;
    err_ = std::move(what);
    return false;
  }

  bool Expected(uint32_t i, dom::element e) {
    return Fail(i, std::string("expected ") + KindName(ops_[i].kind) + ", got " +
                       ElementName(e.type()));
  }

  static std::string Quote(std::string_view s) {
    if (s.size() > 40) return "\"" + std::string(s.substr(0, 40)) + "...\"";
    return "\"" + std::string(s) + "\"";
  }

  bool Ok(Status st) {
    if (ARROW_PREDICT_TRUE(st.ok())) return true;
    st_ = std::move(st);
    return false;
  }

  template <typename B>
  B* As(uint32_t i) const {
    return static_cast<B*>(p_.builders[i]);
  }

  // Appends `v` to op i's builder, of type B, if the op has one.
  template <typename B, typename V>
  bool Put(uint32_t i, const V& v) {
    if constexpr (!kAppend) {
      return true;
    } else {
      if (ops_[i].sink == Sink::kNone) return true;
      return internal::AppendOne(As<B>(i), v, &st_);
    }
  }

  bool PutString(uint32_t i, std::string_view s) {
    if constexpr (!kAppend) {
      return true;
    } else {
      if (ops_[i].sink == Sink::kNone) return true;
      return internal::AppendBinary(As<::arrow::BinaryBuilder>(i), s.data(),
                                    static_cast<int64_t>(s.size()), &st_);
    }
  }

  // A null for op i (a struct builder appends empty values to its fields itself).
  bool Null(uint32_t i) {
    if constexpr (!kAppend) {
      return true;
    } else {
      if (ops_[i].sink == Sink::kNone) return true;
      return Ok(p_.builders[i]->AppendNull());
    }
  }

  // Starts a struct, list or map value of op i (its children follow).
  template <typename B>
  bool Open(uint32_t i) {
    if constexpr (!kAppend) {
      return true;
    } else {
      if (ops_[i].sink == Sink::kNone) return true;
      return Ok(As<B>(i)->Append());
    }
  }

  bool Value(uint32_t i, dom::element e) {
    const Op& op = ops_[i];
    const dom::element_type t = e.type();
    if (t == dom::element_type::NULL_VALUE) {
      if (!op.nullable) return Expected(i, e);
      return Null(i);
    }
    switch (op.kind) {
      case Kind::kBoolean:
        if (t != dom::element_type::BOOL) return Expected(i, e);
        return Put<::arrow::BooleanBuilder>(i, e.get_bool().value_unsafe());
      case Kind::kInteger: {
        int64_t v;
        if (t == dom::element_type::INT64) {
          v = e.get_int64().value_unsafe();
        } else if (t == dom::element_type::UINT64) {
          return Fail(i, "integer " + std::to_string(e.get_uint64().value_unsafe()) +
                             " is outside the int64 range");
        } else if (t == dom::element_type::DOUBLE) {
          const double d = e.get_double().value_unsafe();
          if (!IntegralDouble(d)) {
            return Fail(i, std::trunc(d) == d
                               ? "integer " + std::to_string(d) +
                                     " written as a float is beyond 2^53 (not exact)"
                               : "expected integer, got number " + std::to_string(d));
          }
          v = static_cast<int64_t>(d);
        } else {
          return Expected(i, e);
        }
        return Put<::arrow::Int64Builder>(i, v);
      }
      case Kind::kNumber: {
        double d;
        if (t == dom::element_type::INT64) {
          d = static_cast<double>(e.get_int64().value_unsafe());
        } else if (t == dom::element_type::UINT64) {
          d = static_cast<double>(e.get_uint64().value_unsafe());
        } else if (t == dom::element_type::DOUBLE) {
          d = e.get_double().value_unsafe();
        } else {
          return Expected(i, e);
        }
        return Put<::arrow::DoubleBuilder>(i, d);
      }
      case Kind::kString:
      case Kind::kUuid:
      case Kind::kDate:
      case Kind::kDateTime:
      case Kind::kTime:
        if (t != dom::element_type::STRING) return Expected(i, e);
        return Text(i, e.get_string().value_unsafe());
      case Kind::kObject:
        if (t != dom::element_type::OBJECT) return Expected(i, e);
        return Open<::arrow::StructBuilder>(i) &&
               Object(i, e.get_object().value_unsafe());
      case Kind::kMap:
        if (t != dom::element_type::OBJECT) return Expected(i, e);
        return Open<::arrow::MapBuilder>(i) && Map(i, e.get_object().value_unsafe());
      case Kind::kArray: {
        if (t != dom::element_type::ARRAY) return Expected(i, e);
        if (!Open<::arrow::ListBuilder>(i)) return false;
        const uint32_t item = op.first_child;
        int64_t n = 0;
        const dom::array arr = e.get_array().value_unsafe();
        for (dom::element v : arr) {
          p_.index[item] = n++;
          if (!Value(item, v)) return false;
        }
        return true;
      }
      case Kind::kAbsent:
        return true;
    }
    return true;
  }

  // A string value of op i: plain text, or a uuid, date, date-time or time, parsed
  // strictly.
  bool Text(uint32_t i, std::string_view s) {
    int64_t v = 0;
    switch (ops_[i].kind) {
      case Kind::kUuid:
        if (!IsUuid(s)) return Fail(i, "expected a uuid string, got " + Quote(s));
        [[fallthrough]];
      case Kind::kString:
        return PutString(i, s);
      case Kind::kDate:
        if (!ParseDate(s, &v)) {
          return Fail(i, "expected an RFC 3339 date (YYYY-MM-DD), got " + Quote(s));
        }
        if (v < kMinDateDays) {
          return Fail(i, "date " + Quote(s) + " is outside 0001-01-01..9999-12-31");
        }
        return Put<::arrow::Date32Builder>(i, static_cast<int32_t>(v));
      case Kind::kDateTime:
        if (!ParseDateTime(s, &v)) {
          return Fail(i,
                      "expected an RFC 3339 date-time with offset (at most microsecond "
                      "precision), got " +
                          Quote(s));
        }
        if (v < kMinTimestampMicros || v > kMaxTimestampMicros) {
          return Fail(i, "date-time " + Quote(s) +
                             " is outside 0001-01-01T00:00:00Z.."
                             "9999-12-31T23:59:59.999999Z in UTC");
        }
        return Put<::arrow::TimestampBuilder>(i, v);
      case Kind::kTime:
        if (!ParseTime(s, &v)) {
          return Fail(i, "expected an RFC 3339 time (HH:MM:SS[.ffffff][offset]), got " +
                             Quote(s));
        }
        // The column holds a UTC time of day without a date: a time whose offset moves
        // it to another day in UTC is refused rather than wrapped, which would silently
        // put it a day away from the date it was sent with.
        if (v < 0 || v >= kMicrosPerDay) {
          return Fail(i, "time " + Quote(s) + " is on the " +
                             (v < 0 ? "previous" : "next") +
                             " day in UTC, which a time-of-day column cannot hold; "
                             "send UTC times or times without an offset");
        }
        return ops_[i].sink == Sink::kTime64 ? Put<::arrow::Time64Builder>(i, v)
                                             : Put<::arrow::Int64Builder>(i, v);
      default:
        return true;
    }
  }

  // The entries of map op i: each key, then its value; duplicate keys are refused.
  bool Map(uint32_t i, dom::object obj) {
    const uint32_t key = ops_[i].first_child;
    const uint32_t value = key + 1;
    auto& keys = p_.keys;
    keys.clear();
    for (dom::key_value_pair kv : obj) {
      keys.push_back(kv.key);
      p_.key[value] = kv.key;
      if (!PutString(key, kv.key) || !Value(value, kv.value)) return false;
    }
    if (keys.size() > 1) {
      std::sort(keys.begin(), keys.end());
      for (size_t k = 1; k < keys.size(); ++k) {
        if (keys[k] == keys[k - 1]) return Fail(i, "duplicate map key " + Quote(keys[k]));
      }
    }
    return true;
  }

  // The properties of object op i (the root's are the columns): each declared key's
  // value, then a null for every property not present (refused if required) and for
  // every table field the writer lacks. Keys the schema does not declare are ignored.
  bool Object(uint32_t i, dom::object obj) {
    const Op& op = ops_[i];
    uint8_t* seen = p_.seen.data() + op.first_slot;
    std::memset(seen, 0, op.num_props);
    p_.hint[i] = 0;
    for (dom::key_value_pair kv : obj) {
      const int k = FindProperty(p_, i, op, kv.key);
      if (k < 0) continue;  // not declared: ignored
      const uint32_t c = op.first_child + static_cast<uint32_t>(k);
      if (seen[k]) return Fail(c, "duplicate key");
      seen[k] = 1;
      if (!Value(c, kv.value)) return false;
    }
    for (uint32_t k = 0; k < op.num_props; ++k) {
      const uint32_t c = op.first_child + k;
      if (seen[k]) continue;
      if (ops_[c].required) return Fail(c, "required property is missing");
      if (!Null(c)) return false;
    }
    for (uint32_t c = op.first_child + op.num_props; c < op.first_child + op.num_children;
         ++c) {
      if (!Null(c)) return false;
    }
    return true;
  }

  Program& p_;
  const Op* ops_;
  uint32_t err_op_ = 0;
  std::string err_;
  Status st_;
};

// "$.a.b[3].c" for op i at the current position of the validation walk.
std::string RuntimePath(const Program& p, uint32_t i) {
  std::vector<std::string> segs;
  while (i != 0) {
    const Op& parent = p.ops[p.ops[i].parent];
    switch (parent.kind) {
      case Kind::kArray:
        segs.push_back("[" + std::to_string(p.index[i]) + "]");
        break;
      case Kind::kMap:
        segs.push_back(i == parent.first_child
                           ? std::string()
                           : "." + std::string(p.key[i].substr(0, 64)));
        break;
      default:
        segs.push_back("." + p.names[i]);
        break;
    }
    i = p.ops[i].parent;
  }
  std::string out = "$";
  for (auto it = segs.rbegin(); it != segs.rend(); ++it) out += *it;
  return out;
}

// Copies `data` into the program's padded buffer (simdjson reads past the end).
const uint8_t* CopyPadded(Program& p, const uint8_t* data, size_t size) {
  if (!p.padded || size > p.padded_capacity) {  // a fresh decoder has no buffer yet
    const size_t cap = std::max(size, 2 * p.padded_capacity);
    p.padded.reset(new uint8_t[cap + JsonDecoder::kPadding]);
    p.padded_capacity = cap;
  }
  if (size > 0) std::memcpy(p.padded.get(), data, size);
  std::memset(p.padded.get() + size, 0, JsonDecoder::kPadding);
  return p.padded.get();
}

Status Parse(Program& p, const uint8_t* data, size_t size, dom::element* root,
             bool rewritten = false);

// After simdjson's NUMBER_ERROR: explains a number beyond its range (NumberScan), or
// parses a copy with such numbers rewritten. `error` is simdjson's own, kept when the
// scan finds nothing to explain.
Status NumberError(Program& p, const uint8_t* data, size_t size, dom::element* root,
                   Status error) {
  NumberScan scan(p, std::string_view(reinterpret_cast<const char*>(data), size));
  if (!scan.Run()) return error;
  if (!scan.error().empty()) {
    return InvalidRecord("JSON at " + scan.error_path() + ": " + scan.error());
  }
  if (scan.fixes().empty()) return error;
  auto& out = p.rewritten;
  out.clear();
  size_t at = 0;
  for (const auto& fix : scan.fixes()) {
    if (fix.append_fraction) {
      out.insert(out.end(), data + at, data + fix.end);
      out.push_back('.');
      out.push_back('0');
    } else {
      out.insert(out.end(), data + at, data + fix.begin);
      out.push_back('0');
    }
    at = fix.end;
  }
  out.insert(out.end(), data + at, data + size);
  const size_t rewritten_size = out.size();
  out.resize(rewritten_size + JsonDecoder::kPadding, 0);
  return Parse(p, out.data(), rewritten_size, root, /*rewritten=*/true);
}

// Parses the padded document (simdjson checks the grammar, UTF-8 and the depth).
Status Parse(Program& p, const uint8_t* data, size_t size, dom::element* root,
             bool rewritten) {
  if (size > p.parser.capacity()) {
    // Grow geometrically so that slowly growing records do not reallocate every time.
    const size_t cap = std::max(size, 2 * p.parser.capacity());
    if (cap > p.parser.max_capacity() ||
        p.parser.allocate(cap, kMaxJsonDocumentDepth) != ::simdjson::SUCCESS) {
      if (size > p.parser.max_capacity()) {
        return InvalidRecord("JSON record of " + std::to_string(size) +
                             " bytes is too large");
      }
      return Status::OutOfMemory("JsonDecoder: cannot grow the JSON parser to ", cap,
                                 " bytes");
    }
  }
  static const uint8_t kEmpty[::simdjson::SIMDJSON_PADDING + 1] = {};
  if (data == nullptr) data = kEmpty;
  const auto error = p.parser.parse(data, size, /*realloc_if_needed=*/false).get(*root);
  if (error != ::simdjson::SUCCESS) {
    if (error == ::simdjson::DEPTH_ERROR) {
      return InvalidRecord("JSON record is nested deeper than " +
                           std::to_string(kMaxJsonDocumentDepth) + " levels");
    }
    if (error == ::simdjson::MEMALLOC) {
      return Status::OutOfMemory("JsonDecoder: ", ::simdjson::error_message(error));
    }
    Status st = InvalidRecord(std::string("JSON record is not valid JSON: ") +
                              ::simdjson::error_message(error));
    if (error == ::simdjson::NUMBER_ERROR && !rewritten) {
      return NumberError(p, data, size, root, std::move(st));
    }
    return st;
  }
  return Status::OK();
}

template <bool kAppend>
Status WalkError(const Program& p, const Walk<kAppend>& w) {
  return InvalidRecord("JSON at " + RuntimePath(p, w.error_op()) + ": " + w.error());
}

// Checks the parsed document against the schema; appends nothing.
Status Check(Program& p, dom::element root) {
  Walk<false> w(&p);
  return w.Run(root) ? Status::OK() : WalkError(p, w);
}

}  // namespace

// CompiledDecoder's per-format functions (compiled_decoder_internal.h; CompileProgram is
// in json_compiler.cc), and the body of JsonDecoder::DecodePadded.
namespace internal {

Status ValidateRecord(JsonProgram& p, const uint8_t* data, size_t size) {
  dom::element root;
  FLOE_RETURN_NOT_OK(Parse(p, CopyPadded(p, data, size), size, &root));
  return Check(p, root);
}

Status DecodePaddedRecord(JsonProgram& p, const uint8_t* data, size_t size,
                          ::arrow::ArrayBuilder* const* cols) {
  FLOE_RETURN_NOT_OK(p.Bind("JsonDecoder", cols));
  dom::element root;
  FLOE_RETURN_NOT_OK(Parse(p, data, size, &root));
  if (p.Guarded()) FLOE_RETURN_NOT_OK(Check(p, root));
  Walk<true> w(&p);
  return p.AppendOrRollback(
      "JSON decoder", cols, [&] { return w.Run(root); },
      [&] { return w.status().ok() ? WalkError(p, w) : w.status(); });
}

[[gnu::always_inline]] inline Status DecodeRecord(JsonProgram& p, const uint8_t* data,
                                                  size_t size,
                                                  ::arrow::ArrayBuilder* const* cols) {
  return DecodePaddedRecord(p, CopyPadded(p, data, size), size, cols);
}

}  // namespace internal

Status JsonDecoder::DecodePadded(const uint8_t* data, size_t size,
                                 ::arrow::ArrayBuilder* const* columns) {
  return internal::DecodePaddedRecord(program(), data, size, columns);
}

template class CompiledDecoder<JsonDecoder, schema::JsonSchema, JsonDecoderOptions,
                               internal::JsonProgram>;

}  // namespace floe::decode
