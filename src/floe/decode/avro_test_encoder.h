// Test-only Avro binary encoder (Avro specification 1.11, "Binary Encoding"), written
// from the spec to produce decoder inputs, including deliberately malformed ones.
#pragma once

#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

namespace floe::decode::testing {

// GCC/Clang 128-bit integer; __extension__ keeps -Wpedantic quiet.
__extension__ typedef __int128 Int128;

class AvroEncoder {
 public:
  AvroEncoder& Null() { return *this; }
  AvroEncoder& Boolean(bool b) {
    out_.push_back(b ? '\1' : '\0');
    return *this;
  }
  AvroEncoder& Byte(uint8_t b) {
    out_.push_back(static_cast<char>(b));
    return *this;
  }
  // Zig-zag varint (int and long share it).
  AvroEncoder& Long(int64_t v) {
    uint64_t z = (static_cast<uint64_t>(v) << 1) ^ static_cast<uint64_t>(v >> 63);
    return RawVarint(z);
  }
  AvroEncoder& Int(int32_t v) { return Long(v); }
  AvroEncoder& RawVarint(uint64_t z) {
    while (z >= 0x80) {
      out_.push_back(static_cast<char>((z & 0x7f) | 0x80));
      z >>= 7;
    }
    out_.push_back(static_cast<char>(z));
    return *this;
  }
  AvroEncoder& Float(float f) {
    char b[4];
    std::memcpy(b, &f, 4);
    out_.append(b, 4);
    return *this;
  }
  AvroEncoder& Double(double d) {
    char b[8];
    std::memcpy(b, &d, 8);
    out_.append(b, 8);
    return *this;
  }
  AvroEncoder& Bytes(std::string_view s) {
    Long(static_cast<int64_t>(s.size()));
    out_.append(s);
    return *this;
  }
  AvroEncoder& String(std::string_view s) { return Bytes(s); }
  AvroEncoder& Fixed(std::string_view s) {
    out_.append(s);
    return *this;
  }
  AvroEncoder& Enum(int32_t index) { return Int(index); }
  AvroEncoder& Union(int64_t index) { return Long(index); }
  // Starts a block of `count` items (arrays and maps); End() writes the terminating 0.
  AvroEncoder& Block(int64_t count) { return Long(count); }
  AvroEncoder& End() { return Long(0); }
  AvroEncoder& Raw(std::string_view s) {
    out_.append(s);
    return *this;
  }

  // Two's complement big-endian, minimal length (like Java's BigInteger.toByteArray).
  static std::string DecimalBytes(Int128 v) {
    std::string be;
    for (int i = 0; i < 16; ++i)
      be.insert(be.begin(), static_cast<char>((v >> (8 * i)) & 0xff));
    size_t start = 0;
    while (start + 1 < be.size()) {
      const auto b0 = static_cast<uint8_t>(be[start]);
      const auto b1 = static_cast<uint8_t>(be[start + 1]);
      if ((b0 == 0x00 && (b1 & 0x80) == 0) || (b0 == 0xff && (b1 & 0x80) != 0)) {
        ++start;
      } else {
        break;
      }
    }
    return be.substr(start);
  }
  // Sign-extended to exactly `size` bytes (for decimals on fixed).
  static std::string DecimalFixed(Int128 v, size_t size) {
    std::string min = DecimalBytes(v);
    char fill = v < 0 ? '\xff' : '\0';
    return std::string(size - min.size(), fill) + min;
  }

  const std::string& str() const { return out_; }
  const uint8_t* data() const { return reinterpret_cast<const uint8_t*>(out_.data()); }
  size_t size() const { return out_.size(); }

 private:
  std::string out_;
};

// A realistic ~300-byte order event, used by the allocation test and the benchmark.
inline const char* SampleSchemaJson() {
  return R"({"type": "record", "name": "Order", "namespace": "bench", "fields": [
    {"name": "id", "type": "long"},
    {"name": "ts", "type": {"type": "long", "logicalType": "timestamp-millis"}},
    {"name": "customer", "type": "string"},
    {"name": "email", "type": ["null", "string"]},
    {"name": "amount", "type": {"type": "bytes", "logicalType": "decimal",
                                "precision": 12, "scale": 2}},
    {"name": "currency", "type": {"type": "enum", "name": "Currency",
                                  "symbols": ["EUR", "USD", "GBP"]}},
    {"name": "ref", "type": {"type": "string", "logicalType": "uuid"}},
    {"name": "score", "type": "double"},
    {"name": "gift", "type": "boolean"},
    {"name": "tags", "type": {"type": "array", "items": "string"}},
    {"name": "attrs", "type": {"type": "map", "values": ["null", "string"]}},
    {"name": "address", "type": {"type": "record", "name": "Address", "fields": [
      {"name": "street", "type": "string"}, {"name": "city", "type": "string"},
      {"name": "zip", "type": ["null", "string"]}]}},
    {"name": "lines", "type": {"type": "array", "items": {"type": "record", "name": "Line",
      "fields": [{"name": "sku", "type": "string"}, {"name": "qty", "type": "int"},
                 {"name": "price", "type": "float"}]}}},
    {"name": "note", "type": ["null", "string"]}
  ]})";
}

inline void EncodeSampleRecord(int64_t i, AvroEncoder* e) {
  e->Long(1000000 + i)
      .Long(1700000000000 + i * 17)
      .String("customer-" + std::to_string(i % 997))
      .Union(i % 5 == 0 ? 0 : 1);
  if (i % 5 != 0) e->String("someone" + std::to_string(i % 101) + "@example.com");
  e->Bytes(AvroEncoder::DecimalBytes(12345 + i % 100000))
      .Enum(static_cast<int32_t>(i % 3))
      .String("123e4567-e89b-12d3-a456-426614174000")
      .Double(0.5 * static_cast<double>(i % 1000))
      .Boolean(i % 2 == 0)
      .Block(3)
      .String("priority")
      .String("web")
      .String("returning-customer")
      .End()
      .Block(2)
      .String("campaign")
      .Union(1)
      .String("spring-sale-2024")
      .String("referrer")
      .Union(0)
      .End()
      .String("221B Baker Street")
      .String("London")
      .Union(1)
      .String("NW1 6XE")
      .Block(2)
      .String("SKU-" + std::to_string(i % 1000))
      .Int(1 + static_cast<int32_t>(i % 3))
      .Float(9.99f)
      .String("SKU-" + std::to_string((i + 7) % 1000))
      .Int(2)
      .Float(24.5f)
      .End()
      .Union(1)
      .String(
          "Please leave the parcel with the neighbour if nobody is home; ring twice.");
}

}  // namespace floe::decode::testing
