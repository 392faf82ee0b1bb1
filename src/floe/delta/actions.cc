#include "floe/delta/actions.h"

#include <algorithm>
#include <set>

#include "floe/common/util.h"
#include "floe/delta/actions_internal.h"
#include "floe/delta/json_internal.h"
#include "floe/delta/type_widening.h"

namespace floe::delta {

namespace {

using internal::Json;

Json MapJson(const StringMap& m) {
  Json j = Json::object();
  for (const auto& [k, v] : m) j[k] = v;
  return j;
}

Json ListJson(const std::vector<std::string>& v) {
  Json j = Json::array();
  for (const auto& s : v) j.push_back(s);
  return j;
}

struct ToJsonVisitor {
  Json operator()(const Protocol& p) const {
    Json j = Json::object();
    j["minReaderVersion"] = p.min_reader_version;
    j["minWriterVersion"] = p.min_writer_version;
    if (p.reader_features) j["readerFeatures"] = ListJson(*p.reader_features);
    if (p.writer_features) j["writerFeatures"] = ListJson(*p.writer_features);
    return Json{{"protocol", std::move(j)}};
  }
  Json operator()(const Metadata& m) const {
    Json j = Json::object();
    j["id"] = m.id;
    if (m.name) j["name"] = *m.name;
    if (m.description) j["description"] = *m.description;
    j["format"] =
        Json{{"provider", m.format_provider}, {"options", MapJson(m.format_options)}};
    j["schemaString"] = m.schema_string;
    j["partitionColumns"] = ListJson(m.partition_columns);
    j["configuration"] = MapJson(m.configuration);
    if (m.created_time) j["createdTime"] = *m.created_time;
    return Json{{"metaData", std::move(j)}};
  }
  Json operator()(const AddFile& a) const {
    Json j = Json::object();
    j["path"] = a.path;
    j["partitionValues"] = MapJson(a.partition_values);
    j["size"] = a.size;
    j["modificationTime"] = a.modification_time;
    j["dataChange"] = a.data_change;
    if (a.stats) j["stats"] = *a.stats;
    if (!a.tags.empty()) j["tags"] = MapJson(a.tags);
    return Json{{"add", std::move(j)}};
  }
  Json operator()(const RemoveFile& r) const {
    Json j = Json::object();
    j["path"] = r.path;
    if (r.deletion_timestamp) j["deletionTimestamp"] = *r.deletion_timestamp;
    j["dataChange"] = r.data_change;
    if (r.extended_file_metadata) {
      j["extendedFileMetadata"] = true;
      j["partitionValues"] = MapJson(r.partition_values);
      if (r.size) j["size"] = *r.size;
    }
    return Json{{"remove", std::move(j)}};
  }
  Json operator()(const Txn& t) const {
    Json j = Json::object();
    j["appId"] = t.app_id;
    j["version"] = t.version;
    if (t.last_updated) j["lastUpdated"] = *t.last_updated;
    return Json{{"txn", std::move(j)}};
  }
  Json operator()(const CommitInfo& c) const {
    Json j = Json::object();
    j["timestamp"] = c.timestamp;
    j["operation"] = c.operation;
    j["operationParameters"] = MapJson(c.operation_parameters);
    j["engineInfo"] = c.engine_info;
    j["isBlindAppend"] = c.is_blind_append;
    return Json{{"commitInfo", std::move(j)}};
  }
};

Result<StringMap> GetMap(const Json& obj, const char* key, const char* what) {
  StringMap out;
  const Json* v = json::Find(obj, key);
  if (!v) return out;
  if (!v->is_object()) {
    return InvalidInput(std::string(what) + ": field '" + key + "' must be an object");
  }
  for (auto it = v->begin(); it != v->end(); ++it) {
    if (it->is_null())
      continue;  // a null partition value (Floe tables are unpartitioned)
    if (!it->is_string()) {
      return InvalidInput(std::string(what) + ": values of '" + key +
                          "' must be strings");
    }
    out[it.key()] = it->get<std::string>();
  }
  return out;
}

Result<std::optional<std::vector<std::string>>> GetOptList(const Json& obj,
                                                           const char* key,
                                                           const char* what) {
  const Json* v = json::Find(obj, key);
  if (!v) return std::optional<std::vector<std::string>>();
  FLOE_ASSIGN_OR_RAISE(auto list, ::floe::json::AsStringList(*v, key, what));
  return std::optional<std::vector<std::string>>(std::move(list));
}

Result<int> GetInt(const Json& obj, const char* key, const char* what) {
  FLOE_ASSIGN_OR_RAISE(int64_t v, json::GetInt64(obj, key, what));
  if (v < 0 || v > 1000) {
    return InvalidInput(std::string(what) + ": '" + key + "' out of range");
  }
  return static_cast<int>(v);
}

Result<Action> ParseProtocol(const Json& j) {
  const char* what = "Delta protocol action";
  Protocol p;
  FLOE_ASSIGN_OR_RAISE(p.min_reader_version, GetInt(j, "minReaderVersion", what));
  FLOE_ASSIGN_OR_RAISE(p.min_writer_version, GetInt(j, "minWriterVersion", what));
  FLOE_ASSIGN_OR_RAISE(p.reader_features, GetOptList(j, "readerFeatures", what));
  FLOE_ASSIGN_OR_RAISE(p.writer_features, GetOptList(j, "writerFeatures", what));
  return p;
}

Result<Action> ParseMetadata(const Json& j) {
  const char* what = "Delta metaData action";
  Metadata m;
  FLOE_ASSIGN_OR_RAISE(m.id, json::GetString(j, "id", what));
  FLOE_ASSIGN_OR_RAISE(m.name, json::GetOptString(j, "name", what));
  FLOE_ASSIGN_OR_RAISE(m.description, json::GetOptString(j, "description", what));
  if (const Json* f = json::Find(j, "format")) {
    FLOE_ASSIGN_OR_RAISE(m.format_provider, json::GetString(*f, "provider", what));
    FLOE_ASSIGN_OR_RAISE(m.format_options, GetMap(*f, "options", what));
  }
  FLOE_ASSIGN_OR_RAISE(m.schema_string, json::GetString(j, "schemaString", what));
  FLOE_ASSIGN_OR_RAISE(auto cols, GetOptList(j, "partitionColumns", what));
  if (cols) m.partition_columns = std::move(*cols);
  FLOE_ASSIGN_OR_RAISE(m.configuration, GetMap(j, "configuration", what));
  FLOE_ASSIGN_OR_RAISE(m.created_time, json::GetOptInt64(j, "createdTime", what));
  return m;
}

Result<Action> ParseAdd(const Json& j) {
  const char* what = "Delta add action";
  AddFile a;
  FLOE_ASSIGN_OR_RAISE(a.path, json::GetString(j, "path", what));
  FLOE_ASSIGN_OR_RAISE(a.partition_values, GetMap(j, "partitionValues", what));
  FLOE_ASSIGN_OR_RAISE(a.size, json::GetInt64(j, "size", what));
  FLOE_ASSIGN_OR_RAISE(a.modification_time, json::GetInt64(j, "modificationTime", what));
  FLOE_ASSIGN_OR_RAISE(a.data_change, json::GetBool(j, "dataChange", what, true));
  FLOE_ASSIGN_OR_RAISE(a.stats, json::GetOptString(j, "stats", what));
  FLOE_ASSIGN_OR_RAISE(a.tags, GetMap(j, "tags", what));
  if (json::Find(j, "deletionVector")) {
    return InvalidInput("Delta add action for " + a.path +
                        " has a deletion vector, which Floe does not support");
  }
  return a;
}

Result<Action> ParseRemove(const Json& j) {
  const char* what = "Delta remove action";
  RemoveFile r;
  FLOE_ASSIGN_OR_RAISE(r.path, json::GetString(j, "path", what));
  FLOE_ASSIGN_OR_RAISE(r.deletion_timestamp,
                       json::GetOptInt64(j, "deletionTimestamp", what));
  FLOE_ASSIGN_OR_RAISE(r.data_change, json::GetBool(j, "dataChange", what, true));
  FLOE_ASSIGN_OR_RAISE(r.extended_file_metadata,
                       json::GetBool(j, "extendedFileMetadata", what, false));
  FLOE_ASSIGN_OR_RAISE(r.partition_values, GetMap(j, "partitionValues", what));
  FLOE_ASSIGN_OR_RAISE(r.size, json::GetOptInt64(j, "size", what));
  return r;
}

Result<Action> ParseTxn(const Json& j) {
  const char* what = "Delta txn action";
  Txn t;
  FLOE_ASSIGN_OR_RAISE(t.app_id, json::GetString(j, "appId", what));
  FLOE_ASSIGN_OR_RAISE(t.version, json::GetInt64(j, "version", what));
  FLOE_ASSIGN_OR_RAISE(t.last_updated, json::GetOptInt64(j, "lastUpdated", what));
  return t;
}

// commitInfo is free-form ("any valid JSON"): read what is there, never fail.
Action ParseCommitInfo(const Json& j) {
  CommitInfo c;
  if (auto v = json::GetOptInt64(j, "timestamp", ""); v.ok() && *v) c.timestamp = **v;
  if (auto v = json::GetOptString(j, "operation", ""); v.ok() && *v) c.operation = **v;
  if (auto v = json::GetOptString(j, "engineInfo", ""); v.ok() && *v) c.engine_info = **v;
  if (auto v = GetMap(j, "operationParameters", ""); v.ok()) c.operation_parameters = *v;
  if (auto v = json::GetBool(j, "isBlindAppend", "", false); v.ok())
    c.is_blind_append = *v;
  return c;
}

}  // namespace

namespace internal {

Result<std::optional<Action>> ActionFromObject(const Json& wrapper) {
  if (!wrapper.is_object()) {
    return InvalidInput("a Delta log action must be a JSON object");
  }
  using Parser = Result<Action> (*)(const Json&);
  static constexpr std::pair<const char*, Parser> kParsers[] = {
      {"add", ParseAdd},
      {"remove", ParseRemove},
      {"txn", ParseTxn},
      {"metaData", ParseMetadata},
      {"protocol", ParseProtocol}};
  for (const auto& [key, parse] : kParsers) {
    if (const Json* body = json::Find(wrapper, key)) {
      if (!body->is_object())
        return InvalidInput(std::string("Delta '") + key + "' action is not an object");
      FLOE_ASSIGN_OR_RAISE(Action a, parse(*body));
      return std::optional<Action>(std::move(a));
    }
  }
  if (const Json* body = json::Find(wrapper, "commitInfo"); body && body->is_object()) {
    return std::optional<Action>(ParseCommitInfo(*body));
  }
  return std::optional<Action>();
}

}  // namespace internal

std::string ActionToJson(const Action& action) {
  return internal::Dump(std::visit(ToJsonVisitor{}, action));
}

Result<std::optional<Action>> ActionFromJson(std::string_view line) {
  FLOE_ASSIGN_OR_RAISE(Json j, internal::Parse(line, "Delta log line"));
  return internal::ActionFromObject(j);
}

std::string EncodeActions(const std::vector<Action>& actions) {
  std::string out;
  for (const Action& a : actions) {
    out += ActionToJson(a);
    out.push_back('\n');
  }
  return out;
}

Result<std::vector<Action>> DecodeActions(std::string_view text) {
  std::vector<Action> out;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t end = text.find('\n', pos);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(pos, end - pos);
    pos = end + 1;
    if (line.find_first_not_of(" \t\r") == std::string_view::npos) continue;
    FLOE_ASSIGN_OR_RAISE(auto a, ActionFromJson(line));
    if (a) out.push_back(std::move(*a));
  }
  return out;
}

Protocol MakeProtocol(bool uses_timestamp_ntz, bool has_required_fields,
                      bool uses_type_widening) {
  Protocol p;
  std::vector<std::string> features = {kFeatureColumnMapping};
  if (uses_timestamp_ntz) features.emplace_back(kFeatureTimestampNtz);
  if (uses_type_widening) features.emplace_back(kFeatureTypeWidening);
  p.reader_features = features;
  if (has_required_fields) features.emplace_back(kFeatureInvariants);
  p.writer_features = std::move(features);
  return p;
}

namespace {

bool HasRequired(const std::vector<iceberg::NestedField>& fields) {
  for (const auto& f : fields) {
    // Struct fields only: Delta expresses list element / map value nullability as
    // containsNull / valueContainsNull, not as invariants.
    if (f.required) return true;
    if (f.type->id == iceberg::TypeId::kStruct && HasRequired(f.type->fields))
      return true;
  }
  return false;
}

}  // namespace

Result<Protocol> ProtocolFor(const iceberg::Schema& schema,
                             std::string_view previous_schema_string) {
  FLOE_ASSIGN_OR_RAISE(DeltaSchema ds, ToDeltaSchema(schema, {}, previous_schema_string));
  return MakeProtocol(ds.uses_timestamp_ntz, HasRequired(schema.fields),
                      ds.uses_type_widening);
}

namespace {

std::vector<std::string> Union(const std::optional<std::vector<std::string>>& a,
                               const std::optional<std::vector<std::string>>& b) {
  std::vector<std::string> out = a.value_or(std::vector<std::string>{});
  for (const std::string& f : b.value_or(std::vector<std::string>{})) {
    if (std::find(out.begin(), out.end(), f) == out.end()) out.push_back(f);
  }
  return out;
}

}  // namespace

Protocol MergeProtocols(const Protocol& existing, const Protocol& needed) {
  if (!existing.reader_features && !existing.writer_features) return needed;
  Protocol p;
  p.min_reader_version = std::max(existing.min_reader_version, needed.min_reader_version);
  p.min_writer_version = std::max(existing.min_writer_version, needed.min_writer_version);
  // Reader features exist only at reader version 3: a reader-2 table with writer
  // features keeps no reader list unless `needed` brings one.
  if (existing.reader_features || needed.reader_features) {
    p.reader_features = Union(existing.reader_features, needed.reader_features);
  }
  p.writer_features = Union(existing.writer_features, needed.writer_features);
  return p;
}

Result<Metadata> MakeMetadata(const std::string& table_uuid,
                              const iceberg::Schema& schema, int64_t created_time_ms,
                              const PhysicalNames& overrides, int max_column_id,
                              std::string_view previous_schema_string) {
  FLOE_ASSIGN_OR_RAISE(DeltaSchema ds,
                       ToDeltaSchema(schema, overrides, previous_schema_string));
  Metadata m;
  m.id = table_uuid;
  m.schema_string = std::move(ds.schema_string);
  m.configuration["delta.columnMapping.mode"] = "name";
  m.configuration["delta.columnMapping.maxColumnId"] =
      std::to_string(std::max(ds.max_column_id, max_column_id));
  // PROTOCOL.md "Type Widening": writers must reject widenings unless it is true.
  if (ds.uses_type_widening) m.configuration[kEnableTypeWideningKey] = "true";
  m.created_time = created_time_ms;
  return m;
}

Result<std::string> RelativePath(const std::string& file_uri,
                                 const std::string& table_root_uri) {
  const std::string root = TrimTrailingSlashes(table_root_uri) + "/";
  if (file_uri.size() <= root.size() || file_uri.compare(0, root.size(), root) != 0) {
    return InvalidConfig("data file " + file_uri + " is not under the Delta table root " +
                         table_root_uri);
  }
  std::string_view rel(file_uri);
  rel.remove_prefix(root.size());
  return PercentEncode(rel, /*keep_slash=*/true);
}

Result<AddFile> MakeAddFile(const iceberg::DataFile& file,
                            const std::string& table_root_uri,
                            const iceberg::Schema& schema, int64_t modification_time_ms,
                            const PhysicalNames& overrides,
                            const StatsOptions& stats_options) {
  AddFile a;
  FLOE_ASSIGN_OR_RAISE(a.path, RelativePath(file.file_path, table_root_uri));
  a.size = file.file_size_in_bytes;
  a.modification_time = modification_time_ms;
  a.data_change = true;
  a.stats = DeltaStatsJson(file, schema, overrides, stats_options);
  return a;
}

Txn MakeTxn(std::string app_id, int64_t version, int64_t now_ms) {
  return Txn{std::move(app_id), version, now_ms};
}

CommitInfo MakeCommitInfo(std::string operation, StringMap operation_parameters,
                          std::string engine_info, int64_t now_ms) {
  CommitInfo c;
  c.timestamp = now_ms;
  c.operation = std::move(operation);
  c.operation_parameters = std::move(operation_parameters);
  c.engine_info = std::move(engine_info);
  c.is_blind_append = true;
  return c;
}

Status CheckWritable(const Protocol& protocol) {
  static const std::set<std::string> kHonoured = {
      kFeatureColumnMapping, kFeatureTimestampNtz,        kFeatureInvariants,
      kFeatureTypeWidening,  kFeatureTypeWideningPreview, "appendOnly"};
  // Writer versions 3..6 imply features Floe does not implement (check constraints,
  // generated columns, change data feed, identity columns).
  if (protocol.min_reader_version > 3 || protocol.min_writer_version > 7 ||
      (protocol.min_writer_version >= 3 && protocol.min_writer_version <= 6)) {
    return InvalidConfig("Delta protocol " + std::to_string(protocol.min_reader_version) +
                         "/" + std::to_string(protocol.min_writer_version) +
                         " is not one Floe writes (it writes 3/7 with table features)");
  }
  for (const auto* list : {&protocol.reader_features, &protocol.writer_features}) {
    if (!*list) continue;
    for (const std::string& f : **list) {
      if (!kHonoured.count(f)) {
        return InvalidConfig(
            "Delta table feature '" + f +
            "' is not supported by Floe; another writer enabled it, so Floe "
            "cannot keep mirroring this table");
      }
    }
  }
  return Status::OK();
}

}  // namespace floe::delta
