#include "floe/config/interpolate.h"

#include <gtest/gtest.h>

#include <map>

namespace floe::config {
namespace {

EnvLookup FakeEnv(std::map<std::string, std::string> vars) {
  return [vars = std::move(vars)](const std::string& name) -> std::optional<std::string> {
    auto it = vars.find(name);
    if (it == vars.end()) return std::nullopt;
    return it->second;
  };
}

TEST(InterpolateEnvTest, ReplacesVariables) {
  auto env = FakeEnv({{"USER_NAME", "alice"}, {"PW", "s3cret"}, {"EMPTY", ""}});
  EXPECT_EQ(*InterpolateEnv("${env:USER_NAME}:${env:PW}", env), "alice:s3cret");
  EXPECT_EQ(*InterpolateEnv("pre-${env:USER_NAME}-post", env), "pre-alice-post");
  EXPECT_EQ(*InterpolateEnv("x${env:EMPTY}y", env), "xy");
  EXPECT_EQ(*InterpolateEnv("no variables", env), "no variables");
}

TEST(InterpolateEnvTest, DollarEscapesAndLiterals) {
  auto env = FakeEnv({{"A", "1"}});
  EXPECT_EQ(*InterpolateEnv("$${env:A}", env), "${env:A}");
  EXPECT_EQ(*InterpolateEnv("$$${env:A}", env), "$${env:A}");
  EXPECT_EQ(*InterpolateEnv("cost $5 and $", env), "cost $5 and $");
  EXPECT_EQ(*InterpolateEnv("^events\\..*$", env), "^events\\..*$");
}

TEST(InterpolateEnvTest, ValuesAreNotInterpolatedAgain) {
  auto env = FakeEnv({{"A", "${env:B}"}, {"B", "no"}});
  EXPECT_EQ(*InterpolateEnv("${env:A}", env), "${env:B}");
}

TEST(InterpolateEnvTest, Errors) {
  auto env = FakeEnv({});
  auto unset = InterpolateEnv("${env:MISSING}", env);
  ASSERT_FALSE(unset.ok());
  EXPECT_EQ(KindOf(unset.status()), ErrorKind::kInvalidConfig);
  EXPECT_EQ(unset.status().message(),
            "environment variable MISSING is not set (referenced as '${env:MISSING}'); "
            "export it or change the value");

  auto unterminated = InterpolateEnv("${env:A", env);
  EXPECT_NE(unterminated.status().message().find("unterminated '${'"), std::string::npos);

  auto other = InterpolateEnv("${HOME}", env);
  EXPECT_EQ(
      other.status().message(),
      "'${HOME}' is not supported; write ${env:NAME} to read an environment variable, "
      "or $${ for a literal '${'");

  auto bad_name = InterpolateEnv("${env:1X}", env);
  EXPECT_NE(
      bad_name.status().message().find("'1X' is not a valid environment variable name"),
      std::string::npos);
}

}  // namespace
}  // namespace floe::config
