// The typed registry of configuration keys: one table (keys.cc) with every key's path,
// type, default, range or choices, description and support state. It drives the parser's
// validation messages and generates docs/configuration.md, so the two never drift
// (librdkafka's CONFIGURATION.md model, STYLE.md).
//
// Everything here is immutable after static initialization and safe to read from any
// thread.
#pragma once

#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace floe::config {

enum class KeyType {
  kSection,      // a mapping of further keys (registry, catalog, ...)
  kPassthrough,  // a mapping passed through verbatim (kafka: librdkafka properties)
  kString,
  kPath,        // local path, made absolute relative to the config file's directory
  kInt,         // decimal integer; the unit is in the key's suffix (.ms, .bytes)
  kEnum,        // one of `choices`
  kEnumList,    // a YAML list of distinct `choices`
  kStringList,  // a YAML list of strings
  kTopicList,   // the `topics` list of entries
};

enum class Requirement {
  kOptional,
  kRequired,
  kConditional,  // required in some cases, stated in the description
};

// One allowed value of an enum key. `supported` false: the value is recognized (it is on
// the roadmap) but rejected with "not supported yet".
struct Choice {
  std::string_view value;
  bool supported;
};

struct KeyInfo {
  // Section ("" for top level, "kafka", "defaults", "topics[]", ...) and the key's name
  // inside it. Names contain dots of their own ("commit.interval.ms"), so the split is
  // explicit.
  std::string_view section = {};
  std::string_view name = {};
  KeyType type = KeyType::kString;
  Requirement requirement = Requirement::kOptional;
  // The default as written in YAML; empty when there is none.
  std::string_view default_text = {};
  // True when the default is computed from other keys (default_text is then prose).
  bool derived_default = false;
  int64_t min = std::numeric_limits<int64_t>::min();
  int64_t max = std::numeric_limits<int64_t>::max();
  std::vector<Choice> choices = {};
  std::string_view description = {};
  // Secrets are never echoed in error messages; the docs recommend ${env:NAME} for them.
  bool secret = false;
  // `defaults` keys that a `topics` entry may override.
  bool per_topic = false;
  // The Floe version that first supports the key; empty: accepted syntax, not supported
  // yet.
  std::string_view since = "0.1.0";

  // "defaults.commit.interval.ms", "topics[].name", "warehouse".
  std::string Path() const;
  // "1000..3600000", ">= 16777216 (16 MiB)", "" when unbounded.
  std::string RangeText() const;
  // "iceberg, delta (not supported yet)" or "" when not an enum.
  std::string ChoicesText() const;
  // Supported choices only: "suspend, skip".
  std::string SupportedChoicesText() const;
  // "integer (milliseconds)", "path", "list of: iceberg", ...
  std::string TypeText() const;
};

// Every key, in documentation order.
const std::vector<KeyInfo>& AllKeys();
// nullptr when unknown. `section` as in KeyInfo ("" = top level).
const KeyInfo* FindKey(std::string_view section, std::string_view name);
// The keys of one section, in documentation order.
std::vector<const KeyInfo*> SectionKeys(std::string_view section);

// librdkafka properties Floe sets itself (ARCHITECTURE.md §1-2); setting them under
// `kafka` is a config error.
struct OwnedKafkaProperty {
  std::string_view name;
  std::string_view value;  // what Floe sets
  std::string_view reason;
};
const std::vector<OwnedKafkaProperty>& OwnedKafkaProperties();

// The complete example config that opens docs/configuration.md (parsed by a unit test).
std::string_view ExampleConfigYaml();

// docs/configuration.md, generated from the registry (`floe_config_docs`).
std::string ConfigDocsMarkdown();

// A few lines on the config file for `floe run --help`, pointing at
// docs/configuration.md.
std::string ConfigHelpText();

// Optimal-string-alignment edit distance (typo suggestions).
size_t EditDistance(std::string_view a, std::string_view b);
// The candidate closest to `word` if it is close enough to be a plausible typo.
std::optional<std::string> ClosestMatch(std::string_view word,
                                        const std::vector<std::string>& candidates);

}  // namespace floe::config
