// SchemaResolver: how a record becomes a row. It reads the registry framing of the value
// and the key (a schema id in a header or a 5-byte prefix; for value.format json the
// subject's latest version), fetches schemas through a registry::SchemaSource, compiles
// one decoder per schema id (per message-index path for Protobuf) against the table, and
// has TableSetup create the table on the first schema. Then it fills a row: the value's
// columns, then the key column of key.format string/registry.
//
// Errors of Plan(): kInvalidRecord (the record cannot be decoded: the topic's
// on.invalid.record decides), kNotFound (the registry does not know the schema id: the
// caller asks again for a while before the record counts as invalid), kSuspend (the topic
// cannot go on without an operator, e.g. a schema the table cannot take), kRetriable (the
// registry or storage is down: the topic pauses and retries).
//
// Threading: used by the pipeline thread only.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "floe/common/status.h"
#include "floe/decode/avro_decoder.h"
#include "floe/decode/json_decoder.h"
#include "floe/decode/protobuf_decoder.h"
#include "floe/iceberg/schema.h"
#include "floe/registry/client.h"
#include "floe/registry/framing.h"

namespace floe::kafka {
struct Record;
}
namespace floe::schema {
class ProtobufSchema;
}

namespace floe::pipeline {

struct TopicState;
class TableSetup;

// A Protobuf message of a schema: its decoder, or why its records are invalid.
struct CompiledMessage {
  registry::MessageIndexes path;
  std::unique_ptr<decode::ProtobufDecoder> decoder;
  Status invalid;
};

// One registry schema compiled for a topic's table: exactly one decoder kind is set, or
// `invalid` says why records of this schema are invalid (it does not fit the table).
struct CompiledSchema {
  std::unique_ptr<decode::AvroDecoder> avro;
  std::unique_ptr<decode::JsonDecoder> json;
  std::shared_ptr<const schema::ProtobufSchema> protobuf;
  // Protobuf: a decoder per message-index path seen (a topic uses one or a few paths, so
  // a linear search that allocates nothing).
  std::vector<CompiledMessage> messages;
  Status invalid;
  // A stray verdict (a schema of other subjects only): the registry is asked again from
  // this monotonic time (-1: the verdict is final, or there is none).
  int64_t recheck_at_ms = -1;
};

// The decoders compiled for one topic, by schema id (value and key apart).
struct TopicSchemas {
  std::map<int, CompiledSchema> values;
  std::map<std::string, int> value_guids;  // GUID framing → the id its decoder is under
  std::map<int, CompiledSchema> keys;
  std::map<std::string, int> key_guids;
  int json_schema_id = -1;  // value.format json: the subject version in use (-1: none)
  int64_t json_checked_ms = 0;  // when the subject was last checked for a new version
};

// The decoder a record's value (or key) goes to, and the bytes it decodes.
struct ResolvedValue {
  decode::AvroDecoder* avro = nullptr;
  decode::ProtobufDecoder* protobuf = nullptr;
  decode::JsonDecoder* json = nullptr;
  const uint8_t* data = nullptr;
  size_t size = 0;

  Status Decode(::arrow::ArrayBuilder* const* columns) const {
    if (avro != nullptr) return avro->Decode(data, size, columns);
    if (protobuf != nullptr) return protobuf->Decode(data, size, columns);
    return json->Decode(data, size, columns);
  }
  // Checks the bytes completely without appending (a key is validated before its row's
  // value is appended, so a bad key never leaves half a row behind).
  Status Validate() const {
    if (avro != nullptr) return avro->Validate(data, size);
    if (protobuf != nullptr) return protobuf->Validate(data, size);
    return json->Validate(data, size);
  }
};

// How one record becomes a row (Plan fills it, Fill appends it).
struct RowPlan {
  ResolvedValue value;   // unset for value.format: binary
  bool key_null = true;  // no key: the `key` column gets a null
  ResolvedValue key;     // key.format: registry
};

class SchemaResolver {
 public:
  using Clock = std::function<int64_t()>;  // monotonic ms
  SchemaResolver(registry::SchemaSource* registry, TableSetup* tables, Clock clock)
      : registry_(registry), tables_(tables), clock_(std::move(clock)) {}

  // Resolves the record's value and key decoders (compiling what was not seen, creating
  // the table on the first schema) and validates the key completely.
  Status Plan(TopicState& ts, const kafka::Record& r, RowPlan* plan);
  // Appends one row's columns (the value's, then the key's) to `columns`; nothing when it
  // fails (kInvalidRecord).
  Status Fill(TopicState& ts, const kafka::Record& r, const RowPlan& plan,
              ::arrow::ArrayBuilder* const* columns);

  // value.format json: true when the subject has a newer JSON Schema than the one in use
  // (now in use). With `rate_limited`, asks the registry at most once per second per
  // topic.
  bool CheckJsonSubject(TopicState& ts, bool rate_limited);

 private:
  enum class Role { kValue, kKey };

  Result<ResolvedValue> ResolveValue(TopicState& ts, const kafka::Record& r);
  Result<ResolvedValue> ResolveFramed(TopicState& ts, const kafka::Record& r, Role role,
                                      const uint8_t* bytes, size_t len);
  Result<CompiledSchema*> SchemaFor(TopicState& ts, const registry::Framing& f,
                                    Role role);
  Result<CompiledSchema*> JsonSubjectSchema(TopicState& ts);
  Result<CompiledSchema*> Compile(TopicState& ts, int id,
                                  const registry::RegisteredSchema& s, Role role);
  Result<CompiledMessage*> CompileMessage(TopicState& ts, CompiledSchema& cs,
                                          const registry::MessageIndexes& path,
                                          Role role);
  Status ReadCompatibility(TopicState& ts, Role role);
  Result<std::string> OtherSubjects(TopicState& ts, int id, Role role);
  Status EvolveKey(TopicState& ts, const std::string& what,
                   std::vector<iceberg::NestedField> fields, bool wrapped, bool protobuf);
  Result<std::shared_ptr<const schema::ProtobufSchema>> ParseProtobuf(
      const registry::RegisteredSchema& s, const std::string& what);
  Status ResolveImports(const registry::RegisteredSchema& s,
                        std::map<std::string, std::string>* imports, int depth);
  Result<iceberg::Schema> DecodeTarget(const TopicState& ts, Role role);
  static std::vector<std::string> SkipColumns(const TopicState& ts, Role role);
  Status EnsureKeyField(TopicState& ts, const kafka::Record& r);
  Result<iceberg::NestedField> KeyFieldOf(const registry::RegisteredSchema& s,
                                          const registry::MessageIndexes& path,
                                          const std::string& what);
  Status ResolveKey(TopicState& ts, const kafka::Record& r, RowPlan* plan);
  Status AppendKey(TopicState& ts, const kafka::Record& r, const RowPlan& plan,
                   ::arrow::ArrayBuilder* const* columns);

  registry::SchemaSource* registry_;
  TableSetup* tables_;
  Clock clock_;
};

}  // namespace floe::pipeline
