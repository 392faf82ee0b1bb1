#include "floe/parquet/bounds.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

namespace floe::parquet {
namespace {

using iceberg::TypeId;

std::string Bytes(std::initializer_list<int> v) {
  std::string s;
  for (int b : v) s.push_back(static_cast<char>(b));
  return s;
}

TEST(BoundsEncodingTest, FixedWidthLittleEndian) {
  EXPECT_EQ(EncodeBoolean(false), Bytes({0x00}));
  EXPECT_EQ(EncodeBoolean(true), Bytes({0x01}));
  EXPECT_EQ(EncodeInt(1), Bytes({0x01, 0, 0, 0}));
  EXPECT_EQ(EncodeInt(-2), Bytes({0xfe, 0xff, 0xff, 0xff}));
  EXPECT_EQ(EncodeInt(0x12345678), Bytes({0x78, 0x56, 0x34, 0x12}));
  EXPECT_EQ(EncodeLong(1), Bytes({1, 0, 0, 0, 0, 0, 0, 0}));
  EXPECT_EQ(EncodeLong(std::numeric_limits<int64_t>::min()),
            Bytes({0, 0, 0, 0, 0, 0, 0, 0x80}));
  // 2017-11-16T22:31:08.000001 UTC in micros.
  EXPECT_EQ(EncodeLong(1510871468000001),
            Bytes({0x01, 0xc3, 0x26, 0x2d, 0x21, 0x5e, 0x05, 0x00}));
}

TEST(BoundsEncodingTest, FloatingPoint) {
  EXPECT_EQ(EncodeFloat(1.0f), Bytes({0x00, 0x00, 0x80, 0x3f}));
  EXPECT_EQ(EncodeFloat(-0.0f), Bytes({0x00, 0x00, 0x00, 0x80}));
  EXPECT_EQ(EncodeDouble(1.0), Bytes({0, 0, 0, 0, 0, 0, 0xf0, 0x3f}));
  EXPECT_EQ(EncodeDouble(-2.5), Bytes({0, 0, 0, 0, 0, 0, 0x04, 0xc0}));
  EXPECT_EQ(EncodeDouble(-0.0), Bytes({0, 0, 0, 0, 0, 0, 0, 0x80}));
}

TEST(BoundsEncodingTest, DecimalMinimalTwosComplementBigEndian) {
  EXPECT_EQ(EncodeDecimal(0), Bytes({0x00}));
  EXPECT_EQ(EncodeDecimal(1), Bytes({0x01}));
  EXPECT_EQ(EncodeDecimal(127), Bytes({0x7f}));
  EXPECT_EQ(EncodeDecimal(128), Bytes({0x00, 0x80}));
  EXPECT_EQ(EncodeDecimal(-1), Bytes({0xff}));
  EXPECT_EQ(EncodeDecimal(-128), Bytes({0x80}));
  EXPECT_EQ(EncodeDecimal(-129), Bytes({0xff, 0x7f}));
  EXPECT_EQ(EncodeDecimal(1234), Bytes({0x04, 0xd2}));  // 12.34 as decimal(4,2)
  EXPECT_EQ(EncodeDecimal(std::numeric_limits<int64_t>::min()),
            Bytes({0x80, 0, 0, 0, 0, 0, 0, 0}));
  // From a 16-byte FIXED_LEN_BYTE_ARRAY.
  std::string minus_two(15, '\xff');
  minus_two.push_back('\xfe');
  EXPECT_EQ(MinimalTwosComplement(minus_two), Bytes({0xfe}));
  std::string big(16, '\0');
  big[7] = '\x01';  // 2^64
  EXPECT_EQ(MinimalTwosComplement(big), Bytes({0x01, 0, 0, 0, 0, 0, 0, 0, 0}));
}

TEST(BoundsCompareTest, TypedOrder) {
  EXPECT_LT(CompareBounds(TypeId::kInt, EncodeInt(-1), EncodeInt(1)), 0);
  EXPECT_GT(CompareBounds(TypeId::kLong, EncodeLong(1LL << 40), EncodeLong(-5)), 0);
  EXPECT_LT(CompareBounds(TypeId::kDouble, EncodeDouble(-0.0), EncodeDouble(0.0)), 0);
  EXPECT_EQ(CompareBounds(TypeId::kDouble, EncodeDouble(0.0), EncodeDouble(0.0)), 0);
  EXPECT_LT(CompareBounds(TypeId::kFloat, EncodeFloat(-1e30f), EncodeFloat(-0.0f)), 0);
  EXPECT_LT(CompareBounds(TypeId::kDecimal, EncodeDecimal(-129), EncodeDecimal(-1)), 0);
  EXPECT_LT(CompareBounds(TypeId::kDecimal, EncodeDecimal(-1), EncodeDecimal(0)), 0);
  EXPECT_GT(CompareBounds(TypeId::kDecimal, EncodeDecimal(128), EncodeDecimal(127)), 0);
  EXPECT_LT(CompareBounds(TypeId::kString, "a", "\xc3\xa9"), 0);  // bytes are unsigned
  EXPECT_LT(CompareBounds(TypeId::kBinary, "ab", "abc"), 0);
  EXPECT_LT(CompareBounds(TypeId::kBoolean, EncodeBoolean(false), EncodeBoolean(true)),
            0);
}

TEST(BoundsTruncateTest, StringLowerCountsCodePoints) {
  EXPECT_EQ(TruncateStringLower("short"), "short");
  EXPECT_EQ(TruncateStringLower("abcdefghijklmnopqrstuvwxyz"), "abcdefghijklmnop");
  // 20 x U+00E9 (2 bytes each): 16 code points = 32 bytes.
  std::string e;
  for (int i = 0; i < 20; ++i) e += "\xc3\xa9";
  EXPECT_EQ(TruncateStringLower(e), e.substr(0, 32));
  EXPECT_EQ(TruncateStringLower("abc", 2), "ab");
}

TEST(BoundsTruncateTest, StringUpperIncrementsLastCodePoint) {
  EXPECT_EQ(TruncateStringUpper("abcdefghijklmnop"), "abcdefghijklmnop");  // exactly 16
  EXPECT_EQ(TruncateStringUpper("abcdefghijklmnopq"), "abcdefghijklmnoq");
  EXPECT_EQ(TruncateStringUpper("abc", 2), "ac");
  // U+00FF -> U+0100 changes the encoded length.
  EXPECT_EQ(TruncateStringUpper("a\xc3\xbfz", 2), "a\xc4\x80");
  // U+D7FF + 1 would be a surrogate: skip to U+E000.
  EXPECT_EQ(TruncateStringUpper("a\xed\x9f\xbfz", 2), "a\xee\x80\x80");
  // U+10FFFF cannot be incremented: drop it and increment the code point before it.
  EXPECT_EQ(TruncateStringUpper("a\xf4\x8f\xbf\xbfz", 2), "b");
  // 4-byte code points: U+1F600 -> U+1F601.
  EXPECT_EQ(TruncateStringUpper("\xf0\x9f\x98\x80\xf0\x9f\x98\x80x", 2),
            "\xf0\x9f\x98\x80\xf0\x9f\x98\x81");
  // Nothing can be incremented: no upper bound.
  EXPECT_EQ(TruncateStringUpper("\xf4\x8f\xbf\xbf\xf4\x8f\xbf\xbfz", 2), std::nullopt);
}

TEST(BoundsTruncateTest, InvalidUtf8FallsBackToBytes) {
  std::string bad = "\xff\xfe" + std::string(20, 'a');
  EXPECT_EQ(TruncateStringLower(bad), bad.substr(0, 16));
  EXPECT_EQ(TruncateStringUpper(bad), bad.substr(0, 15) + "b");
}

TEST(BoundsTruncateTest, Binary) {
  std::string v = Bytes({1, 2, 3});
  EXPECT_EQ(TruncateBinaryLower(v), v);
  EXPECT_EQ(TruncateBinaryUpper(v), v);
  std::string long_v(20, '\x10');
  EXPECT_EQ(TruncateBinaryLower(long_v), std::string(16, '\x10'));
  EXPECT_EQ(TruncateBinaryUpper(long_v), std::string(15, '\x10') + "\x11");
  EXPECT_EQ(TruncateBinaryUpper(Bytes({0x01, 0xff, 0xff, 0x05}), 3), Bytes({0x02}));
  EXPECT_EQ(TruncateBinaryUpper(std::string(17, '\xff')), std::nullopt);
  EXPECT_EQ(TruncateBinaryUpper(std::string(16, '\xff')), std::string(16, '\xff'));
}

}  // namespace
}  // namespace floe::parquet
