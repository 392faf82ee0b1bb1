#include "floe/common/util.h"

#include <gtest/gtest.h>

#include <regex>

namespace floe {

TEST(UtilTest, UuidIsCanonicalV4) {
  std::regex re("^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$");
  for (int i = 0; i < 100; ++i) EXPECT_TRUE(std::regex_match(NewUuid(), re));
  EXPECT_NE(NewUuid(), NewUuid());
}

TEST(UtilTest, SnapshotIdsArePositive) {
  for (int i = 0; i < 1000; ++i) EXPECT_GT(RandomPositiveInt64(), 0);
}

TEST(UtilTest, Hex) { EXPECT_EQ(HexEncode(std::string("\x00\xff\x10", 3)), "00ff10"); }

TEST(UtilTest, PercentEncode) {
  EXPECT_EQ(PercentEncode("a/b c-._~%\xc3\xa9", true), "a/b%20c-._~%25%C3%A9");
  EXPECT_EQ(PercentEncode("orders-value/x", false), "orders-value%2Fx");
}

TEST(UtilTest, PercentDecodeInvertsEncode) {
  const std::string raw = "data/a b%c\xc3\xa9+.parquet";
  EXPECT_EQ(PercentDecode(PercentEncode(raw, true)), raw);
  EXPECT_EQ(PercentDecode("x%2fy%2F"), "x/y/");
  EXPECT_EQ(PercentDecode("plain"), "plain");
  EXPECT_EQ(PercentDecode("bad%4"), std::nullopt);
  EXPECT_EQ(PercentDecode("bad%"), std::nullopt);
  EXPECT_EQ(PercentDecode("bad%zz"), std::nullopt);
}

}  // namespace floe
