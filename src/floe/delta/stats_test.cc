#include "floe/delta/stats.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <nlohmann/json.hpp>

namespace floe::delta {
namespace {

using iceberg::NestedField;
using iceberg::Schema;
using iceberg::Type;
using iceberg::TypeId;
using Json = ::nlohmann::json;

// Appendix D encodings, written out here so the test does not depend on floe/parquet.
template <typename T>
std::string Le(T v) {
  std::string out(sizeof(T), '\0');
  std::memcpy(out.data(), &v, sizeof(T));  // x86-64 / aarch64 are little-endian
  return out;
}

std::string Bytes(std::initializer_list<int> bytes) {
  std::string out;
  for (int b : bytes) out.push_back(static_cast<char>(b));
  return out;
}

std::optional<std::string> B(TypeId id, const std::string& bound, bool upper = false) {
  return BoundToStatsJson(*Type::Primitive(id), bound, upper);
}

TEST(DeltaStatsTest, IntegersBooleansTime) {
  EXPECT_EQ(B(TypeId::kBoolean, Bytes({1})), "true");
  EXPECT_EQ(B(TypeId::kBoolean, Bytes({0})), "false");
  EXPECT_EQ(B(TypeId::kInt, Le<int32_t>(-42)), "-42");
  EXPECT_EQ(B(TypeId::kInt, Le<int32_t>(std::numeric_limits<int32_t>::min())),
            "-2147483648");
  EXPECT_EQ(B(TypeId::kLong, Le<int64_t>(std::numeric_limits<int64_t>::max())),
            "9223372036854775807");
  EXPECT_EQ(B(TypeId::kTime, Le<int64_t>(3'600'000'000)), "3600000000");
  // Wrong widths are not trusted.
  EXPECT_EQ(B(TypeId::kInt, Le<int64_t>(1)), std::nullopt);
  EXPECT_EQ(B(TypeId::kTime, Le<int32_t>(1)), std::nullopt);
  EXPECT_EQ(B(TypeId::kLong, Bytes({1, 2})), std::nullopt);
  // A file written before int -> long keeps 4-byte bounds; they are the same numbers
  // (Iceberg Java's Conversions reads them so too).
  EXPECT_EQ(B(TypeId::kLong, Le<int32_t>(-7)), "-7");
}

TEST(DeltaStatsTest, FloatingPoint) {
  EXPECT_EQ(B(TypeId::kDouble, Le<double>(1.5)), "1.5");
  EXPECT_EQ(B(TypeId::kDouble, Le<double>(-2.0)), "-2");
  EXPECT_EQ(B(TypeId::kDouble, Le<double>(1e300)), "1e+300");
  EXPECT_EQ(B(TypeId::kDouble, Le<double>(-0.0)), "-0");
  // A float is written as its exact value: parsing it as float or double gives it back.
  auto f = B(TypeId::kFloat, Le<float>(1.1f));
  ASSERT_TRUE(f);
  EXPECT_EQ(static_cast<float>(std::stod(*f)), 1.1f);
  EXPECT_EQ(std::stod(*f), static_cast<double>(1.1f));
  EXPECT_EQ(B(TypeId::kDouble, Le<double>(std::nan(""))), std::nullopt);
  // A file written before float -> double: a 4-byte bound is the float's exact value.
  auto widened = B(TypeId::kDouble, Le<float>(1.1f));
  ASSERT_TRUE(widened);
  EXPECT_EQ(std::stod(*widened), static_cast<double>(1.1f));
  EXPECT_EQ(B(TypeId::kFloat, Le<float>(std::numeric_limits<float>::infinity())),
            std::nullopt);
}

TEST(DeltaStatsTest, Decimals) {
  auto dec = [](int p, int s, const std::string& be) {
    return BoundToStatsJson(*Type::Decimal(p, s), be, false);
  };
  EXPECT_EQ(dec(10, 2, Bytes({0x30, 0x39})), "123.45");   // 12345
  EXPECT_EQ(dec(10, 2, Bytes({0xcf, 0xc7})), "-123.45");  // -12345
  EXPECT_EQ(dec(5, 3, Bytes({0x05})), "0.005");
  EXPECT_EQ(dec(5, 3, Bytes({0xfb})), "-0.005");
  EXPECT_EQ(dec(5, 0, Bytes({0x00})), "0");
  EXPECT_EQ(dec(5, 2, Bytes({0x00})), "0.00");
  EXPECT_EQ(dec(9, 0, Bytes({0x00, 0x80})), "128");
  EXPECT_EQ(dec(9, 0, Bytes({0xff, 0x7f})), "-129");
  // 38 nines: 0x4b3b4ca85a86c47a098a223fffffffff
  EXPECT_EQ(dec(38, 10,
                Bytes({0x4b, 0x3b, 0x4c, 0xa8, 0x5a, 0x86, 0xc4, 0x7a, 0x09, 0x8a, 0x22,
                       0x3f, 0xff, 0xff, 0xff, 0xff})),
            "9999999999999999999999999999.9999999999");
  // The most negative 128-bit value does not fit decimal(38): not a bound we trust.
  EXPECT_EQ(dec(38, 0, Bytes({0x80, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0})),
            std::nullopt);
  // -1 with scale 2
  EXPECT_EQ(dec(4, 2, Bytes({0xff})), "-0.01");
}

TEST(DeltaStatsTest, DatesAndTimestamps) {
  EXPECT_EQ(B(TypeId::kDate, Le<int32_t>(0)), "\"1970-01-01\"");
  EXPECT_EQ(B(TypeId::kDate, Le<int32_t>(19724)), "\"2024-01-02\"");
  EXPECT_EQ(B(TypeId::kDate, Le<int32_t>(-1)), "\"1969-12-31\"");
  EXPECT_EQ(B(TypeId::kDate, Le<int32_t>(11016)), "\"2000-02-29\"");
  EXPECT_EQ(B(TypeId::kDate, Le<int32_t>(-719162)), "\"0001-01-01\"");
  EXPECT_EQ(B(TypeId::kDate, Le<int32_t>(-719163)), std::nullopt);  // year 0
  EXPECT_EQ(B(TypeId::kDate, Le<int32_t>(2932896)), "\"9999-12-31\"");
  EXPECT_EQ(B(TypeId::kDate, Le<int32_t>(2932897)), std::nullopt);  // year 10000

  const int64_t t =
      int64_t{1704164645} * 1'000'000 + 123456;  // 2024-01-02T03:04:05.123456
  EXPECT_EQ(B(TypeId::kTimestampTz, Le<int64_t>(t)), "\"2024-01-02T03:04:05.123456Z\"");
  EXPECT_EQ(B(TypeId::kTimestamp, Le<int64_t>(t)), "\"2024-01-02T03:04:05.123456\"");
  EXPECT_EQ(B(TypeId::kTimestampTz, Le<int64_t>(-1)), "\"1969-12-31T23:59:59.999999Z\"");
  EXPECT_EQ(B(TypeId::kTimestampTz, Le<int64_t>(0)), "\"1970-01-01T00:00:00.000000Z\"");
  EXPECT_EQ(B(TypeId::kTimestampTz, Le<int64_t>(std::numeric_limits<int64_t>::max())),
            std::nullopt);  // year 294247
}

TEST(DeltaStatsTest, StringsAndTruncation) {
  EXPECT_EQ(B(TypeId::kString, "abc"), "\"abc\"");
  EXPECT_EQ(B(TypeId::kString, "abc", true), "\"abc\"");
  EXPECT_EQ(B(TypeId::kString, "q\"\\\n\x01"), R"("q\"\\\n\u0001")");
  EXPECT_EQ(B(TypeId::kString, "\xc3\xa9t\xc3\xa9"), "\"\xc3\xa9t\xc3\xa9\"");
  // Floe's writer truncates bounds to 16 code points: a 16-code-point lower bound is a
  // prefix (still <= every value), a 16-code-point upper bound may be incremented.
  const std::string sixteen = "0123456789abcde\xc3\xa9";  // 16 code points, 17 bytes
  EXPECT_EQ(B(TypeId::kString, sixteen), "\"" + sixteen + "\"");
  EXPECT_EQ(B(TypeId::kString, sixteen, true), std::nullopt);
  EXPECT_EQ(B(TypeId::kString, sixteen.substr(0, 15), true),
            "\"" + sixteen.substr(0, 15) + "\"");
  StatsOptions longer;
  longer.string_truncate_length = 32;
  EXPECT_TRUE(BoundToStatsJson(*Type::Primitive(TypeId::kString), sixteen, true, longer));
  EXPECT_EQ(B(TypeId::kString, "\xff"), std::nullopt);  // not UTF-8
}

TEST(DeltaStatsTest, BinaryLikeBoundsAreOmitted) {
  EXPECT_EQ(B(TypeId::kBinary, "ab"), std::nullopt);
  EXPECT_EQ(BoundToStatsJson(*Type::Fixed(2), "ab", false), std::nullopt);
  EXPECT_EQ(B(TypeId::kUuid, std::string(16, '\x01')), std::nullopt);
}

NestedField F(int id, std::string name, iceberg::TypePtr type, bool required = false) {
  return NestedField{id, std::move(name), required, std::move(type), ""};
}

TEST(DeltaStatsTest, FileStatsNestedByPhysicalName) {
  Schema s;
  s.fields = {
      F(1, "id", Type::Primitive(TypeId::kLong), true),
      F(2, "name", Type::Primitive(TypeId::kString)),
      F(3, "price", Type::Primitive(TypeId::kDouble)),
      F(4, "tags", Type::List(5, false, Type::Primitive(TypeId::kString))),
      F(6, "_kafka",
        Type::Struct({F(7, "partition", Type::Primitive(TypeId::kInt), true),
                      F(8, "offset", Type::Primitive(TypeId::kLong), true),
                      F(9, "timestamp", Type::Primitive(TypeId::kTimestampTz)),
                      F(10, "key", Type::Primitive(TypeId::kBinary))}),
        true),
      F(11, "empty", Type::Struct({F(12, "raw", Type::Primitive(TypeId::kBinary))})),
      F(13, "ratio", Type::Primitive(TypeId::kFloat)),
  };
  iceberg::DataFile df;
  df.record_count = 5;
  df.null_value_counts = {{1, 0}, {2, 1}, {3, 0},  {5, 2},  {7, 0},
                          {8, 0}, {9, 5}, {10, 0}, {12, 0}, {13, 0}};
  df.nan_value_counts = {{3, 0}, {13, 2}};
  df.lower_bounds = {{1, Le<int64_t>(1)},
                     {2, "a"},
                     {3, Le<double>(-2.0)},
                     {5, "x"},
                     {7, Le<int32_t>(0)},
                     {8, Le<int64_t>(10)},
                     {10, "k"},
                     {13, Le<float>(0.5f)}};
  df.upper_bounds = {{1, Le<int64_t>(5)},
                     {2, "e"},
                     {3, Le<double>(1e10)},
                     {5, "z"},
                     {7, Le<int32_t>(3)},
                     {8, Le<int64_t>(14)},
                     {10, "k"},
                     {13, Le<float>(2.5f)}};
  std::string text = DeltaStatsJson(df, s, {{2, "name_2"}});
  Json got = Json::parse(text);
  Json want = {
      {"numRecords", 5},
      {"minValues",
       {{"id", 1},
        {"name_2", "a"},
        {"price", -2.0},
        {"_kafka", {{"partition", 0}, {"offset", 10}}},
        {"ratio", 0.5}}},
      // ratio has NaNs: no max (Spark orders NaN above every number).
      {"maxValues",
       {{"id", 5},
        {"name_2", "e"},
        {"price", 1e10},
        {"_kafka", {{"partition", 3}, {"offset", 14}}}}},
      {"nullCount",
       {{"id", 0},
        {"name_2", 1},
        {"price", 0},
        {"_kafka", {{"partition", 0}, {"offset", 0}, {"timestamp", 5}, {"key", 0}}},
        {"empty", {{"raw", 0}}},
        {"ratio", 0}}}};
  EXPECT_EQ(got, want) << text;
  // Key order is the schema's, numRecords first.
  EXPECT_EQ(text.rfind("{\"numRecords\":5,\"minValues\":{\"id\":1,\"name_2\":\"a\"", 0),
            0u)
      << text;
}

TEST(DeltaStatsTest, NoMetricsGivesOnlyNumRecords) {
  Schema s;
  s.fields = {F(1, "id", Type::Primitive(TypeId::kLong), true)};
  iceberg::DataFile df;
  df.record_count = 7;
  EXPECT_EQ(DeltaStatsJson(df, s), R"({"numRecords":7})");
  // A double max without a NaN count is not trusted either.
  Schema d;
  d.fields = {F(1, "x", Type::Primitive(TypeId::kDouble))};
  df.lower_bounds[1] = Le<double>(1.0);
  df.upper_bounds[1] = Le<double>(2.0);
  EXPECT_EQ(DeltaStatsJson(df, d), R"({"numRecords":7,"minValues":{"x":1}})");
}

}  // namespace
}  // namespace floe::delta
