#include "floe/config/keys.h"

#include <gtest/gtest.h>

#include <fstream>
#include <set>
#include <sstream>

#include "floe/config/config.h"

namespace floe::config {
namespace {

TEST(KeysTest, DocsFileMatchesTheRegistry) {
  const std::string path = std::string(FLOE_SOURCE_DIR) + "/docs/configuration.md";
  std::ifstream in(path, std::ios::binary);
  ASSERT_TRUE(in.good()) << "missing " << path
                         << "; run: ninja -C <build dir> floe_config_docs_update";
  std::ostringstream text;
  text << in.rdbuf();
  EXPECT_TRUE(text.str() == ConfigDocsMarkdown())
      << path
      << " is out of date with src/floe/config/keys.cc; run: ninja -C <build dir> "
      << "floe_config_docs_update";
}

TEST(KeysTest, RegistryIsConsistent) {
  std::set<std::string> paths;
  for (const KeyInfo& k : AllKeys()) {
    EXPECT_TRUE(paths.insert(k.Path()).second) << "duplicate key " << k.Path();
    EXPECT_FALSE(k.description.empty()) << k.Path();
    EXPECT_EQ(k.description.back(), '.') << k.Path();
    EXPECT_EQ(k.description.find('|'), std::string_view::npos) << k.Path();
    if (k.per_topic) {
      EXPECT_EQ(k.section, "defaults") << k.Path();
    }
    if (k.type == KeyType::kEnum || k.type == KeyType::kEnumList) {
      EXPECT_FALSE(k.choices.empty()) << k.Path();
      EXPECT_FALSE(k.SupportedChoicesText().empty()) << k.Path();
    }
    // Defaults are inside their own range.
    if (k.type == KeyType::kInt && !k.default_text.empty()) {
      int64_t v = std::stoll(std::string(k.default_text));
      EXPECT_GE(v, k.min) << k.Path();
      EXPECT_LE(v, k.max) << k.Path();
    }
    // Sections are declared at the top level.
    if (!k.section.empty() && k.section != "topics[]") {
      EXPECT_NE(FindKey("", k.section), nullptr) << k.Path();
    }
  }
  EXPECT_EQ(FindKey("defaults", "commit.interval.ms")->RangeText(), "1000..3600000");
  EXPECT_EQ(FindKey("", "memory.budget.bytes")->RangeText(), ">= 16777216 (16 MiB)");
  EXPECT_EQ(FindKey("defaults", "formats")->ChoicesText(), "iceberg, delta");
  EXPECT_EQ(FindKey("defaults", "on.invalid.record")->ChoicesText(),
            "suspend, skip, dlq");
  EXPECT_EQ(FindKey("nope", "x"), nullptr);
}

// Every choice in the registry has its C++ enum value, in the same order.
TEST(KeysTest, ChoicesMatchTheEnums) {
  auto names = [](std::string_view section, std::string_view name) {
    std::vector<std::string> out;
    for (const Choice& c : FindKey(section, name)->choices) out.emplace_back(c.value);
    return out;
  };
  using V = std::vector<std::string>;
  EXPECT_EQ(names("defaults", "formats"),
            (V{std::string(ToString(TableFormat::kIceberg)),
               std::string(ToString(TableFormat::kDelta))}));
  EXPECT_EQ(names("defaults", "on.invalid.record"),
            (V{std::string(ToString(InvalidRecordPolicy::kSuspend)),
               std::string(ToString(InvalidRecordPolicy::kSkip)),
               std::string(ToString(InvalidRecordPolicy::kDlq))}));
  EXPECT_EQ(names("defaults", "key.format"),
            (V{std::string(ToString(KeyFormat::kBinary)),
               std::string(ToString(KeyFormat::kString)),
               std::string(ToString(KeyFormat::kRegistry))}));
  EXPECT_EQ(names("defaults", "value.format"),
            (V{std::string(ToString(ValueFormat::kRegistry)),
               std::string(ToString(ValueFormat::kBinary)),
               std::string(ToString(ValueFormat::kJson))}));
  EXPECT_EQ(names("catalog", "type"), (V{std::string(ToString(CatalogType::kSqlite)),
                                         std::string(ToString(CatalogType::kPostgresql)),
                                         std::string(ToString(CatalogType::kRest))}));
  EXPECT_EQ(names("catalog", "auth"), (V{std::string(ToString(CatalogAuth::kNone)),
                                         std::string(ToString(CatalogAuth::kBearer)),
                                         std::string(ToString(CatalogAuth::kOAuth2)),
                                         std::string(ToString(CatalogAuth::kSigV4))}));
}

TEST(KeysTest, DocsCoverEveryKeyAndTheRules) {
  const std::string docs = ConfigDocsMarkdown();
  for (const KeyInfo& k : AllKeys()) {
    EXPECT_NE(docs.find("`" + k.Path() + "`"), std::string::npos) << k.Path();
  }
  for (const char* must : {"${env:NAME}", "$${", "first match wins", "_schemas", "FNV-1a",
                           "not supported yet", "exit status 2", "enable.auto.commit"}) {
    EXPECT_NE(docs.find(must), std::string::npos) << must;
  }
  EXPECT_NE(docs.find(std::string(ExampleConfigYaml())), std::string::npos);
}

TEST(KeysTest, HelpTextPointsAtTheDocs) {
  const std::string help = ConfigHelpText();
  EXPECT_NE(help.find("docs/configuration.md"), std::string::npos);
  EXPECT_NE(help.find("${env:NAME}"), std::string::npos);
  EXPECT_LT(std::count(help.begin(), help.end(), '\n'), 12);
}

TEST(KeysTest, ClosestMatch) {
  std::vector<std::string> keys = {"commit.interval.ms", "namespace", "formats"};
  EXPECT_EQ(ClosestMatch("comit.interval.ms", keys), "commit.interval.ms");
  EXPECT_EQ(ClosestMatch("namepsace", keys), "namespace");  // transposition
  EXPECT_EQ(ClosestMatch("FORMATS", keys), "formats");
  EXPECT_EQ(ClosestMatch("completely.different", keys), std::nullopt);
  EXPECT_EQ(EditDistance("kitten", "sitting"), 3u);
  EXPECT_EQ(EditDistance("ab", "ba"), 1u);
}

}  // namespace
}  // namespace floe::config
