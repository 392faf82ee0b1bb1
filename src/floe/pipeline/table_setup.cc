#include "floe/pipeline/table_setup.h"

#include <algorithm>

#include "floe/decode/raw_decoder.h"
#include "floe/pipeline/topic_state.h"
#include "floe/schema/table_schema.h"
#include "floe/table/committer.h"

namespace floe::pipeline {

// The table for a value schema's fields: created on the first schema; a later schema
// must fit it, or evolve it compatibly (schema::Evolve): the change is then left in
// `ts.evolution` for the pipeline to commit before the record that brought it.
Status TableSetup::PrepareTable(TopicState& ts, const std::string& what,
                                std::vector<iceberg::NestedField> fields, bool protobuf) {
  const iceberg::Schema* existing =
      ts.writer ? &ts.writer->schema() : (ts.table.schema ? &*ts.table.schema : nullptr);
  FLOE_RETURN_NOT_OK(AddKeyField(ts, &fields));
  if (existing == nullptr) {
    int last_id = ts.table.last_column_id;
    auto built = schema::BuildTableSchema(fields, nullptr, &last_id);
    if (!built.ok()) {
      // e.g. a value field named _kafka: the topic cannot be mapped until the schema
      // changes.
      return Suspend(what + ": " + built.status().message());
    }
    return OpenWriter(ts, *built);
  }
  return EvolveTo(ts, what, *existing, fields, protobuf, ts.compatibility);
}

// A later schema against the table: taken as it is, or a compatible change left in
// `ts.evolution` (Conflict: the pipeline commits it before the record), or Suspend.
// `level`: the subject's compatibility level ("" when it has none).
Status TableSetup::EvolveTo(TopicState& ts, const std::string& what,
                            const iceberg::Schema& existing,
                            const std::vector<iceberg::NestedField>& fields,
                            bool protobuf, const std::string& level) {
  const int last_id = std::max(ts.table.last_column_id, existing.HighestFieldId());
  schema::EvolutionOptions options;
  options.fixed_columns = {schema::kKafkaColumn};
  if (ts.settings.dropped_fields == config::DroppedFieldPolicy::kDrop) {
    options.dropped = schema::DroppedFields::kDrop;
  }
  options.compatibility = schema::ParseCompatibility(level);
  options.compatibility_name = level;
  options.protobuf = protobuf;
  auto evolved = schema::Evolve(existing, last_id, fields, options);
  if (!evolved.ok()) {
    return Suspend(what + " does not fit table " + ts.ident.ToString() + ": " +
                   evolved.status().message() +
                   "; its records are kept in Kafka (the topic stops here, nothing is "
                   "skipped)");
  }
  if (evolved->changed()) {
    // A widening evolves Delta too (DeltaMirror records it as Delta type widening).
    ts.evolution = std::move(*evolved);
    ts.evolution_what = what;
    return Conflict(what + " changes the schema of table " + ts.ident.ToString());
  }
  return OpenWriter(ts, existing);
}

// A key schema (key.format: registry) once the table exists: the table's value columns as
// they are, with `key` as the key schema maps it.
Status TableSetup::EvolveKey(TopicState& ts, const std::string& what,
                             iceberg::NestedField key, bool protobuf,
                             const std::string& level) {
  const iceberg::Schema* existing =
      ts.writer ? &ts.writer->schema() : (ts.table.schema ? &*ts.table.schema : nullptr);
  if (existing == nullptr) return Status::OK();  // the value schema creates the table
  std::vector<iceberg::NestedField> fields;
  for (const auto& f : existing->fields) {
    if (f.name != schema::kKafkaColumn && f.name != decode::kKeyColumn)
      fields.push_back(f);
  }
  key.name = decode::kKeyColumn;
  fields.push_back(std::move(key));
  return EvolveTo(ts, what, *existing, fields, protobuf, level);
}

// key.format string and registry add a top-level `key` column after the value's fields.
Status TableSetup::AddKeyField(const TopicState& ts,
                               std::vector<iceberg::NestedField>* fields) {
  if (ts.settings.key_format == config::KeyFormat::kBinary) return Status::OK();
  const std::string format(config::ToString(ts.settings.key_format));
  for (const auto& f : *fields) {
    if (f.name == decode::kKeyColumn) {
      return Suspend("value field 'key' of topic " + ts.settings.topic +
                     " collides with the decoded key column (key.format: " + format +
                     "); rename the field or use key.format: binary");
    }
  }
  if (ts.settings.key_format == config::KeyFormat::kRegistry) {
    fields->push_back(*ts.key_field);
  } else {
    fields->push_back(
        iceberg::NestedField{0,
                             decode::kKeyColumn,
                             false,
                             iceberg::Type::Primitive(iceberg::TypeId::kString),
                             {}});
  }
  return Status::OK();
}

// Creates the table (first schema seen) and the table writer; then the key appender.
TableWriterOptions WriterOptionsFor(const config::TopicSettings& settings,
                                    const table::TableState& table, storage::FileIO* io) {
  TableWriterOptions wo;
  wo.table_location = table.location;
  wo.io = io;
  wo.target_file_size_bytes = settings.target_file_size_bytes;
  wo.zstd_level = static_cast<int>(settings.zstd_level);
  wo.dictionary_page_bytes = settings.dictionary_page_size_bytes;
  wo.column_names = table.column_names;
  return wo;
}

Status TableSetup::OpenWriter(TopicState& ts, const iceberg::Schema& table_schema) {
  if (!ts.writer) {
    if (!ts.table.exists) {
      FLOE_ASSIGN_OR_RAISE(ts.table,
                           committer_->CreateIfAbsent(ts.ident, table_schema,
                                                      FormatsProperty(ts.settings)));
    }
    TableWriterOptions wo = WriterOptionsFor(ts.settings, ts.table, io_);
    wo.hints = std::move(ts.writer_hints);
    ts.writer_hints = WriterHints{};
    iceberg::Schema current = ts.table.schema ? *ts.table.schema : table_schema;
    FLOE_ASSIGN_OR_RAISE(ts.writer, TableWriter::Make(wo, current));
  }
  if (ts.settings.key_format == config::KeyFormat::kRegistry && ts.key_index < 0) {
    const auto& fields = ts.writer->schema().fields;
    for (size_t i = 0; i < fields.size(); ++i) {
      if (fields[i].name == decode::kKeyColumn) ts.key_index = static_cast<int>(i);
    }
    if (ts.key_index < 0) {
      return Suspend("table " + ts.ident.ToString() +
                     " has no `key` column, so it cannot take key.format: registry");
    }
  }
  if (ts.settings.key_format == config::KeyFormat::kString && !ts.key_column) {
    auto key = decode::KeyColumnAppender::Make(ts.writer->schema());
    if (!key.ok()) {
      return Suspend("table " + ts.ident.ToString() +
                     " cannot take key.format: string: " + key.status().message());
    }
    ts.key_column = std::move(*key);
  }
  return Status::OK();
}

// value.format: binary: the table is `value` (binary) [+ `key`] + `_kafka`.
Status TableSetup::EnsureRawTable(TopicState& ts) {
  if (ts.writer && ts.raw_value) return Status::OK();
  std::vector<iceberg::NestedField> fields = {
      iceberg::NestedField{0,
                           decode::kValueColumn,
                           false,
                           iceberg::Type::Primitive(iceberg::TypeId::kBinary),
                           {}}};
  FLOE_RETURN_NOT_OK(AddKeyField(ts, &fields));
  const iceberg::Schema* existing = ts.table.schema ? &*ts.table.schema : nullptr;
  int last_id = ts.table.last_column_id;
  auto built = schema::BuildTableSchema(fields, existing, &last_id);
  if (!built.ok()) return Suspend(built.status().message());
  FLOE_RETURN_NOT_OK(OpenWriter(ts, *built));
  auto raw = decode::RawValueDecoder::Make(ts.writer->schema());
  if (!raw.ok()) {
    return Suspend("table " + ts.ident.ToString() +
                   " cannot take value.format: binary: " + raw.status().message());
  }
  ts.raw_value = std::move(*raw);
  return Status::OK();
}

}  // namespace floe::pipeline
