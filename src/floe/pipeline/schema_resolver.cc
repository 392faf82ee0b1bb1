#include "floe/pipeline/schema_resolver.h"

#include <arrow/array/builder_nested.h>
#include <google/protobuf/descriptor.h>

#include <algorithm>

#include "floe/avro/schema.h"
#include "floe/common/log.h"
#include "floe/decode/raw_decoder.h"
#include "floe/kafka/consumer.h"
#include "floe/pipeline/table_faults.h"
#include "floe/pipeline/table_setup.h"
#include "floe/pipeline/topic_state.h"
#include "floe/schema/avro_to_iceberg.h"
#include "floe/schema/json_schema.h"
#include "floe/schema/protobuf_schema.h"

namespace floe::pipeline {
namespace {

// Schema references (Protobuf imports) nest at most this deep.
constexpr int kMaxReferenceDepth = 32;

bool SamePath(const registry::MessageIndexes& a, const registry::MessageIndexes& b) {
  return std::equal(a.begin(), a.end(), b.begin(), b.end());
}

// An Avro key that is not a record (a string, a long, ...) is read as a record with one
// field `key`: its binary encoding is the same bytes.
Result<avro::Schema> WrapAvroKey(const std::string& text, const std::string& what) {
  auto wrapped = avro::Schema::Parse(
      R"({"type":"record","name":"floe_key","fields":[{"name":"key","type":)" + text +
      "}]}");
  if (!wrapped.ok()) return InvalidRecord(what + ": " + wrapped.status().message());
  return std::move(*wrapped);
}

// How long a schema found registered only under other subjects stays judged so before
// the registry is asked again.
constexpr int64_t kStrayRecheckMs = 5 * 60 * 1000;

// The registry subject of the topic's values (`value.subject`) or keys (`<topic>-key`).
std::string SubjectOf(const TopicState& ts, bool key) {
  return key ? ts.settings.topic + "-key" : ts.settings.value_subject;
}

// A registered schema whose types the table cannot take (int → long, a nullable field
// for a required column, a schema of another format): its records are not bad
// records, the table is behind the producers. The topic suspends at the first one,
// whatever on.invalid.record says, so nothing is skipped (docs/configuration.md).
Status Incompatible(const TopicState& ts, const std::string& what, const Status& why) {
  return Suspend(what + " does not fit table " + ts.ident.ToString() + ": " +
                 why.message() +
                 "; its records are kept in Kafka (the topic stops here, nothing is "
                 "skipped)");
}

}  // namespace

Status SchemaResolver::Plan(TopicState& ts, const kafka::Record& r, RowPlan* plan) {
  FLOE_RETURN_NOT_OK(EnsureKeyField(ts, r));
  if (ts.settings.value_format == config::ValueFormat::kBinary) {
    FLOE_RETURN_NOT_OK(tables_->EnsureRawTable(ts));
  } else {
    FLOE_ASSIGN_OR_RAISE(plan->value, ResolveValue(ts, r));
  }
  return ResolveKey(ts, r, plan);
}

Status SchemaResolver::Fill(TopicState& ts, const kafka::Record& r, const RowPlan& plan,
                            ::arrow::ArrayBuilder* const* columns) {
  if (ts.raw_value) {
    FLOE_RETURN_NOT_OK(ts.raw_value->Decode(r.value, r.value_len, columns));
  } else {
    FLOE_RETURN_NOT_OK(plan.value.Decode(columns));
  }
  return AppendKey(ts, r, plan, columns);
}

// The decoder for the record's value and the bytes it decodes: the registry framing (or,
// for value.format json, the subject's latest version) picks the schema; a Protobuf
// payload's message indexes pick the message. Compiles what it has not seen and creates
// the table writer on the first schema.
Result<ResolvedValue> SchemaResolver::ResolveValue(TopicState& ts,
                                                   const kafka::Record& r) {
  if (ts.settings.value_format == config::ValueFormat::kJson) {
    FLOE_ASSIGN_OR_RAISE(CompiledSchema * cs, JsonSubjectSchema(ts));
    ResolvedValue v;
    v.json = cs->json.get();
    v.data = r.value;
    v.size = r.value_len;
    return v;
  }
  return ResolveFramed(ts, r, Role::kValue, r.value, r.value_len);
}

// A Confluent-framed value or key (schema id in a header or a 5-byte prefix).
Result<ResolvedValue> SchemaResolver::ResolveFramed(TopicState& ts,
                                                    const kafka::Record& r, Role role,
                                                    const uint8_t* bytes, size_t len) {
  kafka::Header h;
  const char* header = role == Role::kValue ? registry::kValueSchemaIdHeader
                                            : registry::kKeySchemaIdHeader;
  bool has_header = r.FindHeader(header, &h);
  FLOE_ASSIGN_OR_RAISE(auto framing,
                       registry::DetectFraming(has_header ? h.value : nullptr,
                                               has_header ? h.value_len : 0, bytes, len));
  FLOE_ASSIGN_OR_RAISE(CompiledSchema * cs, SchemaFor(ts, framing, role));
  if (!cs->invalid.ok()) return cs->invalid;
  ResolvedValue v;
  v.data = framing.payload;
  v.size = framing.payload_len;
  if (!cs->protobuf && framing.header_rest_len > 0) {
    return InvalidRecord("schema id header has " +
                         std::to_string(framing.header_rest_len) +
                         " bytes after the id; only Protobuf puts message indexes there");
  }
  if (cs->avro) {
    v.avro = cs->avro.get();
  } else if (cs->json) {
    v.json = cs->json.get();
  } else {
    // Message indexes: in the header after the id when the header carries any
    // (Confluent's header serializers), else at the start of the payload.
    size_t consumed = 0;
    registry::MessageIndexes path;
    if (framing.header_rest_len > 0) {
      FLOE_ASSIGN_OR_RAISE(
          path, registry::ParseMessageIndexes(framing.header_rest,
                                              framing.header_rest_len, &consumed));
      if (consumed != framing.header_rest_len) {
        return InvalidRecord("schema id header has " +
                             std::to_string(framing.header_rest_len - consumed) +
                             " bytes after the message indexes");
      }
    } else {
      FLOE_ASSIGN_OR_RAISE(path,
                           registry::ParseMessageIndexes(v.data, v.size, &consumed));
      v.data += consumed;
      v.size -= consumed;
    }
    CompiledMessage* m = nullptr;
    for (auto& candidate : cs->messages) {
      if (SamePath(candidate.path, path)) {
        m = &candidate;
        break;
      }
    }
    if (m == nullptr) {
      FLOE_ASSIGN_OR_RAISE(m, CompileMessage(ts, *cs, path, role));
    }
    if (!m->invalid.ok()) return m->invalid;
    v.protobuf = m->decoder.get();
  }
  return v;
}

// The compiled schema of a framed record, fetched from the registry on first sight.
Result<CompiledSchema*> SchemaResolver::SchemaFor(TopicState& ts,
                                                  const registry::Framing& f, Role role) {
  auto& schemas = role == Role::kValue ? ts.schemas.values : ts.schemas.keys;
  auto& guid_ids = role == Role::kValue ? ts.schemas.value_guids : ts.schemas.key_guids;
  int id = f.schema_id;
  std::shared_ptr<const registry::RegisteredSchema> fetched;
  if (f.source == registry::Framing::Source::kHeaderGuid) {
    std::string guid = f.GuidString();
    auto git = guid_ids.find(guid);
    if (git != guid_ids.end()) {
      id = git->second;
    } else {
      FLOE_ASSIGN_OR_RAISE(fetched, registry_->ByGuid(guid));
      // A registry that does not return the numeric id with the GUID gets a private key
      // (negative, never a real id) so decoders of different GUIDs never mix.
      id = fetched->id >= 0 ? fetched->id : -static_cast<int>(guid_ids.size()) - 1;
      guid_ids[guid] = id;
    }
  }
  auto it = schemas.find(id);
  if (it != schemas.end()) {
    if (it->second.recheck_at_ms < 0 || clock_() < it->second.recheck_at_ms) {
      return &it->second;
    }
    schemas.erase(it);  // a stray verdict's window ended: asked again
  }
  if (!fetched) {
    FLOE_ASSIGN_OR_RAISE(fetched, registry_->ById(id));
  }
  FLOE_ASSIGN_OR_RAISE(std::string stray, OtherSubjects(ts, id, role));
  if (!stray.empty()) {
    // Never compiled against the table (its fields must not evolve the table): every
    // record of this id is an invalid record, until the registry is asked again (the
    // same schema may be registered under the topic's subject meanwhile).
    CompiledSchema& cs = schemas[id];
    cs.invalid = InvalidRecord(stray);
    cs.recheck_at_ms = clock_() + kStrayRecheckMs;
    FLOE_LOG_WARN("table {}: {}", ts.ident.ToString(), stray);
    return &cs;
  }
  return Compile(ts, id, *fetched, role);
}

// value.format json: the latest version of the topic's subject (looked up once, then
// refreshed by RefreshJsonSubjects).
Result<CompiledSchema*> SchemaResolver::JsonSubjectSchema(TopicState& ts) {
  auto it = ts.schemas.values.find(ts.schemas.json_schema_id);
  if (ts.schemas.json_schema_id >= 0 && it != ts.schemas.values.end()) return &it->second;
  std::shared_ptr<const registry::RegisteredSchema> latest;
  if (ts.schemas.json_schema_id >= 0) {
    FLOE_ASSIGN_OR_RAISE(latest, registry_->ById(ts.schemas.json_schema_id));
  } else {
    auto fetched = registry_->BySubjectVersion(ts.settings.value_subject, 0);
    if (!fetched.ok() && KindOf(fetched.status()) == ErrorKind::kNotFound) {
      // A missing subject is a setup problem, not a bad record: never skip records for
      // it.
      return Suspend(fetched.status().message() +
                     "; value.format: json reads the latest "
                     "JSON Schema of subject '" +
                     ts.settings.value_subject + "' (set value.subject to use another)");
    }
    FLOE_ASSIGN_OR_RAISE(latest, std::move(fetched));
  }
  if (latest->type != registry::SchemaType::kJson) {
    return Suspend("subject '" + ts.settings.value_subject + "' holds a " +
                   latest->type_name + " schema; value.format: json needs a JSON Schema");
  }
  ts.schemas.json_schema_id = latest->id;
  return Compile(ts, latest->id, *latest, Role::kValue);
}

// True when the subject has a newer JSON Schema than the one in use (now in use). With
// `rate_limited`, asks the registry at most once per second per topic.
bool SchemaResolver::CheckJsonSubject(TopicState& ts, bool rate_limited) {
  const std::string& topic = ts.settings.topic;
  if (ts.suspended || ts.schemas.json_schema_id < 0) return false;
  const int64_t now = clock_();
  if (rate_limited && now - ts.schemas.json_checked_ms < 1000) return false;
  ts.schemas.json_checked_ms = now;
  auto latest = registry_->BySubjectVersion(ts.settings.value_subject, 0);
  if (!latest.ok()) {
    FLOE_LOG_WARN("topic {}: cannot check subject '{}' for a new version: {}", topic,
                  ts.settings.value_subject, latest.status().message());
    return false;
  }
  if ((*latest)->id == ts.schemas.json_schema_id ||
      (*latest)->type != registry::SchemaType::kJson)
    return false;
  FLOE_LOG_INFO(
      "topic {}: subject '{}' has version {} (schema id {}); decoding with it "
      "from now on",
      topic, ts.settings.value_subject, (*latest)->version, (*latest)->id);
  ts.schemas.json_schema_id = (*latest)->id;
  return true;
}

// A schema id registered only under other subjects while the topic's own subject exists:
// a producer writing to the wrong topic. Its records are invalid records, which
// on.invalid.record decides (skip, dlq, suspend); a schema of the topic's own subject
// that the table cannot take suspends instead (Incompatible), since skipping would drop
// every later record of its producer (docs/type-mapping.md, "Schemas of other
// subjects"). When the topic's subject does not exist (a producer with
// RecordNameStrategy, say), or the id has no subject (a private GUID key), nothing can be
// told and the schema is used. Returns "" or the reason.
Result<std::string> SchemaResolver::OtherSubjects(TopicState& ts, int id, Role role) {
  if (id < 0) return std::string();
  const std::string own = SubjectOf(ts, role == Role::kKey);
  auto subjects = registry_->SubjectVersionsOf(id);
  if (!subjects.ok()) {
    if (KindOf(subjects.status()) == ErrorKind::kNotFound) return std::string();
    return subjects.status();
  }
  if (subjects->empty()) return std::string();
  for (const auto& sv : *subjects) {
    if (sv.subject == own) return std::string();
  }
  auto own_latest = registry_->BySubjectVersion(own, 0);
  if (!own_latest.ok()) {
    if (KindOf(own_latest.status()) == ErrorKind::kNotFound) return std::string();
    return own_latest.status();
  }
  std::string where;
  for (size_t i = 0; i < subjects->size() && i < 3; ++i) {
    if (i > 0) where += ", ";
    where += "'" + (*subjects)[i].subject + "' version " +
             std::to_string((*subjects)[i].version);
  }
  if (subjects->size() > 3)
    where += " and " + std::to_string(subjects->size() - 3) + " more";
  return std::string(role == Role::kKey ? "key " : "") + "schema id " +
         std::to_string(id) + " is registered under subject " + where +
         ", not under this topic's subject '" + own +
         "': a record of another subject (a producer writing to the wrong topic?)";
}

// Maps a value schema to the table (creating it on the first schema), or checks a key
// schema against the `key` column, and compiles the decoder. Protobuf message decoders
// are compiled per message-index path later (CompileMessage).
Result<CompiledSchema*> SchemaResolver::Compile(TopicState& ts, int id,
                                                const registry::RegisteredSchema& s,
                                                Role role) {
  const std::string what =
      (role == Role::kKey ? "key schema " : "schema ") + std::to_string(id);
  FLOE_RETURN_NOT_OK(ReadCompatibility(ts, role));
  CompiledSchema cs;
  if (s.type == registry::SchemaType::kAvro) {
    auto parsed = avro::Schema::Parse(s.schema);
    if (!parsed.ok()) return InvalidRecord(what + ": " + parsed.status().message());
    if (role == Role::kValue) {
      auto fields = schema::AvroToIcebergFields(*parsed);
      if (!fields.ok()) return InvalidRecord(what + ": " + fields.status().message());
      FLOE_RETURN_NOT_OK(tables_->PrepareTable(ts, what, std::move(*fields)));
    } else {
      const bool wrapped = parsed->root().type != avro::Type::kRecord;
      if (wrapped) {
        FLOE_ASSIGN_OR_RAISE(parsed, WrapAvroKey(s.schema, what));
      }
      auto fields = schema::AvroToIcebergFields(*parsed);
      if (!fields.ok()) return InvalidRecord(what + ": " + fields.status().message());
      FLOE_RETURN_NOT_OK(EvolveKey(ts, what, std::move(*fields), wrapped, false));
    }
    decode::AvroDecoderOptions options;
    options.skip_columns = SkipColumns(ts, role);
    FLOE_ASSIGN_OR_RAISE(auto target, DecodeTarget(ts, role));
    auto decoder = decode::AvroDecoder::Make(*parsed, target, options);
    if (decoder.ok()) {
      cs.avro = std::move(*decoder);
    } else {
      cs.invalid = Incompatible(ts, what, decoder.status());
    }
  } else if (s.type == registry::SchemaType::kJson) {
    if (!s.references.empty()) {
      return InvalidRecord(what +
                           ": JSON Schema references to other subjects are not "
                           "supported; use local $ref/$defs");
    }
    auto json = schema::JsonSchema::Parse(s.schema);
    if (!json.ok()) return InvalidRecord(what + ": " + json.status().message());
    if (role == Role::kValue) {
      auto fields = schema::JsonSchemaToIcebergFields(*json);
      if (!fields.ok()) return InvalidRecord(what + ": " + fields.status().message());
      FLOE_RETURN_NOT_OK(tables_->PrepareTable(ts, what, std::move(*fields)));
    } else {
      auto fields = schema::JsonSchemaToIcebergFields(*json);
      if (!fields.ok()) return InvalidRecord(what + ": " + fields.status().message());
      FLOE_RETURN_NOT_OK(EvolveKey(ts, what, std::move(*fields), false, false));
    }
    decode::JsonDecoderOptions options;
    options.skip_columns = SkipColumns(ts, role);
    FLOE_ASSIGN_OR_RAISE(auto target, DecodeTarget(ts, role));
    auto decoder = decode::JsonDecoder::Make(*json, target, options);
    if (decoder.ok()) {
      cs.json = std::move(*decoder);
    } else {
      cs.invalid = Incompatible(ts, what, decoder.status());
    }
  } else if (s.type == registry::SchemaType::kProtobuf) {
    FLOE_ASSIGN_OR_RAISE(cs.protobuf, ParseProtobuf(s, what));
  } else {
    return InvalidRecord(what + " has schemaType '" + s.type_name +
                         "'; Floe reads AVRO, PROTOBUF and JSON");
  }
  auto& slot = (role == Role::kValue ? ts.schemas.values : ts.schemas.keys)[id];
  slot = std::move(cs);
  if (slot.invalid.ok()) {
    FLOE_LOG_INFO("table {}: compiled {} {}", ts.ident.ToString(), s.type_name, what);
  } else {
    FLOE_LOG_WARN("table {}: {}", ts.ident.ToString(), slot.invalid.message());
  }
  return &slot;
}

// The compatibility level of the role's subject (`value.subject`, or `<topic>-key`), read
// again for every new schema id (a level can change at any time) into ts.compatibility
// or ts.key_compatibility. An outage pauses the topic (the caller retries); a registry
// that has no level for the subject leaves Floe's rules alone ("").
Status SchemaResolver::ReadCompatibility(TopicState& ts, Role role) {
  const std::string subject = SubjectOf(ts, role == Role::kKey);
  std::string& out = role == Role::kValue ? ts.compatibility : ts.key_compatibility;
  auto level = registry_->Compatibility(subject);
  if (!level.ok()) {
    if (PausesTopic(level.status())) return level.status();
    FLOE_LOG_WARN_EVERY(subject, 60000,
                        "topic {}: no compatibility level for subject {} ({}); Floe's "
                        "own evolution rules decide",
                        ts.settings.topic, subject, level.status().message());
    out.clear();
    return Status::OK();
  }
  bool known = false;
  (void)schema::ParseCompatibility(*level, &known);
  if (!known) {
    FLOE_LOG_WARN_EVERY(
        subject, 60000,
        "topic {}: subject {} has compatibility level {}, which this "
        "version of Floe does not know; Floe's own evolution rules decide",
        ts.settings.topic, subject, *level);
  }
  if (*level != out) {
    FLOE_LOG_INFO("topic {}: subject {} has compatibility level {}", ts.settings.topic,
                  subject, *level);
  }
  out = *level;
  return Status::OK();
}

// key.format: registry, once the table exists: the `key` column for the key schema's
// fields (a struct, or the Avro primitive a wrapped key holds) evolves the table.
Status SchemaResolver::EvolveKey(TopicState& ts, const std::string& what,
                                 std::vector<iceberg::NestedField> fields, bool wrapped,
                                 bool protobuf) {
  if (!ts.writer && !ts.table.schema) return Status::OK();
  iceberg::NestedField key =
      wrapped ? fields.front()
              : iceberg::NestedField{0,
                                     decode::kKeyColumn,
                                     false,
                                     iceberg::Type::Struct(std::move(fields)),
                                     {}};
  key.required = false;
  return tables_->EvolveKey(ts, what, std::move(key), protobuf, ts.key_compatibility);
}

Result<std::shared_ptr<const schema::ProtobufSchema>> SchemaResolver::ParseProtobuf(
    const registry::RegisteredSchema& s, const std::string& what) {
  std::map<std::string, std::string> imports;
  FLOE_RETURN_NOT_OK(ResolveImports(s, &imports, 0));
  auto proto = schema::ProtobufSchema::Make(s.schema, imports);
  if (!proto.ok()) return InvalidRecord(what + ": " + proto.status().message());
  return std::move(*proto);
}

// The schema a decoder fills: the table for a value; for a key, the `key` struct's
// fields (decoded into the struct's child builders) or the primitive `key` column alone.
Result<iceberg::Schema> SchemaResolver::DecodeTarget(const TopicState& ts, Role role) {
  if (role == Role::kValue) return ts.writer->schema();
  const iceberg::NestedField* key = ts.writer->schema().FindTopLevel(decode::kKeyColumn);
  if (key == nullptr)
    return Suspend("table " + ts.ident.ToString() + " has no key column");
  iceberg::Schema target;
  if (key->type->id == iceberg::TypeId::kStruct) {
    target.fields = key->type->fields;
  } else {
    target.fields = {*key};
  }
  return target;
}

// The Protobuf message a payload's message indexes select, mapped and compiled once.
Result<CompiledMessage*> SchemaResolver::CompileMessage(
    TopicState& ts, CompiledSchema& cs, const registry::MessageIndexes& path, Role role) {
  FLOE_ASSIGN_OR_RAISE(
      const auto* message,
      cs.protobuf->MessageAt(path.data(), static_cast<size_t>(path.size)));
  const std::string what =
      (role == Role::kKey ? "key Protobuf message " : "Protobuf message ") +
      message->full_name();
  if (role == Role::kValue) {
    auto fields = schema::ProtobufToIcebergFields(*message);
    if (!fields.ok()) return InvalidRecord(what + ": " + fields.status().message());
    FLOE_RETURN_NOT_OK(
        tables_->PrepareTable(ts, what, std::move(*fields), /*protobuf=*/true));
  } else {
    auto fields = schema::ProtobufToIcebergFields(*message);
    if (!fields.ok()) return InvalidRecord(what + ": " + fields.status().message());
    FLOE_RETURN_NOT_OK(EvolveKey(ts, what, std::move(*fields), false, true));
  }
  decode::ProtobufDecoderOptions options;
  options.skip_columns = SkipColumns(ts, role);
  FLOE_ASSIGN_OR_RAISE(auto target, DecodeTarget(ts, role));
  CompiledMessage m;
  m.path = path;
  auto decoder = decode::ProtobufDecoder::Make(*message, target, options);
  if (decoder.ok()) {
    m.decoder = std::move(*decoder);
    FLOE_LOG_INFO("table {}: compiled decoder for {}", ts.ident.ToString(), what);
  } else {
    m.invalid = Incompatible(ts, what, decoder.status());
    FLOE_LOG_WARN("table {}: {}", ts.ident.ToString(), m.invalid.message());
  }
  cs.messages.push_back(std::move(m));
  return &cs.messages.back();
}

// Protobuf imports: each schema reference (recursively) fetched by subject and version
// and named by its import path.
Status SchemaResolver::ResolveImports(const registry::RegisteredSchema& s,
                                      std::map<std::string, std::string>* imports,
                                      int depth) {
  if (depth >= kMaxReferenceDepth) {
    return InvalidRecord("schema references nest deeper than " +
                         std::to_string(kMaxReferenceDepth));
  }
  for (const auto& ref : s.references) {
    if (imports->count(ref.name)) continue;
    FLOE_ASSIGN_OR_RAISE(auto dep, registry_->BySubjectVersion(ref.subject, ref.version));
    (*imports)[ref.name] = dep->schema;
    FLOE_RETURN_NOT_OK(ResolveImports(*dep, imports, depth + 1));
  }
  return Status::OK();
}

std::vector<std::string> SchemaResolver::SkipColumns(const TopicState& ts, Role role) {
  if (role == Role::kValue && ts.settings.key_format != config::KeyFormat::kBinary) {
    return {decode::kKeyColumn};
  }
  return {};
}

// key.format: registry: the `key` column's type comes from the table once it exists;
// before that, from the schema of the first record's key, or when that record has no
// key, from the latest version of the subject `<topic>-key`.
Status SchemaResolver::EnsureKeyField(TopicState& ts, const kafka::Record& r) {
  if (ts.settings.key_format != config::KeyFormat::kRegistry || ts.key_field) {
    return Status::OK();
  }
  const iceberg::Schema* table =
      ts.writer ? &ts.writer->schema() : (ts.table.schema ? &*ts.table.schema : nullptr);
  if (table != nullptr) {
    if (const auto* key = table->FindTopLevel(decode::kKeyColumn)) {
      ts.key_field = *key;
      return Status::OK();
    }
    return Suspend("table " + ts.ident.ToString() +
                   " has no `key` column, so it cannot take key.format: registry");
  }
  std::shared_ptr<const registry::RegisteredSchema> s;
  registry::MessageIndexes first;
  first.size = 1;
  const registry::MessageIndexes* path = &first;
  registry::MessageIndexes parsed;
  std::string what;
  if (r.key == nullptr) {
    const std::string subject = SubjectOf(ts, /*key=*/true);
    auto latest = registry_->BySubjectVersion(subject, 0);
    if (!latest.ok() && KindOf(latest.status()) == ErrorKind::kNotFound) {
      return Suspend("the first record has no key and subject '" + subject +
                     "' does not exist, so the type of the `key` column (key.format: "
                     "registry) is unknown: " +
                     latest.status().message());
    }
    FLOE_ASSIGN_OR_RAISE(s, std::move(latest));
    what = "key schema of subject '" + subject + "'";
  } else {
    kafka::Header h;
    bool has_header = r.FindHeader(registry::kKeySchemaIdHeader, &h);
    FLOE_ASSIGN_OR_RAISE(
        auto framing,
        registry::DetectFraming(has_header ? h.value : nullptr,
                                has_header ? h.value_len : 0, r.key, r.key_len));
    if (framing.source == registry::Framing::Source::kHeaderGuid) {
      FLOE_ASSIGN_OR_RAISE(s, registry_->ByGuid(framing.GuidString()));
    } else {
      FLOE_ASSIGN_OR_RAISE(s, registry_->ById(framing.schema_id));
    }
    if (s->type == registry::SchemaType::kProtobuf) {
      // The message indexes: in the header after the id, else at the payload's start.
      const bool in_header = framing.header_rest_len > 0;
      size_t consumed = 0;
      FLOE_ASSIGN_OR_RAISE(
          parsed,
          registry::ParseMessageIndexes(
              in_header ? framing.header_rest : framing.payload,
              in_header ? framing.header_rest_len : framing.payload_len, &consumed));
      path = &parsed;
    }
    what = "key schema " + std::to_string(s->id);
  }
  FLOE_ASSIGN_OR_RAISE(ts.key_field, KeyFieldOf(*s, *path, what));
  return Status::OK();
}

// The `key` column for a key schema: a struct of a record's/message's/object's fields, or
// the Avro primitive itself. Optional: a record without a key gets a null.
Result<iceberg::NestedField> SchemaResolver::KeyFieldOf(
    const registry::RegisteredSchema& s, const registry::MessageIndexes& path,
    const std::string& what) {
  std::vector<iceberg::NestedField> fields;
  bool wrapped = false;
  if (s.type == registry::SchemaType::kAvro) {
    auto parsed = avro::Schema::Parse(s.schema);
    if (!parsed.ok()) return InvalidRecord(what + ": " + parsed.status().message());
    if (parsed->root().type != avro::Type::kRecord) {
      FLOE_ASSIGN_OR_RAISE(parsed, WrapAvroKey(s.schema, what));
      wrapped = true;
    }
    auto mapped = schema::AvroToIcebergFields(*parsed);
    if (!mapped.ok()) return InvalidRecord(what + ": " + mapped.status().message());
    fields = std::move(*mapped);
  } else if (s.type == registry::SchemaType::kJson) {
    auto json = schema::JsonSchema::Parse(s.schema);
    if (!json.ok()) return InvalidRecord(what + ": " + json.status().message());
    auto mapped = schema::JsonSchemaToIcebergFields(*json);
    if (!mapped.ok()) return InvalidRecord(what + ": " + mapped.status().message());
    fields = std::move(*mapped);
  } else if (s.type == registry::SchemaType::kProtobuf) {
    FLOE_ASSIGN_OR_RAISE(auto proto, ParseProtobuf(s, what));
    FLOE_ASSIGN_OR_RAISE(const auto* message,
                         proto->MessageAt(path.data(), static_cast<size_t>(path.size)));
    auto mapped = schema::ProtobufToIcebergFields(*message);
    if (!mapped.ok()) return InvalidRecord(what + ": " + mapped.status().message());
    fields = std::move(*mapped);
  } else {
    return InvalidRecord(what + " has schemaType '" + s.type_name + "'");
  }
  if (wrapped) {
    iceberg::NestedField key = fields.front();
    key.required = false;
    return key;
  }
  return iceberg::NestedField{
      0, decode::kKeyColumn, false, iceberg::Type::Struct(std::move(fields)), {}};
}

// Prepares the record's key for AppendKey: key.format string validates the UTF-8;
// registry resolves the key's decoder and validates the bytes completely.
Status SchemaResolver::ResolveKey(TopicState& ts, const kafka::Record& r, RowPlan* plan) {
  plan->key_null = r.key == nullptr;
  switch (ts.settings.key_format) {
    case config::KeyFormat::kBinary:
      return Status::OK();
    case config::KeyFormat::kString:
      return ts.key_column->Validate(r.key, r.key_len);
    case config::KeyFormat::kRegistry:
      if (plan->key_null) return Status::OK();
      FLOE_ASSIGN_OR_RAISE(plan->key, ResolveFramed(ts, r, Role::kKey, r.key, r.key_len));
      return plan->key.Validate();
  }
  return Status::OK();
}

// Appends the (validated) key's columns; nothing can fail here for a valid key.
Status SchemaResolver::AppendKey(TopicState& ts, const kafka::Record& r,
                                 const RowPlan& plan,
                                 ::arrow::ArrayBuilder* const* columns) {
  switch (ts.settings.key_format) {
    case config::KeyFormat::kBinary:
      return Status::OK();
    case config::KeyFormat::kString:
      return ts.key_column->Append(r.key, r.key_len, columns);
    case config::KeyFormat::kRegistry:
      break;
  }
  ::arrow::ArrayBuilder* column = columns[ts.key_index];
  if (plan.key_null) return column->AppendNull();
  if (ts.key_field->type->id != iceberg::TypeId::kStruct) {
    return plan.key.Decode(columns + ts.key_index);
  }
  auto* key_struct = static_cast<::arrow::StructBuilder*>(column);
  if (ts.key_children.empty()) {
    for (int i = 0; i < key_struct->num_fields(); ++i) {
      ts.key_children.push_back(key_struct->child_builder(i).get());
    }
  }
  FLOE_RETURN_NOT_OK(plan.key.Decode(ts.key_children.data()));
  return key_struct->Append();
}

}  // namespace floe::pipeline
