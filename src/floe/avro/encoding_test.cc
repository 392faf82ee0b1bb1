#include "floe/avro/encoding.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>
#include <string_view>

namespace floe::avro {
namespace {

// As Arrow's testing macro: the value of a Result, or the test stops.
#define FLOE_AVRO_CONCAT_INNER(a, b) a##b
#define FLOE_AVRO_CONCAT(a, b) FLOE_AVRO_CONCAT_INNER(a, b)
#define ASSERT_OK_AND_ASSIGN(lhs, rexpr)                          \
  auto FLOE_AVRO_CONCAT(result_, __LINE__) = (rexpr);             \
  ASSERT_TRUE(FLOE_AVRO_CONCAT(result_, __LINE__).ok())           \
      << FLOE_AVRO_CONCAT(result_, __LINE__).status().ToString(); \
  lhs = std::move(FLOE_AVRO_CONCAT(result_, __LINE__)).ValueOrDie()

std::string Hex(const std::string& s) {
  static const char* d = "0123456789abcdef";
  std::string out;
  for (unsigned char c : s) {
    out.push_back(d[c >> 4]);
    out.push_back(d[c & 15]);
  }
  return out;
}

TEST(AvroEncoding, ZigZagVarintsMatchTheSpec) {
  // Avro spec "Binary Encoding" examples.
  struct Case {
    int64_t v;
    const char* hex;
  };
  for (auto c : {Case{0, "00"}, Case{-1, "01"}, Case{1, "02"}, Case{-2, "03"},
                 Case{2, "04"}, Case{-64, "7f"}, Case{64, "8001"}}) {
    Encoder e;
    e.WriteLong(c.v);
    EXPECT_EQ(Hex(e.buffer()), c.hex) << c.v;
  }
  Encoder e;
  e.WriteString("foo");
  EXPECT_EQ(Hex(e.buffer()), "06666f6f");
}

TEST(AvroEncoding, PrimitivesRoundTrip) {
  const int64_t longs[] = {0,
                           1,
                           -1,
                           63,
                           -64,
                           1 << 20,
                           -(1LL << 40),
                           std::numeric_limits<int64_t>::max(),
                           std::numeric_limits<int64_t>::min()};
  Encoder e;
  for (int64_t v : longs) e.WriteLong(v);
  e.WriteInt(std::numeric_limits<int32_t>::min());
  e.WriteInt(std::numeric_limits<int32_t>::max());
  e.WriteFloat(1.5f);
  e.WriteDouble(-0.0);
  e.WriteDouble(std::numeric_limits<double>::quiet_NaN());
  e.WriteBoolean(true);
  e.WriteBytes(std::string("\0\1\2", 3));
  e.WriteFixed("abcd");
  Decoder d(e.buffer());
  for (int64_t v : longs) {
    ASSERT_OK_AND_ASSIGN(int64_t got, d.ReadLong());
    EXPECT_EQ(got, v);
  }
  ASSERT_OK_AND_ASSIGN(int32_t i1, d.ReadInt());
  EXPECT_EQ(i1, std::numeric_limits<int32_t>::min());
  ASSERT_OK_AND_ASSIGN(int32_t i2, d.ReadInt());
  EXPECT_EQ(i2, std::numeric_limits<int32_t>::max());
  ASSERT_OK_AND_ASSIGN(float f, d.ReadFloat());
  EXPECT_EQ(f, 1.5f);
  ASSERT_OK_AND_ASSIGN(double z, d.ReadDouble());
  EXPECT_TRUE(z == 0.0 && std::signbit(z));
  ASSERT_OK_AND_ASSIGN(double nan, d.ReadDouble());
  EXPECT_TRUE(std::isnan(nan));
  ASSERT_OK_AND_ASSIGN(bool b, d.ReadBoolean());
  EXPECT_TRUE(b);
  ASSERT_OK_AND_ASSIGN(auto bytes, d.ReadBytes());
  EXPECT_EQ(bytes, std::string_view("\0\1\2", 3));
  ASSERT_OK_AND_ASSIGN(auto fixed, d.ReadFixed(4));
  EXPECT_EQ(fixed, "abcd");
  EXPECT_EQ(d.remaining(), 0u);
  EXPECT_FALSE(d.ReadLong().ok());
}

TEST(AvroEncoding, DecoderRejectsMalformedScalars) {
  EXPECT_FALSE(Decoder(std::string(11, '\x80')).ReadLong().ok());  // too long
  EXPECT_FALSE(Decoder(std::string("\xff\xff\xff\xff\xff\xff\xff\xff\xff\x7f", 10))
                   .ReadLong()
                   .ok());
  EXPECT_FALSE(
      Decoder(std::string("\x80\x80\x80\x80\x20", 5)).ReadInt().ok());  // > int32
  EXPECT_FALSE(Decoder(std::string("\x05", 1)).ReadBoolean().ok());
  EXPECT_FALSE(Decoder(std::string("\x01", 1)).ReadBytes().ok());  // negative length
  EXPECT_FALSE(Decoder(std::string("\x0a"
                                   "ab",
                                   3))
                   .ReadBytes()
                   .ok());  // 5 > 2 left
  EXPECT_FALSE(Decoder(std::string("abc", 3)).ReadDouble().ok());
  EXPECT_FALSE(Decoder(std::string("abc", 3)).ReadFixed(4).ok());
}

TEST(AvroEncoding, ZigZagIsConstexpr) {
  static_assert(ZigZagEncode(0) == 0 && ZigZagEncode(-1) == 1 && ZigZagEncode(1) == 2);
  static_assert(ZigZagDecode(3) == -2 && ZigZagDecode(4) == 2);
  static_assert(ZigZagDecode(ZigZagEncode(std::numeric_limits<int64_t>::min())) ==
                std::numeric_limits<int64_t>::min());
  static_assert(ZigZagEncode(std::numeric_limits<int64_t>::max()) ==
                std::numeric_limits<uint64_t>::max() - 1);
}

TEST(AvroEncoding, MalformedInputIsInvalidInput) {
  auto r = Decoder(std::string("\x80", 1)).ReadLong();
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(KindOf(r.status()), ErrorKind::kInvalidInput);
  EXPECT_EQ(r.status().message(), "avro: truncated varint at byte 1");
}

}  // namespace
}  // namespace floe::avro
