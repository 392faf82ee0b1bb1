#include "floe/pipeline/pipeline_test_util.h"

#include <arrow/api.h>
#include <arrow/compute/cast.h>
#include <arrow/io/interfaces.h>
#include <parquet/arrow/reader.h>

#include <algorithm>

#include "floe/decode/avro_test_encoder.h"
#include "floe/iceberg/manifest.h"
#include "floe/iceberg/metadata_io.h"

namespace floe::pipeline::testing {

// --- ScriptedSource
// ----------------------------------------------------------------------

void ScriptedSource::AddTopic(const std::string& topic, int partitions) {
  if (!topic_names_.count(topic))
    topic_names_[topic] = std::make_unique<std::string>(topic);
  for (int p = 0; p < partitions; ++p) logs_[{topic, p}];
}

int64_t ScriptedSource::Produce(const std::string& topic, int32_t partition, Message m) {
  Log& log = logs_.at({topic, partition});
  Stored& s = log.records.emplace_back(Stored{log.high, std::move(m), {}});
  for (const auto& [k, v] : s.message.headers) {
    kafka::Header h;
    h.key = k;
    if (v) {
      h.value = reinterpret_cast<const uint8_t*>(v->data());
      h.value_len = v->size();
    }
    s.header_views.push_back(h);
  }
  return log.high++;
}

void ScriptedSource::Gap(const std::string& topic, int32_t partition, int64_t n) {
  logs_.at({topic, partition}).high += n;
}

void ScriptedSource::SetLogStart(const std::string& topic, int32_t partition,
                                 int64_t offset) {
  Log& log = logs_.at({topic, partition});
  log.low = offset;
  while (!log.records.empty() && log.records.front().offset < offset)
    log.records.pop_front();
}

void ScriptedSource::FailNext(const std::string& what, int n, Status st) {
  failures_[what] = {n, std::move(st)};
}

Status ScriptedSource::Injected(const std::string& what) {
  auto it = failures_.find(what);
  if (it == failures_.end() || it->second.first <= 0) return Status::OK();
  it->second.first--;
  return it->second.second;
}

Result<std::map<std::string, int>> ScriptedSource::ListTopics(int) {
  FLOE_RETURN_NOT_OK(Injected("ListTopics"));
  std::map<std::string, int> out;
  for (const auto& [tp, log] : logs_)
    out[tp.topic] = std::max(out[tp.topic], tp.partition + 1);
  return out;
}

Result<std::string> ScriptedSource::ClusterId(int) { return cluster_id_; }

Result<kafka::Watermarks> ScriptedSource::QueryWatermarks(const kafka::TopicPartition& tp,
                                                          int) {
  FLOE_RETURN_NOT_OK(Injected("QueryWatermarks"));
  auto it = logs_.find(tp);
  if (it == logs_.end()) return NotFound("no partition " + tp.topic);
  return kafka::Watermarks{it->second.low, it->second.high};
}

Status ScriptedSource::Assign(
    const std::map<kafka::TopicPartition, int64_t>& start_offsets) {
  positions_ = start_offsets;
  assign_calls_++;
  return Status::OK();
}

void ScriptedSource::Revoke(const kafka::TopicPartition& tp) {
  positions_.erase(tp);
  kafka::Rebalance r;
  r.revoked.push_back(tp);
  rebalances_.push_back(std::move(r));
}

void ScriptedSource::Grant(const kafka::TopicPartition& tp) {
  kafka::Rebalance r;
  r.assigned.push_back(tp);
  rebalances_.push_back(std::move(r));
}

Status ScriptedSource::Poll(int timeout_ms, size_t max_records, kafka::Batch* batch,
                            std::vector<kafka::PartitionError>* errors) {
  if (on_poll) on_poll(timeout_ms);
  FLOE_RETURN_NOT_OK(Injected("Poll"));
  std::vector<kafka::TopicPartition> assigned;
  for (const auto& [tp, pos] : positions_) assigned.push_back(tp);
  if (assigned.empty()) return Status::OK();
  // Round-robin over the partitions, a few records each, as a fetch would interleave
  // them.
  constexpr size_t kPerPartition = 7;
  bool progress = true;
  for (size_t round = 0; progress && batch->records().size() < max_records; ++round) {
    progress = false;
    for (size_t i = 0; i < assigned.size(); ++i) {
      const auto& tp = assigned[(rr_ + i) % assigned.size()];
      int64_t& pos = positions_[tp];
      Log& log = logs_.at(tp);
      if (pos < log.low || pos > log.high) {
        if (round == 0) {
          errors->push_back(
              {tp, pos, "Broker: Offset out of range", /*out_of_range=*/true});
        }
        continue;
      }
      size_t taken = 0;
      for (const auto& s : log.records) {
        if (s.offset < pos) continue;
        if (taken == kPerPartition || batch->records().size() >= max_records) break;
        kafka::Record r;
        r.topic = topic_names_.at(tp.topic).get();
        r.partition = tp.partition;
        r.offset = s.offset;
        r.timestamp_ms = s.message.timestamp_ms;
        if (s.message.key) {
          r.key = reinterpret_cast<const uint8_t*>(s.message.key->data());
          r.key_len = s.message.key->size();
        }
        if (s.message.value) {
          r.value = reinterpret_cast<const uint8_t*>(s.message.value->data());
          r.value_len = s.message.value->size();
        }
        r.header_array = s.header_views.data();
        r.header_array_len = s.header_views.size();
        batch->Add(r);
        pos = s.offset + 1;
        taken++;
        progress = true;
      }
      // Past the last record, the position moves over markers to the log end.
      bool more = false;
      for (const auto& s : log.records) more |= s.offset >= pos;
      if (!more) pos = log.high;
    }
  }
  rr_++;
  return Status::OK();
}

Result<std::map<kafka::TopicPartition, int64_t>> ScriptedSource::Positions() {
  return positions_;
}

// --- FakeRegistry
// ------------------------------------------------------------------------

int FakeRegistry::Register(const std::string& subject, const std::string& text,
                           registry::SchemaType type) {
  // As Confluent's registry: one id per distinct schema, shared by every subject that
  // registers it (GET /schemas/ids/{id}/versions lists them all).
  for (const auto& [id, existing] : by_id_) {
    if (existing->schema == text && existing->type == type) {
      auto& versions = subjects_[subject];
      if (versions.empty() || versions.back() != id) versions.push_back(id);
      return id;
    }
  }
  auto s = std::make_shared<registry::RegisteredSchema>();
  s->id = next_id_++;
  s->type = type;
  s->type_name = type == registry::SchemaType::kAvro       ? "AVRO"
                 : type == registry::SchemaType::kProtobuf ? "PROTOBUF"
                                                           : "JSON";
  s->schema = text;
  auto& versions = subjects_[subject];
  versions.push_back(s->id);
  s->version = static_cast<int>(versions.size());
  by_id_[s->id] = s;
  return s->id;
}

Status FakeRegistry::Injected() {
  lookups_++;
  if (fail_count_ <= 0) return Status::OK();
  fail_count_--;
  return fail_status_;
}

Result<std::shared_ptr<const registry::RegisteredSchema>> FakeRegistry::ById(int id) {
  FLOE_RETURN_NOT_OK(Injected());
  auto it = by_id_.find(id);
  if (it == by_id_.end())
    return NotFound("schema registry has no schema " + std::to_string(id));
  return std::shared_ptr<const registry::RegisteredSchema>(it->second);
}

Result<std::shared_ptr<const registry::RegisteredSchema>> FakeRegistry::ByGuid(
    const std::string& guid) {
  FLOE_RETURN_NOT_OK(Injected());
  return NotFound("schema registry has no schema with GUID " + guid);
}

Result<std::shared_ptr<const registry::RegisteredSchema>> FakeRegistry::BySubjectVersion(
    const std::string& subject, int version) {
  FLOE_RETURN_NOT_OK(Injected());
  auto it = subjects_.find(subject);
  if (it == subjects_.end()) return NotFound("schema registry has no subject " + subject);
  if (version <= 0) return ById(it->second.back());
  if (version > static_cast<int>(it->second.size())) {
    return NotFound("subject " + subject + " has no version " + std::to_string(version));
  }
  return ById(it->second[version - 1]);
}

Result<std::vector<registry::SubjectVersion>> FakeRegistry::SubjectVersionsOf(int id) {
  FLOE_RETURN_NOT_OK(Injected());
  if (!by_id_.count(id))
    return NotFound("schema registry has no schema " + std::to_string(id));
  std::vector<registry::SubjectVersion> out;
  for (const auto& [subject, ids] : subjects_) {
    for (size_t v = 0; v < ids.size(); ++v) {
      if (ids[v] == id) out.push_back({subject, static_cast<int>(v) + 1});
    }
  }
  return out;
}

// --- FaultyStore ----------------------------------------------------------

Status FaultyStore::Swap(const catalog::TableIdent& ident, const std::string& expected,
                         const std::string& desired) {
  if (fail_swaps_ > 0 && (only_table.empty() || ident.name == only_table)) {
    fail_swaps_--;
    if (applied_) FLOE_RETURN_NOT_OK(inner_->Swap(ident, expected, desired));
    return swap_status_;
  }
  return inner_->Swap(ident, expected, desired);
}

// --- payloads
// ----------------------------------------------------------------------------

std::string Framed(int schema_id, const std::string& payload) {
  std::string out(5, '\0');
  out[1] = static_cast<char>((schema_id >> 24) & 0xff);
  out[2] = static_cast<char>((schema_id >> 16) & 0xff);
  out[3] = static_cast<char>((schema_id >> 8) & 0xff);
  out[4] = static_cast<char>(schema_id & 0xff);
  return out + payload;
}

std::string AvroSchemaText() {
  return R"({"type":"record","name":"order","fields":[{"name":"id","type":"long"},)"
         R"({"name":"name","type":"string"}]})";
}

std::string AvroSchemaTextRenamed() {
  return R"({"type":"record","name":"order_v2","fields":[{"name":"id","type":"long"},)"
         R"({"name":"name","type":"string"}]})";
}

std::string FramedAvro(int schema_id, int64_t id, const std::string& name) {
  decode::testing::AvroEncoder e;
  e.Long(id).String(name);
  return Framed(schema_id, e.str());
}

std::string AvroSchemaWithExtraText() {
  return R"({"type":"record","name":"order","fields":[{"name":"id","type":"long"},)"
         R"({"name":"name","type":"string"},)"
         R"({"name":"extra","type":["null","string"],"default":null}]})";
}

std::string FramedAvroWithExtra(int schema_id, int64_t id, const std::string& name) {
  decode::testing::AvroEncoder e;
  e.Long(id).String(name).Long(0);  // union branch 0: null
  return Framed(schema_id, e.str());
}

// --- Harness
// -----------------------------------------------------------------------------

Result<config::Config> Harness::ParseConfig(const std::string& topics_yaml) {
  return config::ParseConfig(
      "kafka: {bootstrap.servers: 127.0.0.1:9092}\n"
      "registry: {url: http://127.0.0.1:8081}\n"
      "warehouse: /unused\n" +
          topics_yaml,
      "/tmp");
}

Harness::Harness(const std::string& topics_yaml)
    : memory_io(storage::MakeMemoryFileIO()),
      io(memory_io.get()),
      memory_store(catalog::MakeMemoryStore()),
      store(memory_store.get()) {
  catalog = std::make_unique<catalog::StoreCatalog>(&store, &io, "memory://wh",
                                                    [this] { return wall_ms; });
  auto parsed = ParseConfig(topics_yaml);
  if (!parsed.ok()) throw std::runtime_error(parsed.status().ToString());
  config = *parsed;
  kafka.on_poll = [this](int timeout_ms) {
    now_ms += timeout_ms / 10 + 1;
    wall_ms += timeout_ms / 10 + 1;
  };
  Status st = Restart();
  if (!st.ok()) throw std::runtime_error(st.ToString());
}

Harness::~Harness() = default;

Status Harness::Restart() {
  pipeline_.reset();
  Collaborators c;
  c.source = &kafka;
  c.schemas = &registry;
  c.catalog = catalog.get();
  c.io = &io;
  c.admin = admin;
  c.metrics = metrics;
  c.load_config = load_config;
  c.clock.monotonic_ms = [this] { return now_ms; };
  c.clock.wall_ms = [this] { return wall_ms; };
  c.clock.sleep_ms = [this](int64_t ms) {
    now_ms += ms;
    wall_ms += ms;
    slept_ms += ms;
  };
  FLOE_ASSIGN_OR_RAISE(pipeline_, Pipeline::Make(config, std::move(c)));
  return Status::OK();
}

Status Harness::Start() { return pipeline_->Start(stop); }

bool Harness::RunUntil(const std::function<bool()>& done, int max_steps) {
  for (int i = 0; i < max_steps; ++i) {
    if (done()) return true;
    Status st = pipeline_->Step(stop);
    if (!st.ok()) throw std::runtime_error("Step failed: " + st.ToString());
  }
  return done();
}

Status Harness::RunFor(int64_t ms) {
  const int64_t end = now_ms + ms;
  while (now_ms < end) FLOE_RETURN_NOT_OK(pipeline_->Step(stop));
  return Status::OK();
}

Status Harness::Finish() { return pipeline_->Finish(); }

TopicStatus Harness::Topic(const std::string& topic) {
  for (auto& t : pipeline_->Topics()) {
    if (t.topic == topic) return t;
  }
  return TopicStatus{};
}

Result<iceberg::TableMetadata> Harness::Metadata(const std::string& table) {
  FLOE_ASSIGN_OR_RAISE(auto loaded,
                       catalog->LoadTable(catalog::TableIdent{{"kafka"}, table}));
  return loaded.metadata;
}

Result<std::vector<Row>> Harness::Rows(const std::string& table) {
  FLOE_ASSIGN_OR_RAISE(auto md, Metadata(table));
  std::vector<Row> rows;
  const iceberg::Snapshot* snap = md.CurrentSnapshot();
  if (snap == nullptr) return rows;
  FLOE_ASSIGN_OR_RAISE(auto manifests,
                       iceberg::ReadManifestList(*memory_io, snap->manifest_list));
  for (const auto& m : manifests) {
    FLOE_ASSIGN_OR_RAISE(auto entries, iceberg::ReadManifestEntries(*memory_io, m));
    for (const auto& e : entries) {
      if (!e.is_live()) continue;
      FLOE_ASSIGN_OR_RAISE(auto file, memory_io->OpenInputFile(e.data_file.file_path));
      std::unique_ptr<::parquet::arrow::FileReader> reader;
      FLOE_ASSIGN_OR_RAISE(
          reader, ::parquet::arrow::OpenFile(file, ::arrow::default_memory_pool()));
      FLOE_ASSIGN_OR_RAISE(auto t, reader->ReadTable());
      FLOE_ASSIGN_OR_RAISE(auto combined, t->CombineChunksToBatch());
      if (combined->num_rows() != e.data_file.record_count) {
        return Status::Invalid("record_count ", e.data_file.record_count,
                               " but file has ", combined->num_rows());
      }
      // Files written before an int → long widening hold `id` as int32: read as the
      // table (the current schema) does, widened.
      std::shared_ptr<::arrow::Array> id_column = combined->GetColumnByName("id");
      if (id_column && id_column->type_id() == ::arrow::Type::INT32) {
        FLOE_ASSIGN_OR_RAISE(auto widened,
                             ::arrow::compute::Cast(*id_column, ::arrow::int64()));
        id_column = widened;
      }
      auto ids = std::static_pointer_cast<::arrow::Int64Array>(id_column);
      auto names = std::static_pointer_cast<::arrow::StringArray>(
          combined->GetColumnByName("name"));
      auto kafka_col = std::static_pointer_cast<::arrow::StructArray>(
          combined->GetColumnByName("_kafka"));
      if (!kafka_col) return Status::Invalid("no _kafka column");
      auto parts = std::static_pointer_cast<::arrow::Int32Array>(kafka_col->field(0));
      auto offs = std::static_pointer_cast<::arrow::Int64Array>(kafka_col->field(1));
      for (int64_t i = 0; i < combined->num_rows(); ++i) {
        Row r;
        if (ids) r.id = ids->Value(i);
        if (names) r.name = names->GetString(i);
        r.partition = parts->Value(i);
        r.offset = offs->Value(i);
        rows.push_back(r);
      }
    }
  }
  std::sort(rows.begin(), rows.end(), [](const Row& a, const Row& b) {
    return std::tie(a.partition, a.offset) < std::tie(b.partition, b.offset);
  });
  return rows;
}

std::optional<table::Positions> Harness::RecordedPositions(const std::string& table) {
  auto md = Metadata(table);
  if (!md.ok()) return std::nullopt;
  return table::RecordedPositions(*md);
}

std::vector<std::string> Harness::DataFileObjects() {
  std::vector<std::string> out;
  for (const auto& ns_table : *memory_store->ListTables({"kafka"})) {
    auto md = Metadata(ns_table.name);
    if (!md.ok()) continue;
    for (const auto& f : *memory_io->List(md->location + "/data/")) out.push_back(f.uri);
  }
  return out;
}

}  // namespace floe::pipeline::testing
