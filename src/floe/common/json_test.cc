#include "floe/common/json.h"

#include <gtest/gtest.h>

namespace floe::json {
namespace {

using Json = ::nlohmann::json;
using Ordered = ::nlohmann::ordered_json;

void ExpectInvalidInput(const Status& st, const std::string& fragment) {
  EXPECT_EQ(KindOf(st), ErrorKind::kInvalidInput) << st.ToString();
  EXPECT_NE(st.message().find(fragment), std::string::npos) << st.message();
}

TEST(JsonTest, ParseRefusesBadTextWithItsName) {
  ASSERT_TRUE(Parse<Json>(R"({"a": 1})", "doc").ok());
  ExpectInvalidInput(Parse<Json>("{nope", "table metadata").status(),
                     "table metadata is not valid JSON: ");
  ExpectInvalidInput(Parse<Ordered>("", "log line").status(),
                     "log line is not valid JSON");
  // nlohmann would stop at the NUL and accept the prefix.
  ExpectInvalidInput(Parse<Json>(std::string("{}\0junk", 7), "body").status(),
                     "NUL byte");
  EXPECT_TRUE(Parse<Json>("[[[1]]]", "body", 3).ok());
  ExpectInvalidInput(Parse<Json>("[[[[1]]]]", "body", 3).status(),
                     "body nests deeper than 3 levels");
  // Brackets inside strings do not count.
  EXPECT_TRUE(Parse<Json>(R"(["[[[[", "\"{{{{"])", "body", 1).ok());
  EXPECT_TRUE(ParseOrDiscard<Json>("{nope").is_discarded());
}

TEST(JsonTest, OrderedDumpKeepsKeyOrderAndReplacesBadUtf8) {
  auto j = Parse<Ordered>(R"({"z": 1, "a": "x"})", "doc");
  ASSERT_TRUE(j.ok());
  EXPECT_EQ(Dump(*j), R"({"z":1,"a":"x"})");
  Json bad = Json::object();
  bad["s"] = std::string("\xff");
  EXPECT_EQ(Dump(bad), "{\"s\":\"\xEF\xBF\xBD\"}");
}

TEST(JsonTest, AccessorsNameKeyAndDocument) {
  Json j = Json::parse(R"({"s": "x", "i": 7, "big": 9223372036854775808,
                          "wide": 4294967296,
                          "b": true, "n": null, "l": ["a", "b"], "m": {"k": "v"},
                          "badl": ["a", 1], "badm": {"k": 1}})");
  EXPECT_EQ(*GetString(j, "s", "Req"), "x");
  EXPECT_EQ(*GetInt64(j, "i", "Req"), 7);
  EXPECT_EQ(*GetInt(j, "i", "Req"), 7);
  EXPECT_TRUE(*GetBool(j, "b", "Req"));
  EXPECT_FALSE(*GetBool(j, "absent", "Req", false));
  EXPECT_FALSE(GetOptString(j, "n", "Req")->has_value());  // null reads as absent
  EXPECT_EQ(Find(j, "n", /*null_is_absent=*/false)->is_null(), true);
  EXPECT_FALSE(GetOptInt64(j, "absent", "Req")->has_value());
  EXPECT_EQ(*GetOptInt(j, "i", "Req"), 7);
  EXPECT_EQ(*GetStringList(j, "l", "Req"), (std::vector<std::string>{"a", "b"}));
  EXPECT_TRUE(GetOptStringList(j, "absent", "Req")->empty());
  EXPECT_EQ(GetOptStringMap(j, "m", "Req")->at("k"), "v");

  ExpectInvalidInput(GetString(j, "absent", "Req").status(),
                     "Req: missing required field 'absent'");
  ExpectInvalidInput(GetString(j, "i", "Req").status(),
                     "Req: field 'i' must be a string");
  ExpectInvalidInput(GetInt64(j, "big", "Req").status(), "must be a 64-bit integer");
  ExpectInvalidInput(GetInt(j, "wide", "Req").status(), "must be a 32-bit integer");
  ExpectInvalidInput(GetInt64(j, "s", "Req").status(), "must be an integer");
  ExpectInvalidInput(GetBool(j, "s", "Req", true).status(), "must be a boolean");
  ExpectInvalidInput(GetStringList(j, "badl", "Req").status(),
                     "field 'badl' must be a list of strings");
  ExpectInvalidInput(GetOptStringMap(j, "badm", "Req").status(), "Req: badm 'k' must be");
  ExpectInvalidInput(CheckObject(Json::array(), "Req"), "Req must be a JSON object");
  // Members of a non-object are absent, not an exception.
  EXPECT_EQ(Find(Json::array(), "x"), nullptr);
}

TEST(JsonTest, AccessorsWorkOnOrderedJson) {
  Ordered j = Ordered::parse(R"({"s": "x", "i": -3})");
  EXPECT_EQ(*GetString(j, "s", "Req"), "x");
  EXPECT_EQ(*GetInt64(j, "i", "Req"), -3);
  ExpectInvalidInput(GetString(j, "i", "Req").status(), "must be a string");
}

}  // namespace
}  // namespace floe::json
