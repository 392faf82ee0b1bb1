#include "floe/config/config.h"

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <system_error>
#include <utility>

#include "floe/config/config_internal.h"
#include "floe/config/interpolate.h"
#include "floe/config/keys.h"
#include "floe/config/parser_internal.h"

namespace floe::config {
namespace {

namespace fs = std::filesystem;
using internal::IsTableChar;
using internal::kMaxTableNameLength;

// ---- enum names (the registry's choices map onto these; keys_test checks both agree)
// ----

using internal::Fields;
using internal::FromName;
using internal::Join;
using internal::LineOf;
using internal::Located;
using internal::Named;
using internal::NameOf;
using internal::Parser;
using internal::Scalar;
using internal::Split;

constexpr Named<CatalogType> kCatalogTypes[] = {{CatalogType::kSqlite, "sqlite"},
                                                {CatalogType::kPostgresql, "postgresql"},
                                                {CatalogType::kRest, "rest"}};

// ---- small helpers
// ---------------------------------------------------------------------

}  // namespace

namespace internal {

constexpr size_t kMaxTopicNameLength = 249;  // Kafka's limit

bool IsTableIdentifier(std::string_view s) {
  if (s.empty()) return false;
  for (char c : s) {
    if (!IsTableChar(c)) return false;
  }
  return true;
}

bool IsKafkaTopicName(std::string_view s) {
  if (s.empty() || s.size() > kMaxTopicNameLength || s == "." || s == "..") return false;
  for (char c : s) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
              (c >= '0' && c <= '9') || c == '.' || c == '_' || c == '-';
    if (!ok) return false;
  }
  return true;
}

std::vector<std::string> Split(std::string_view s, char sep) {
  std::vector<std::string> out;
  size_t start = 0;
  while (true) {
    size_t pos = s.find(sep, start);
    out.emplace_back(s.substr(start, pos == std::string_view::npos ? pos : pos - start));
    if (pos == std::string_view::npos) break;
    start = pos + 1;
  }
  return out;
}

std::string Join(std::string_view where, std::string_view name) {
  if (where.empty()) return std::string(name);
  return fmt::format("{}.{}", where, name);
}

int LineOf(const YAML::Node& node) {
  const YAML::Mark mark = node.Mark();
  return mark.is_null() ? -1 : mark.line + 1;
}

Status Parser::UnknownKey(std::string_view section, const Fields& fields,
                          const std::string& name, int line) const {
  const std::string path = fields.PathOf(name);
  std::optional<std::string> close = ClosestMatch(name, KnownNames(section));
  if (close) {
    return Fail(line, path,
                fmt::format("unknown key; did you mean '{}'?", fields.PathOf(*close)));
  }
  // A full path written flat at the top level ("registry.url: ..."), or a key of another
  // section ("commit.interval.ms" at the top level).
  for (const KeyInfo& k : AllKeys()) {
    if (section.empty() && !k.section.empty() && k.Path() == name) {
      return Fail(line, path,
                  fmt::format("unknown key; write it nested: {}: {{{}: ...}}", k.section,
                              k.name));
    }
  }
  for (const KeyInfo& k : AllKeys()) {
    if (k.name == name && k.section != section && k.section != "topics[]") {
      std::string home = k.section.empty()
                             ? std::string("it is a top-level key")
                             : fmt::format("it belongs under '{}'", k.section);
      return Fail(line, path,
                  fmt::format("unknown key; did you mean '{}'? ({})", k.Path(), home));
    }
  }
  std::vector<std::string> names = KnownNames(section);
  return Fail(
      line, path,
      fmt::format("unknown key; the keys allowed here are: {}", fmt::join(names, ", ")));
}

Result<Fields> Parser::ReadMapping(const Located& map,
                                   std::optional<std::string_view> section,
                                   const std::string& where,
                                   std::string_view expected) const {
  Fields fields;
  fields.where = where;
  if (map.node.IsNull()) return fields;  // `registry:` with nothing under it
  if (!map.node.IsMap()) {
    return Fail(map.line, where,
                fmt::format("expected {}, got {}", expected, Describe(map.node, false)));
  }
  for (auto it = map.node.begin(); it != map.node.end(); ++it) {
    const int line = LineOf(it->first);
    if (!it->first.IsScalar()) {
      return Fail(line, where, "keys must be plain strings");
    }
    const std::string name = it->first.Scalar();
    if (const Located* first = fields.Find(name)) {
      return Fail(line, fields.PathOf(name),
                  fmt::format("duplicate key (first set on line {})", first->line));
    }
    if (section) {
      const KeyInfo* k = Lookup(*section, name);
      if (k == nullptr) return UnknownKey(*section, fields, name, line);
      if (k->since.empty()) return Fail(line, fields.PathOf(name), "not supported yet");
    }
    fields.items.emplace_back(name, Located{it->second, line});
  }
  return fields;
}

Result<Scalar> Parser::InterpolateScalar(const YAML::Node& node, int line,
                                         const std::string& path) const {
  Result<std::string> text = InterpolateEnv(node.Scalar());
  if (!text.ok()) return Fail(line, path, text.status().message());
  return Scalar{std::move(text).ValueOrDie(), line};
}

Result<std::optional<Scalar>> Parser::GetScalar(const Fields& f, const KeyInfo& k) const {
  const std::string path = f.PathOf(k.name);
  const Located* loc = f.Find(k.name);
  if (loc == nullptr) {
    if (!f.use_defaults || k.default_text.empty() || k.derived_default) {
      return std::optional<Scalar>();
    }
    return std::optional<Scalar>(Scalar{std::string(k.default_text), -1});
  }
  if (!loc->node.IsScalar()) {
    std::string expected = k.TypeText();
    expected = (expected.starts_with("integer") ? "an " : "a ") + expected;
    if (k.type == KeyType::kEnum) expected = "one of " + k.SupportedChoicesText();
    return Fail(
        loc->line, path,
        fmt::format("expected {}, got {}", expected, Describe(loc->node, k.secret)));
  }
  FLOE_ASSIGN_OR_RAISE(Scalar s, InterpolateScalar(loc->node, loc->line, path));
  return std::optional<Scalar>(std::move(s));
}

Result<std::optional<std::string>> Parser::GetString(const Fields& f,
                                                     const KeyInfo& k) const {
  FLOE_ASSIGN_OR_RAISE(auto s, GetScalar(f, k));
  if (!s) return std::optional<std::string>();
  if (s->text.empty()) return Fail(s->line, f.PathOf(k.name), "must not be empty");
  return std::optional<std::string>(std::move(s->text));
}

Result<std::optional<int64_t>> Parser::GetInt(const Fields& f, const KeyInfo& k) const {
  FLOE_ASSIGN_OR_RAISE(auto s, GetScalar(f, k));
  if (!s) return std::optional<int64_t>();
  const std::string path = f.PathOf(k.name);
  const std::string range = k.RangeText();
  const std::string unit = k.TypeText();  // "integer (milliseconds)"
  const std::string& text = s->text;
  int64_t value = 0;
  const char* begin = text.data();
  const char* end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(begin, end, value);
  const bool digits_only =
      !text.empty() && text.find_first_not_of("-0123456789") == std::string::npos;
  if (ec == std::errc::result_out_of_range && digits_only) {
    return Fail(s->line, path,
                fmt::format("{} is out of range; allowed {}", text,
                            range.empty() ? "a 64-bit integer" : range));
  }
  if (ec != std::errc() || ptr != end) {
    std::string allowed = range.empty() ? "" : fmt::format("; allowed {}", range);
    std::string hint;
    if (!text.empty() && std::isdigit(static_cast<unsigned char>(text[0])) &&
        unit.ends_with(")")) {
      hint = " (write a plain number: the unit is in the key's suffix)";
    }
    return Fail(s->line, path,
                fmt::format("expected an {}{}, got '{}'{}", unit, allowed, text, hint));
  }
  if (value < k.min || value > k.max) {
    return Fail(s->line, path,
                fmt::format("{} is out of range; allowed {}", value, range));
  }
  return std::optional<int64_t>(value);
}

Result<std::string> Parser::CheckChoice(const KeyInfo& k, const std::string& path,
                                        const Scalar& value) const {
  for (const Choice& c : k.choices) {
    if (c.value != value.text) continue;
    if (!c.supported) {
      return Fail(value.line, path,
                  fmt::format("'{}' is not supported yet; supported: {}", value.text,
                              k.SupportedChoicesText()));
    }
    return value.text;
  }
  std::vector<std::string> names;
  for (const Choice& c : k.choices) names.emplace_back(c.value);
  std::optional<std::string> close = ClosestMatch(value.text, names);
  std::string hint = close ? fmt::format(" (did you mean '{}'?)", *close) : "";
  return Fail(value.line, path,
              fmt::format("'{}' is not a valid value{}; allowed: {}", value.text, hint,
                          k.SupportedChoicesText()));
}

Result<std::optional<std::string>> Parser::GetEnum(const Fields& f,
                                                   const KeyInfo& k) const {
  FLOE_ASSIGN_OR_RAISE(auto s, GetScalar(f, k));
  if (!s) return std::optional<std::string>();
  FLOE_ASSIGN_OR_RAISE(std::string v, CheckChoice(k, f.PathOf(k.name), *s));
  return std::optional<std::string>(std::move(v));
}

Result<std::optional<std::vector<Scalar>>> Parser::GetList(const Fields& f,
                                                           const KeyInfo& k) const {
  const std::string path = f.PathOf(k.name);
  const Located* loc = f.Find(k.name);
  std::vector<Scalar> out;
  if (loc == nullptr) {
    if (!f.use_defaults || k.default_text.empty()) {
      return std::optional<std::vector<Scalar>>();
    }
    // Defaults of list keys are flow lists of plain words ("[iceberg]", "[]").
    YAML::Node node = YAML::Load(std::string(k.default_text));
    for (const auto& item : node) out.push_back(Scalar{item.Scalar(), -1});
    return std::optional<std::vector<Scalar>>(std::move(out));
  }
  if (!loc->node.IsSequence()) {
    std::string example =
        k.choices.empty() ? "[a, b]" : fmt::format("[{}]", k.choices.front().value);
    return Fail(loc->line, path,
                fmt::format("expected a list such as {}, got {}", example,
                            Describe(loc->node, k.secret)));
  }
  size_t index = 0;
  for (const auto& item : loc->node) {
    const std::string item_path = fmt::format("{}[{}]", path, index++);
    int line = LineOf(item);
    if (line < 0) line = loc->line;
    if (!item.IsScalar()) {
      return Fail(line, item_path,
                  fmt::format("expected a string, got {}", Describe(item, k.secret)));
    }
    FLOE_ASSIGN_OR_RAISE(Scalar s, InterpolateScalar(item, line, item_path));
    out.push_back(std::move(s));
  }
  return std::optional<std::vector<Scalar>>(std::move(out));
}

Result<std::string> Parser::ResolvePath(const std::string& path,
                                        const Scalar& value) const {
  std::string text = value.text;
  if (text.empty()) return Fail(value.line, path, "must not be empty");
  const size_t scheme_end = text.find("://");
  if (scheme_end != std::string::npos) {
    const std::string scheme = text.substr(0, scheme_end);
    if (scheme == "s3" || scheme == "s3a" || scheme == "s3n") {
      if (path == "warehouse") {
        return Fail(
            value.line, path,
            fmt::format("'{}': write S3 warehouses as s3://bucket[/prefix]", value.text));
      }
      return Fail(
          value.line, path,
          fmt::format("'{}': this is a local file; only the warehouse may be on S3",
                      value.text));
    }
    if (scheme != "file") {
      return Fail(value.line, path,
                  fmt::format("'{}': only local paths are supported (scheme '{}' is not)",
                              text, scheme));
    }
    text = text.substr(scheme_end + 3);
    if (!text.starts_with("/")) {
      return Fail(value.line, path,
                  fmt::format("'{}': a file URI needs an absolute path (file:///dir)",
                              value.text));
    }
  }
  if (text.starts_with("~")) {
    return Fail(value.line, path,
                fmt::format("'{}': '~' is not expanded; use ${{env:HOME}}/... or an "
                            "absolute path",
                            value.text));
  }
  fs::path p(text);
  if (p.is_relative()) p = base_dir_ / p;
  std::string normal = p.lexically_normal().string();
  while (normal.size() > 1 && normal.ends_with("/")) normal.pop_back();
  return normal;
}

Result<std::optional<std::string>> Parser::GetPath(const Fields& f,
                                                   const KeyInfo& k) const {
  FLOE_ASSIGN_OR_RAISE(auto s, GetScalar(f, k));
  if (!s) return std::optional<std::string>();
  FLOE_ASSIGN_OR_RAISE(std::string p, ResolvePath(f.PathOf(k.name), *s));
  return std::optional<std::string>(std::move(p));
}

Status Parser::CheckNamespace(const std::string& path, const Scalar& value) const {
  if (value.text.empty()) return Fail(value.line, path, "must not be empty");
  for (const std::string& level : Split(value.text, '.')) {
    if (level.empty()) {
      return Fail(
          value.line, path,
          fmt::format("'{}' has an empty level; separate levels with a single '.' "
                      "(e.g. kafka or raw.events)",
                      value.text));
    }
    if (!IsTableIdentifier(level)) {
      return Fail(
          value.line, path,
          fmt::format("'{}': level '{}' must match [a-z0-9_]+ (lower-case letters, "
                      "digits, '_'); levels are separated by '.'",
                      value.text, level));
    }
  }
  return Status::OK();
}

Status Parser::ParseKafka(const Located* node, Config* config) const {
  Located empty;
  FLOE_ASSIGN_OR_RAISE(Fields f, ReadMapping(node ? *node : empty, std::nullopt, "kafka",
                                             "a mapping of librdkafka properties"));
  for (const auto& [name, loc] : f.items) {
    const std::string path = f.PathOf(name);
    for (const OwnedKafkaProperty& owned : OwnedKafkaProperties()) {
      if (name == owned.name) {
        return Fail(loc.line, path,
                    fmt::format("Floe sets this property itself ({}={}: {}); remove it",
                                owned.name, owned.value, owned.reason));
      }
    }
    if (!loc.node.IsScalar()) {
      return Fail(loc.line, path,
                  fmt::format("expected a value (librdkafka properties are flat, e.g. "
                              "bootstrap.servers: host:9092), got {}",
                              Describe(loc.node, true)));
    }
    FLOE_ASSIGN_OR_RAISE(Scalar s, InterpolateScalar(loc.node, loc.line, path));
    config->kafka[name] = std::move(s.text);
  }
  const KeyInfo& servers = *FindKey("kafka", "bootstrap.servers");
  FLOE_ASSIGN_OR_RAISE(auto bootstrap, GetString(f, servers));
  if (!bootstrap) {
    std::vector<std::string> names;
    for (const auto& item : f.items) names.push_back(item.first);
    std::optional<std::string> typo = ClosestMatch(servers.name, names);
    std::string hint = typo ? fmt::format(" (is 'kafka.{}' a typo?)", *typo) : "";
    return Fail(node ? node->line : -1, "kafka.bootstrap.servers",
                fmt::format("required key is missing{}; set the broker list, e.g. kafka: "
                            "{{bootstrap.servers: 127.0.0.1:9092}}",
                            hint));
  }
  FLOE_ASSIGN_OR_RAISE(auto group, GetString(f, *FindKey("kafka", "group.id")));
  config->kafka["group.id"] = *group;
  // The registry's integer kafka keys are Floe's prefetch defaults (keys.cc): checked,
  // and passed on with their default when the user did not set them.
  for (const KeyInfo* k : SectionKeys("kafka")) {
    if (k->type != KeyType::kInt) continue;
    FLOE_ASSIGN_OR_RAISE(auto value, GetInt(f, *k));
    config->kafka[std::string(k->name)] = std::to_string(*value);
  }
  return Status::OK();
}

Status Parser::ParseRegistry(const Located* node, Config* config) const {
  Located empty;
  FLOE_ASSIGN_OR_RAISE(Fields f,
                       ReadMapping(node ? *node : empty, "registry", "registry",
                                   "a mapping such as {url: http://host:8081}"));
  RegistrySettings& r = config->registry;
  FLOE_ASSIGN_OR_RAISE(auto url, GetScalar(f, *FindKey("registry", "url")));
  if (url) {
    if (!url->text.starts_with("http://") && !url->text.starts_with("https://")) {
      return Fail(url->line, "registry.url",
                  fmt::format("'{}' is not an http:// or https:// URL", url->text));
    }
    std::string text = url->text;
    while (text.ends_with("/")) text.pop_back();
    if (text == "http:/" || text == "https:/" || text.ends_with("://")) {
      return Fail(url->line, "registry.url", fmt::format("'{}' has no host", url->text));
    }
    r.url = std::move(text);
  }
  const KeyInfo& auth_key = *FindKey("registry", "basic.auth.user.info");
  FLOE_ASSIGN_OR_RAISE(auto auth, GetScalar(f, auth_key));
  if (auth) {
    if (auth->text.find(':') == std::string::npos) {
      return Fail(auth->line, "registry.basic.auth.user.info",
                  "expected USER:PASSWORD (value not shown)");
    }
    r.basic_auth_user_info = std::move(auth->text);
  }
  FLOE_ASSIGN_OR_RAISE(auto timeout,
                       GetInt(f, *FindKey("registry", "request.timeout.ms")));
  r.request_timeout_ms = *timeout;
  return Status::OK();
}

Status Parser::ParseCatalog(const Located* node, Config* config) const {
  Located empty;
  FLOE_ASSIGN_OR_RAISE(Fields f, ReadMapping(node ? *node : empty, "catalog", "catalog",
                                             "a mapping such as {type: sqlite}"));
  CatalogSettings& c = config->catalog;
  FLOE_ASSIGN_OR_RAISE(auto type,
                       GetEnumAs(f, *FindKey("catalog", "type"), kCatalogTypes));
  c.type = *type;
  FLOE_ASSIGN_OR_RAISE(auto name, GetString(f, *FindKey("catalog", "name")));
  c.name = *name;
  FLOE_ASSIGN_OR_RAISE(auto password, GetString(f, *FindKey("catalog", "password")));
  c.password = password.value_or("");
  FLOE_ASSIGN_OR_RAISE(auto pool, GetInt(f, *FindKey("catalog", "pool.size")));
  c.pool_size = *pool;
  FLOE_ASSIGN_OR_RAISE(auto timeout,
                       GetInt(f, *FindKey("catalog", "connect.timeout.ms")));
  c.connect_timeout_ms = *timeout;
  if (c.type == CatalogType::kRest) return ParseRestCatalog(node, f, config);
  if (c.type == CatalogType::kPostgresql) {
    const KeyInfo& uri_key = *FindKey("catalog", "uri");
    FLOE_ASSIGN_OR_RAISE(auto uri, GetScalar(f, uri_key));
    if (!uri) {
      return Fail(node ? node->line : -1, "catalog.uri",
                  "required with catalog.type postgresql: a connection URI such as "
                  "postgresql://floe@127.0.0.1:5432/lake");
    }
    if (!uri->text.starts_with("postgresql://") &&
        !uri->text.starts_with("postgres://")) {
      // Not echoed: it may hold a password.
      return Fail(uri->line, "catalog.uri",
                  "not a PostgreSQL connection URI: it must start with postgresql:// "
                  "(postgresql://user@host:port/database)");
    }
    c.uri = uri->text;
    return Status::OK();
  }
  FLOE_ASSIGN_OR_RAISE(auto uri, GetPath(f, *FindKey("catalog", "uri")));
  if (!uri && config->WarehouseOnS3()) {
    return Fail(node ? node->line : -1, "catalog.uri",
                "required when the warehouse is on S3: the SQLite catalog is a local "
                "file; set e.g. catalog: {uri: ./catalog.db}");
  }
  c.uri = uri ? *uri : (fs::path(config->warehouse) / "catalog.db").string();
  return Status::OK();
}

Status Parser::ParseRest(const Located* node, Config* config) const {
  Located empty;
  FLOE_ASSIGN_OR_RAISE(Fields f,
                       ReadMapping(node ? *node : empty, "rest", "rest",
                                   "a mapping such as {listen: 127.0.0.1:8181}"));
  RestSettings& r = config->rest;
  FLOE_ASSIGN_OR_RAISE(auto listen, GetScalar(f, *FindKey("rest", "listen")));
  auto bad = [&](std::string_view why) {
    return Fail(
        listen->line, "rest.listen",
        fmt::format("expected HOST:PORT such as 127.0.0.1:8181 or [::1]:8181, got "
                    "'{}' ({})",
                    listen->text, why));
  };
  const std::string& text = listen->text;
  std::string host;
  std::string port;
  if (text.starts_with("[")) {
    size_t close = text.find(']');
    if (close == std::string::npos || close + 1 >= text.size() ||
        text[close + 1] != ':') {
      return bad("an IPv6 address is written [address]:port");
    }
    host = text.substr(1, close - 1);
    port = text.substr(close + 2);
  } else {
    size_t colon = text.rfind(':');
    if (colon == std::string::npos) return bad("no port");
    host = text.substr(0, colon);
    port = text.substr(colon + 1);
    if (host.find(':') != std::string::npos)
      return bad("write IPv6 addresses in brackets");
  }
  if (host.empty()) return bad("no host");
  int port_number = -1;
  auto [ptr, ec] = std::from_chars(port.data(), port.data() + port.size(), port_number);
  if (port.empty() || ec != std::errc() || ptr != port.data() + port.size() ||
      port_number < 0 || port_number > 65535) {
    return bad("the port must be 0..65535");
  }
  r.listen = text;
  r.listen_host = host;
  r.listen_port = port_number;

  FLOE_ASSIGN_OR_RAISE(auto tokens, GetList(f, *FindKey("rest", "auth.tokens")));
  for (size_t i = 0; i < tokens->size(); ++i) {
    if ((*tokens)[i].text.empty()) {
      return Fail((*tokens)[i].line, fmt::format("rest.auth.tokens[{}]", i),
                  "must not be empty");
    }
    r.auth_tokens.push_back(std::move((*tokens)[i].text));
  }
  FLOE_ASSIGN_OR_RAISE(auto read_tokens,
                       GetList(f, *FindKey("rest", "auth.read.tokens")));
  for (size_t i = 0; i < read_tokens->size(); ++i) {
    if ((*read_tokens)[i].text.empty()) {
      return Fail((*read_tokens)[i].line, fmt::format("rest.auth.read.tokens[{}]", i),
                  "must not be empty");
    }
    r.auth_read_tokens.push_back(std::move((*read_tokens)[i].text));
  }
  return ParseRestClientS3(f, config);
}

Result<Config> Parser::Parse(const std::string& text) {
  std::vector<YAML::Node> docs;
  try {
    docs = YAML::LoadAll(text);
  } catch (const YAML::Exception& e) {
    int line = e.mark.is_null() ? -1 : e.mark.line + 1;
    std::string col =
        e.mark.is_null() ? "" : fmt::format(", column {}", e.mark.column + 1);
    return Fail(line, "", fmt::format("YAML syntax error{}: {}", col, e.msg));
  }
  if (docs.size() > 1) {
    return Fail(-1, "", fmt::format("expected one YAML document, found {}", docs.size()));
  }
  if (docs.empty() || docs[0].IsNull()) {
    return Fail(-1, "",
                "the config is empty; at least kafka.bootstrap.servers, registry.url and "
                "warehouse are required (see docs/configuration.md)");
  }
  FLOE_ASSIGN_OR_RAISE(Fields root,
                       ReadMapping(Located{docs[0], LineOf(docs[0])}, "", "",
                                   "a mapping of keys (kafka, registry, ...)"));
  Config config;
  config.base_dir = base_dir_.string();

  FLOE_RETURN_NOT_OK(ParseKafka(root.Find("kafka"), &config));
  FLOE_RETURN_NOT_OK(ParseRegistry(root.Find("registry"), &config));

  const KeyInfo& warehouse_key = *FindKey("", "warehouse");
  FLOE_ASSIGN_OR_RAISE(auto warehouse_text, GetScalar(root, warehouse_key));
  if (!warehouse_text) {
    return Fail(-1, "warehouse",
                "required key is missing; set it to a local directory (warehouse: "
                "./warehouse) or an S3 location (warehouse: s3://bucket/prefix)");
  }
  if (warehouse_text->text.starts_with("s3://")) {
    FLOE_ASSIGN_OR_RAISE(config.warehouse, ResolveS3Warehouse(*warehouse_text));
  } else {
    FLOE_ASSIGN_OR_RAISE(config.warehouse, ResolvePath("warehouse", *warehouse_text));
  }
  FLOE_RETURN_NOT_OK(ParseS3(root.Find("s3"), &config));

  FLOE_RETURN_NOT_OK(ParseCatalog(root.Find("catalog"), &config));
  FLOE_RETURN_NOT_OK(ParseRest(root.Find("rest"), &config));
  FLOE_RETURN_NOT_OK(ParseHealth(root.Find("health"), &config));
  FLOE_RETURN_NOT_OK(ParseMaintenance(root.Find("maintenance"), &config));
  FLOE_ASSIGN_OR_RAISE(auto budget, GetInt(root, *FindKey("", "memory.budget.bytes")));
  config.memory_budget_bytes = *budget;
  FLOE_ASSIGN_OR_RAISE(auto level, GetEnum(root, *FindKey("", "log.level")));
  config.log_level = *level;
  FLOE_ASSIGN_OR_RAISE(auto log_format, GetEnum(root, *FindKey("", "log.format")));
  config.log_format = *log_format;

  // defaults: every key filled from the registry where the file does not set it.
  Located empty;
  const Located* defaults_loc = root.Find("defaults");
  FLOE_ASSIGN_OR_RAISE(
      Fields df, ReadMapping(defaults_loc ? *defaults_loc : empty, "defaults", "defaults",
                             "a mapping of topic settings"));
  FLOE_ASSIGN_OR_RAISE(TopicOverrides d, ParseTopicSettings(df));
  TopicSettings& ds = config.defaults;
  ds.table_namespace = *d.table_namespace;
  ds.formats = *d.formats;
  ds.commit_interval_ms = *d.commit_interval_ms;
  ds.target_file_size_bytes = *d.target_file_size_bytes;
  ds.zstd_level = *d.zstd_level;
  ds.dictionary_page_size_bytes = *d.dictionary_page_size_bytes;
  ds.snapshot_retention_ms = *d.snapshot_retention_ms;
  ds.snapshot_min_count = *d.snapshot_min_count;
  ds.retention_ms = *d.retention_ms;
  ds.compaction.min_input_files = *d.compaction_min_input_files;
  ds.compaction.small_file_bytes = *d.compaction_small_file_bytes;
  ds.compaction.max_input_bytes = *d.compaction_max_input_bytes;
  ds.compaction.max_wait_ms = *d.compaction_max_wait_ms;
  ds.compaction.sort_order = d.compaction_sort_order.value_or("");
  ds.compaction.copy_row_group_bytes = *d.compaction_copy_row_group_bytes;
  ds.on_invalid_record = *d.on_invalid_record;
  ds.key_format = *d.key_format;
  ds.value_format = *d.value_format;
  ds.dropped_fields = *d.dropped_fields;
  ds.on_table_dropped = *d.on_table_dropped;

  FLOE_RETURN_NOT_OK(ParseTopics(root.Find("topics"), &config));

  // registry.url is required as soon as one entry decodes with the registry.
  if (config.registry.url.empty()) {
    for (size_t i = 0; i < config.topics.size(); ++i) {
      const TopicOverrides& o = config.topics[i].overrides;
      ValueFormat vf = o.value_format.value_or(ds.value_format);
      KeyFormat kf = o.key_format.value_or(ds.key_format);
      if (vf == ValueFormat::kRegistry || vf == ValueFormat::kJson ||
          kf == KeyFormat::kRegistry) {
        return Fail(-1, "registry.url",
                    fmt::format("required key is missing: topics[{}] uses the Schema "
                                "Registry (value.format registry or json, or key.format "
                                "registry); set e.g. registry: "
                                "{{url: http://127.0.0.1:8081}}",
                                i));
      }
    }
  }

  // Orphan cleanup must never race a commit: a data file is committed within one commit
  // interval of being written (docs/maintenance.md).
  int64_t longest_interval = config.defaults.commit_interval_ms;
  for (const TopicEntry& e : config.topics) {
    longest_interval =
        std::max(longest_interval, e.overrides.commit_interval_ms.value_or(0));
  }
  if (config.maintenance.orphan_min_age_ms < 2 * longest_interval) {
    return Fail(-1, "maintenance.orphan.min.age.ms",
                fmt::format("{} is less than twice the longest commit.interval.ms ({}): "
                            "orphan cleanup could delete a file about to be committed",
                            config.maintenance.orphan_min_age_ms, longest_interval));
  }

  // Entries naming one topic each are known now: their tables must not collide.
  std::vector<std::string> names;
  for (const TopicEntry& e : config.topics) {
    if (!e.name.empty()) names.push_back(e.name);
  }
  Status collisions = CheckTableCollisions(config, names);
  if (!collisions.ok()) return Fail(-1, "topics", collisions.message());
  return config;
}

}  // namespace internal

namespace {

Result<Config> ParseWithSource(const std::string& text, const std::string& base_dir,
                               const std::string& source) {
  std::error_code ec;
  fs::path base = base_dir.empty() ? fs::current_path(ec) : fs::absolute(base_dir, ec);
  if (ec) {
    return InvalidConfig(fmt::format("cannot resolve the config directory '{}': {}",
                                     base_dir, ec.message()));
  }
  return Parser(source, base.lexically_normal()).Parse(text);
}

}  // namespace

std::string_view ToString(TableFormat v) { return NameOf(internal::kTableFormats, v); }
std::string_view ToString(InvalidRecordPolicy v) {
  return NameOf(internal::kInvalidRecordPolicies, v);
}
std::string_view ToString(KeyFormat v) { return NameOf(internal::kKeyFormats, v); }
std::string_view ToString(ValueFormat v) { return NameOf(internal::kValueFormats, v); }
std::string_view ToString(CatalogType v) { return NameOf(kCatalogTypes, v); }
std::string_view ToString(DroppedFieldPolicy v) {
  return NameOf(internal::kDroppedFieldPolicies, v);
}
std::string_view ToString(DroppedTablePolicy v) {
  return NameOf(internal::kDroppedTablePolicies, v);
}

std::string CatalogSettings::Display() const {
  std::string out = uri;
  // scheme://user:password@host...: the password is the part after the user's ':'.
  const size_t scheme = out.find("://");
  if (scheme != std::string::npos) {
    const size_t at = out.find('@', scheme + 3);
    const size_t colon = out.find(':', scheme + 3);
    if (at != std::string::npos && colon != std::string::npos && colon < at) {
      out = out.substr(0, colon + 1) + "***" + out.substr(at);
    }
  }
  // ...?password=...&sslpassword=...: each parameter's value up to the next '&'.
  const size_t query = out.find('?');
  if (query == std::string::npos) return out;
  for (const char* key : {"password=", "sslpassword="}) {
    for (size_t pos = out.find(key, query); pos != std::string::npos;
         pos = out.find(key, pos + 1)) {
      const char before = out[pos - 1];
      if (before != '?' && before != '&') continue;  // "sslpassword=" holds "password="
      const size_t value = pos + std::string_view(key).size();
      const size_t end = std::min(out.find('&', value), out.size());
      out.replace(value, end - value, "***");
    }
  }
  return out;
}

std::vector<std::string> TopicSettings::NamespaceLevels() const {
  return Split(table_namespace, '.');
}

Result<Config> LoadConfig(const std::string& path) {
  std::error_code ec;
  if (!fs::is_regular_file(path, ec)) {
    return InvalidConfig(
        fmt::format("cannot read config file '{}': {}", path,
                    fs::exists(path, ec) ? "not a regular file" : "no such file"));
  }
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  if (!in.good() && !in.eof()) {
    return InvalidConfig(fmt::format("cannot read config file '{}'", path));
  }
  fs::path dir = fs::absolute(path, ec).parent_path();
  if (ec) {
    return InvalidConfig(fmt::format("cannot resolve '{}': {}", path, ec.message()));
  }
  return ParseWithSource(text.str(), dir.string(), path);
}

Result<Config> ParseConfig(const std::string& yaml_text, const std::string& base_dir) {
  return ParseWithSource(yaml_text, base_dir, "");
}

}  // namespace floe::config
