// The config parser's internals, shared by the files that parse one section each
// (config.cc: the core and most sections; s3_config.cc: the warehouse URI and `s3`;
// topic_config.cc: `defaults` and `topics`).
#pragma once

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include <cstddef>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "floe/common/status.h"
#include "floe/config/config.h"
#include "floe/config/keys.h"

namespace floe::config::internal {

// An enum value and its name in the config file.
template <typename E>
struct Named {
  E value;
  std::string_view name;
};

template <typename E, size_t N>
std::optional<E> FromName(const Named<E> (&names)[N], std::string_view s) {
  for (const auto& n : names) {
    if (n.name == s) return n.value;
  }
  return std::nullopt;
}

template <typename E, size_t N>
std::string_view NameOf(const Named<E> (&names)[N], E v) {
  for (const auto& n : names) {
    if (n.value == v) return n.name;
  }
  return "?";
}

std::vector<std::string> Split(std::string_view s, char sep);
// "registry" + "url" -> "registry.url"; "" + "warehouse" -> "warehouse".
std::string Join(std::string_view where, std::string_view name);

// A YAML node with the 1-based line of its key (what a user looks for), -1 when unknown.
struct Located {
  YAML::Node node;
  int line = -1;
};

// The 1-based line of a node, -1 when unknown.
int LineOf(const YAML::Node& node);

// The validated keys of one YAML mapping.
struct Fields {
  std::string where;  // "" (top level), "registry", "topics[2]"
  // Absent keys take the registry default; false for topics entries (absent = inherit).
  bool use_defaults = true;
  std::vector<std::pair<std::string, Located>> items;  // file order

  const Located* Find(std::string_view name) const {
    for (const auto& [key, value] : items) {
      if (key == name) return &value;
    }
    return nullptr;
  }
  std::string PathOf(std::string_view name) const { return Join(where, name); }
};

// A scalar after ${env:} interpolation (or a registry default).
struct Scalar {
  std::string text;
  int line = -1;
};

// Enum names (the registry's choices map onto these; keys_test checks both agree).
inline constexpr Named<TableFormat> kTableFormats[] = {{TableFormat::kIceberg, "iceberg"},
                                                       {TableFormat::kDelta, "delta"}};
inline constexpr Named<InvalidRecordPolicy> kInvalidRecordPolicies[] = {
    {InvalidRecordPolicy::kSuspend, "suspend"},
    {InvalidRecordPolicy::kSkip, "skip"},
    {InvalidRecordPolicy::kDlq, "dlq"}};
inline constexpr Named<DroppedFieldPolicy> kDroppedFieldPolicies[] = {
    {DroppedFieldPolicy::kKeep, "keep"}, {DroppedFieldPolicy::kDrop, "drop"}};
inline constexpr Named<DroppedTablePolicy> kDroppedTablePolicies[] = {
    {DroppedTablePolicy::kSuspend, "suspend"},
    {DroppedTablePolicy::kRecreate, "recreate"}};
inline constexpr Named<KeyFormat> kKeyFormats[] = {{KeyFormat::kBinary, "binary"},
                                                   {KeyFormat::kString, "string"},
                                                   {KeyFormat::kRegistry, "registry"}};
inline constexpr Named<ValueFormat> kValueFormats[] = {
    {ValueFormat::kRegistry, "registry"},
    {ValueFormat::kBinary, "binary"},
    {ValueFormat::kJson, "json"}};

// A name Iceberg tables and namespaces may have here; a name Kafka allows for a topic.
bool IsTableIdentifier(std::string_view s);
bool IsKafkaTopicName(std::string_view s);

class Parser {
 public:
  Parser(std::string source, std::filesystem::path base_dir)
      : source_(std::move(source)), base_dir_(std::move(base_dir)) {}

  Result<Config> Parse(const std::string& text);

 private:
  Status Fail(int line, std::string_view key, std::string_view message) const {
    std::string where;
    if (!source_.empty() && line > 0) {
      where = fmt::format("{}:{}: ", source_, line);
    } else if (!source_.empty()) {
      where = fmt::format("{}: ", source_);
    } else if (line > 0) {
      where = fmt::format("line {}: ", line);
    }
    if (key.empty()) return InvalidConfig(fmt::format("{}{}", where, message));
    return InvalidConfig(fmt::format("{}{}: {}", where, key, message));
  }

  static std::string Describe(const YAML::Node& node, bool secret) {
    switch (node.Type()) {
      case YAML::NodeType::Null:
        return "nothing (null)";
      case YAML::NodeType::Scalar:
        return secret ? "a string (value not shown)" : fmt::format("'{}'", node.Scalar());
      case YAML::NodeType::Sequence:
        return "a list";
      case YAML::NodeType::Map:
        return "a mapping";
      case YAML::NodeType::Undefined:
        break;
    }
    return "nothing";
  }

  // Known key names of a section; topics entries also take the per-topic defaults keys.
  static std::vector<std::string> KnownNames(std::string_view section) {
    std::vector<std::string> names;
    for (const KeyInfo* k : SectionKeys(section)) names.emplace_back(k->name);
    if (section == "topics[]") {
      for (const KeyInfo* k : SectionKeys("defaults")) {
        if (k->per_topic) names.emplace_back(k->name);
      }
    }
    return names;
  }

  static const KeyInfo* Lookup(std::string_view section, std::string_view name) {
    if (const KeyInfo* k = FindKey(section, name)) return k;
    if (section == "topics[]") {
      const KeyInfo* k = FindKey("defaults", name);
      if (k != nullptr && k->per_topic) return k;
    }
    return nullptr;
  }

  Status UnknownKey(std::string_view section, const Fields& fields,
                    const std::string& name, int line) const;
  // Checks a mapping's keys against `section` (nullopt section: any key, for kafka).
  Result<Fields> ReadMapping(const Located& map, std::optional<std::string_view> section,
                             const std::string& where, std::string_view expected) const;

  Result<std::optional<Scalar>> GetScalar(const Fields& f, const KeyInfo& k) const;
  Result<Scalar> InterpolateScalar(const YAML::Node& node, int line,
                                   const std::string& path) const;
  Result<std::optional<std::string>> GetString(const Fields& f, const KeyInfo& k) const;
  Result<std::optional<int64_t>> GetInt(const Fields& f, const KeyInfo& k) const;
  Result<std::string> CheckChoice(const KeyInfo& k, const std::string& path,
                                  const Scalar& value) const;
  Result<std::optional<std::string>> GetEnum(const Fields& f, const KeyInfo& k) const;
  Result<std::optional<std::vector<Scalar>>> GetList(const Fields& f,
                                                     const KeyInfo& k) const;
  Result<std::optional<std::string>> GetPath(const Fields& f, const KeyInfo& k) const;
  Result<std::string> ResolvePath(const std::string& path, const Scalar& value) const;

  template <typename E, size_t N>
  Result<std::optional<E>> GetEnumAs(const Fields& f, const KeyInfo& k,
                                     const Named<E> (&names)[N]) const {
    FLOE_ASSIGN_OR_RAISE(auto text, GetEnum(f, k));
    if (!text) return std::optional<E>();
    std::optional<E> v = FromName(names, *text);
    if (!v) return Status::Invalid("enum value without a C++ counterpart: ", *text);
    return v;
  }

  Status ParseKafka(const Located* node, Config* config) const;
  Status ParseRegistry(const Located* node, Config* config) const;
  Status ParseCatalog(const Located* node, Config* config) const;
  // catalog_config.cc: the keys of catalog.type rest.
  Status ParseRestCatalog(const Located* node, const Fields& f, Config* config) const;
  Status ParseRest(const Located* node, Config* config) const;
  Status ParseHealth(const Located* node, Config* config) const;
  Status ParseMaintenance(const Located* node, Config* config) const;
  // s3_config.cc: an s3:// warehouse URI checked and normalized, and the `s3` section.
  Result<std::string> ResolveS3Warehouse(const Scalar& value) const;
  Status ParseS3(const Located* node, Config* config) const;
  // The rest.client.s3.* keys (after ParseS3: the endpoint defaults to s3.endpoint).
  Status ParseRestClientS3(const Fields& rest, Config* config) const;
  // <prefix>access.key.id, <prefix>secret.access.key and <prefix>session.token of a
  // section: both of the first two or neither; the token only with them. `what` names
  // the credentials in the error, `otherwise` says what neither means.
  struct S3Keys {
    std::string access_key_id;
    std::string secret_access_key;
    std::string session_token;
  };
  Result<S3Keys> ParseS3Keys(const Fields& f, std::string_view section,
                             std::string_view prefix, std::string_view what,
                             std::string_view otherwise) const;
  Result<TopicOverrides> ParseTopicSettings(const Fields& f) const;
  Status ParseTopics(const Located* node, Config* config) const;
  Status CheckNamespace(const std::string& path, const Scalar& value) const;

  std::string source_;
  std::filesystem::path base_dir_;
};

}  // namespace floe::config::internal
