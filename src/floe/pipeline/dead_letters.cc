#include "floe/pipeline/dead_letters.h"

#include <arrow/array.h>
#include <arrow/builder.h>
#include <arrow/table.h>
#include <fmt/format.h>
#include <parquet/arrow/reader.h>

#include "floe/common/crash.h"
#include "floe/common/log.h"
#include "floe/config/config.h"
#include "floe/kafka/consumer.h"
#include "floe/pipeline/table_faults.h"
#include "floe/pipeline/table_setup.h"
#include "floe/pipeline/topic_state.h"
#include "floe/schema/table_schema.h"
#include "floe/storage/file_io.h"
#include "floe/table/commit_driver.h"
#include "floe/table/committer.h"
#include "floe/table/delta_mirror.h"

namespace floe::pipeline {
namespace {

using iceberg::NestedField;
using iceberg::Type;
using iceberg::TypeId;

// value, error, _kafka: what Fill appends to (an existing table must still have them).
Status CheckLayout(const iceberg::Schema& schema, const catalog::TableIdent& ident) {
  std::vector<std::string> names;
  for (const auto& f : schema.fields) names.push_back(f.name);
  const std::vector<std::string> want = {"value", "error", schema::kKafkaColumn};
  if (names != want) {
    return Suspend("dead-letter table " + ident.ToString() + " has the columns " +
                   fmt::format("{}", fmt::join(names, ", ")) +
                   "; Floe writes value, error, _kafka: rename or drop that table");
  }
  return Status::OK();
}

}  // namespace

Result<std::vector<std::string>> LiveFiles(storage::FileIO& io,
                                           const iceberg::TableMetadata& md) {
  std::vector<std::string> out;
  const iceberg::Snapshot* snap = md.CurrentSnapshot();
  if (snap == nullptr) return out;
  FLOE_ASSIGN_OR_RAISE(auto files, table::SnapshotFiles(io, *snap, /*only_added=*/false));
  for (auto& f : files) out.push_back(std::move(f.file_path));
  return out;
}

Result<DeadLetterRows> ReadDeadLetters(storage::FileIO& io, const std::string& path,
                                       const std::string* topic) {
  DeadLetterRows out;
  FLOE_ASSIGN_OR_RAISE(auto file, io.OpenInputFile(path));
  std::unique_ptr<::parquet::arrow::FileReader> reader;
  FLOE_ASSIGN_OR_RAISE(reader,
                       ::parquet::arrow::OpenFile(file, ::arrow::default_memory_pool()));
  FLOE_ASSIGN_OR_RAISE(auto t, reader->ReadTable());
  FLOE_ASSIGN_OR_RAISE(out.table, t->CombineChunks());
  auto value = out.table->GetColumnByName("value");
  auto kafka = out.table->GetColumnByName(schema::kKafkaColumn);
  if (!value || !kafka || value->num_chunks() != 1 || kafka->num_chunks() != 1) {
    return InvalidInput("dead-letter file " + path + " has no value or _kafka column");
  }
  auto values = std::static_pointer_cast<::arrow::BinaryArray>(value->chunk(0));
  auto k = std::static_pointer_cast<::arrow::StructArray>(kafka->chunk(0));
  auto parts =
      std::static_pointer_cast<::arrow::Int32Array>(k->GetFieldByName("partition"));
  auto offs = std::static_pointer_cast<::arrow::Int64Array>(k->GetFieldByName("offset"));
  auto ts =
      std::static_pointer_cast<::arrow::TimestampArray>(k->GetFieldByName("timestamp"));
  auto keys = std::static_pointer_cast<::arrow::BinaryArray>(k->GetFieldByName("key"));
  auto hlist = std::static_pointer_cast<::arrow::ListArray>(k->GetFieldByName("headers"));
  if (!parts || !offs || !ts || !keys || !hlist) {
    return InvalidInput("dead-letter file " + path + ": _kafka lacks a field");
  }
  auto hstruct = std::static_pointer_cast<::arrow::StructArray>(hlist->values());
  auto hkeys = std::static_pointer_cast<::arrow::StringArray>(hstruct->field(0));
  auto hvalues = std::static_pointer_cast<::arrow::BinaryArray>(hstruct->field(1));
  const int64_t n = out.table->num_rows();
  out.records.resize(n);
  out.headers.resize(n);
  for (int64_t i = 0; i < n; ++i) {
    kafka::Record& r = out.records[i];
    r.topic = topic;
    r.partition = parts->Value(i);
    r.offset = offs->Value(i);
    r.timestamp_ms = ts->IsNull(i) ? -1 : ts->Value(i) / 1000;
    if (!keys->IsNull(i)) {
      auto v = keys->GetView(i);
      r.key = reinterpret_cast<const uint8_t*>(v.data());
      r.key_len = v.size();
    }
    if (!values->IsNull(i)) {
      auto v = values->GetView(i);
      r.value = reinterpret_cast<const uint8_t*>(v.data());
      r.value_len = v.size();
    }
    if (!hlist->IsNull(i)) {
      for (int64_t h = hlist->value_offset(i); h < hlist->value_offset(i + 1); ++h) {
        kafka::Header header;
        header.key = hkeys->GetView(h);
        if (!hvalues->IsNull(h)) {
          auto v = hvalues->GetView(h);
          header.value = reinterpret_cast<const uint8_t*>(v.data());
          header.value_len = v.size();
        }
        out.headers[i].push_back(header);
      }
    }
  }
  for (int64_t i = 0; i < n; ++i) {
    out.records[i].header_array = out.headers[i].data();
    out.records[i].header_array_len = out.headers[i].size();
  }
  return out;
}

std::vector<NestedField> DeadLetterFields() {
  auto error = Type::Struct({
      NestedField{0, "stage", true, Type::Primitive(TypeId::kString),
                  "where the record failed: decode (framing, payload, key) or schema (an "
                  "id the registry does not know)"},
      NestedField{0, "reason", true, Type::Primitive(TypeId::kString),
                  "the error, naming topic, partition and offset"},
      NestedField{0, "schema_id", false, Type::Primitive(TypeId::kInt),
                  "the value's registry schema id, if it was framed"},
      NestedField{0, "time", true, Type::Primitive(TypeId::kTimestampTz),
                  "when Floe dead-lettered the record"},
  });
  return {
      NestedField{0, "value", false, Type::Primitive(TypeId::kBinary),
                  "the raw Kafka value (null for a null value)"},
      NestedField{0, "error", true, std::move(error), "why the record was dead-lettered"},
  };
}

Status DeadLetters::Load(TopicState& ts) {
  DeadLetterState& d = ts.dead_letters;
  Discard(ts);
  d.ident = catalog::TableIdent{ts.ident.ns, DeadLetterTableName(ts.ident.name)};
  FLOE_ASSIGN_OR_RAISE(d.table, committer_->Load(d.ident));
  d.recorded.clear();
  if (d.table.positions) {
    auto it = d.table.positions->find(ts.settings.topic);
    if (it != d.table.positions->end()) d.recorded = it->second;
  }
  d.already_there.clear();
  if (d.table.exists) {
    if (d.table.schema) FLOE_RETURN_NOT_OK(CheckLayout(*d.table.schema, d.ident));
    FLOE_RETURN_NOT_OK(FindAlreadyThere(ts));
    FLOE_RETURN_NOT_OK(committer_->EnsureFormats(d.ident, FormatsProperty(ts.settings)));
    // A crash between its Iceberg commit and its Delta version: caught up here.
    if (WantsDelta(ts.settings)) (void)delta_->Sync(d.ident);
  }
  d.loaded = true;
  return Status::OK();
}

Status DeadLetters::FindAlreadyThere(TopicState& ts) {
  DeadLetterState& d = ts.dead_letters;
  const std::map<int32_t, int64_t>* main = nullptr;
  if (ts.table.exists && ts.table.positions) {
    auto it = ts.table.positions->find(ts.settings.topic);
    if (it != ts.table.positions->end()) main = &it->second;
  }
  auto main_at = [&](int32_t p) -> int64_t {
    if (main == nullptr) return -1;
    auto it = main->find(p);
    return it == main->end() ? -1 : it->second;
  };
  bool ahead = false;
  for (const auto& [p, position] : d.recorded) ahead |= position > main_at(p);
  if (!ahead) return Status::OK();  // the usual case: nothing to read
  FLOE_ASSIGN_OR_RAISE(auto loaded, catalog_->LoadTable(d.ident));
  FLOE_ASSIGN_OR_RAISE(auto files, LiveFiles(*io_, loaded.metadata));
  for (const auto& path : files) {
    FLOE_ASSIGN_OR_RAISE(auto rows, ReadDeadLetters(*io_, path, &ts.settings.topic));
    for (const auto& r : rows.records) {
      if (r.offset >= main_at(r.partition)) d.already_there[r.partition].insert(r.offset);
    }
  }
  return Status::OK();
}

Status DeadLetters::OpenWriter(TopicState& ts) {
  DeadLetterState& d = ts.dead_letters;
  if (d.writer) return Status::OK();
  if (!d.table.exists) {
    int last_id = 0;
    FLOE_ASSIGN_OR_RAISE(auto schema,
                         schema::BuildTableSchema(DeadLetterFields(), nullptr, &last_id));
    FLOE_ASSIGN_OR_RAISE(d.table, committer_->CreateIfAbsent(
                                      d.ident, schema, FormatsProperty(ts.settings)));
    FLOE_LOG_INFO("topic {}: dead letters go to table {}", ts.settings.topic,
                  d.ident.ToString());
  }
  if (!d.table.schema)
    return Internal("dead-letter table " + d.ident.ToString() + " has no schema");
  FLOE_RETURN_NOT_OK(CheckLayout(*d.table.schema, d.ident));
  FLOE_ASSIGN_OR_RAISE(
      d.writer,
      TableWriter::Make(WriterOptionsFor(ts.settings, d.table, io_), *d.table.schema));
  return Status::OK();
}

Status DeadLetters::Add(TopicState& ts, const kafka::Record& r, std::string_view stage,
                        const std::string& reason, int schema_id, int64_t now_ms) {
  DeadLetterState& d = ts.dead_letters;
  if (!d.loaded) FLOE_RETURN_NOT_OK(Load(ts));
  FLOE_RETURN_NOT_OK(OpenWriter(ts));
  auto fill = [&](::arrow::ArrayBuilder* const* columns) -> Status {
    auto* value = static_cast<::arrow::BinaryBuilder*>(columns[0]);
    auto* error = static_cast<::arrow::StructBuilder*>(columns[1]);
    auto* stage_b = static_cast<::arrow::StringBuilder*>(error->field_builder(0));
    auto* reason_b = static_cast<::arrow::StringBuilder*>(error->field_builder(1));
    auto* schema_b = static_cast<::arrow::Int32Builder*>(error->field_builder(2));
    auto* time_b = static_cast<::arrow::TimestampBuilder*>(error->field_builder(3));
    ARROW_RETURN_NOT_OK(r.value == nullptr
                            ? value->AppendNull()
                            : value->Append(r.value, static_cast<int64_t>(r.value_len)));
    ARROW_RETURN_NOT_OK(error->Append());
    ARROW_RETURN_NOT_OK(
        stage_b->Append(stage.data(), static_cast<int32_t>(stage.size())));
    ARROW_RETURN_NOT_OK(reason_b->Append(reason));
    ARROW_RETURN_NOT_OK(schema_id >= 0 ? schema_b->Append(schema_id)
                                       : schema_b->AppendNull());
    ARROW_RETURN_NOT_OK(time_b->Append(now_ms * 1000));
    return Status::OK();
  };
  FLOE_RETURN_NOT_OK(d.writer->AppendRow(fill, r));
  ++d.buffered;
  return Status::OK();
}

Status DeadLetters::Commit(TopicState& ts, const table::Positions& batch_end,
                           const std::string& cluster_id) {
  DeadLetterState& d = ts.dead_letters;
  if (!d.writer || d.buffered == 0) return Status::OK();
  table::CommitRequest req;
  req.ident = d.ident;
  req.cluster_id = cluster_id;
  FLOE_ASSIGN_OR_RAISE(req.files, d.writer->TakeFiles());
  const std::string& topic = ts.settings.topic;
  auto end = batch_end.find(topic);
  if (end != batch_end.end()) {
    for (const auto& [p, position] : end->second) {
      auto rec = d.recorded.find(p);
      const bool has = rec != d.recorded.end();
      req.expected[topic][p] = has ? std::optional<int64_t>(rec->second) : std::nullopt;
      // Never backwards (a batch after a crash may end below the recorded position).
      req.new_positions[topic][p] = has ? std::max(rec->second, position) : position;
    }
  }
  Status st = committer_->Commit(req);
  if (!st.ok()) {
    Discard(ts);
    d.loaded = false;  // loaded again (positions included) before the next dead letter
    return WithContext(st, "dead-letter table " + d.ident.ToString());
  }
  for (const auto& [p, position] : req.new_positions[topic]) d.recorded[p] = position;
  d.committed += d.buffered;
  d.buffered = 0;
  d.table.exists = true;
  CrashPoint("after-dead-letter-commit");
  if (WantsDelta(ts.settings)) {
    auto version = delta_->Sync(d.ident);
    if (!version.ok()) {
      // Repaired by the next dead-letter commit or the next start (Load).
      FLOE_LOG_WARN("table {}: Delta log not updated yet ({})", d.ident.ToString(),
                    version.status().message());
    }
  }
  return Status::OK();
}

void DeadLetters::Discard(TopicState& ts) {
  DeadLetterState& d = ts.dead_letters;
  if (d.writer) table::DeleteAll(*io_, d.writer->Abort());
  d.writer.reset();
  d.buffered = 0;
}

}  // namespace floe::pipeline
