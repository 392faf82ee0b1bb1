#include "floe/table/positions.h"

#include <gtest/gtest.h>

namespace floe::table {

TEST(PositionsTest, RoundTrip) {
  Positions p{{"orders", {{0, 10}, {3, 42}}}, {"a.b", {{1, 0}}}};
  auto back = PositionsFromJson(PositionsToJson(p));
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(*back, p);
  EXPECT_EQ(PositionsToJson(p), R"({"a.b":{"1":0},"orders":{"0":10,"3":42}})");
}

TEST(PositionsTest, RejectsMalformed) {
  EXPECT_FALSE(PositionsFromJson("[]").ok());
  EXPECT_FALSE(PositionsFromJson(R"({"t":{"x":1}})").ok());
  EXPECT_FALSE(PositionsFromJson(R"({"t":{"-1":1}})").ok());
  EXPECT_FALSE(PositionsFromJson(R"({"t":{"0":"1"}})").ok());
  EXPECT_FALSE(PositionsFromJson("not json").ok());
}

}  // namespace floe::table
