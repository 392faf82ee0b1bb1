#include "floe/pipeline/pipeline.h"

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <map>
#include <thread>

#include <arrow/array/builder_nested.h>
#include <google/protobuf/descriptor.h>

#include "floe/catalog/pointer_store.h"
#include "floe/common/log.h"
#include "floe/common/util.h"
#include "floe/decode/avro_decoder.h"
#include "floe/decode/json_decoder.h"
#include "floe/decode/protobuf_decoder.h"
#include "floe/decode/raw_decoder.h"
#include "floe/kafka/consumer.h"
#include "floe/pipeline/committer.h"
#include "floe/pipeline/delta_mirror.h"
#include "floe/pipeline/table_writer.h"
#include "floe/registry/client.h"
#include "floe/registry/framing.h"
#include "floe/schema/avro_schema.h"
#include "floe/schema/avro_to_iceberg.h"
#include "floe/schema/json_schema.h"
#include "floe/schema/protobuf_schema.h"
#include "floe/schema/table_schema.h"
#include "floe/storage/file_io.h"

namespace floe::pipeline {
namespace {

constexpr int kPollMs = 100;
constexpr size_t kPollMaxRecords = 20000;
constexpr int kMetadataTimeoutMs = 10000;
constexpr int64_t kRediscoverMs = 30000;
// Schema references (Protobuf imports) nest at most this deep.
constexpr int kMaxReferenceDepth = 32;

struct PartitionState {
  int64_t start = 0;         // a: where this batch started (seek position or previous b)
  bool start_recorded = false;  // false: the table had no position for this partition
  int64_t next = -1;         // last processed offset + 1 (-1: nothing processed this batch)
};

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
  // Protobuf: a decoder per message-index path seen (a topic uses one or a few paths, so a
  // linear search that allocates nothing).
  std::vector<CompiledMessage> messages;
  Status invalid;
};

// The decoder a record's value goes to, and the bytes it decodes.
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

// What a schema is compiled for: the record's value (top-level columns) or its key (the
// `key` column of key.format: registry).
enum class Role { kValue, kKey };

// The key of the record being appended.
struct KeyRow {
  bool null = true;       // no key: the `key` column gets a null
  ResolvedValue decoded;  // key.format: registry
};

bool SamePath(const registry::MessageIndexes& a, const registry::MessageIndexes& b) {
  return std::equal(a.begin(), a.end(), b.begin(), b.end());
}

struct TopicState {
  config::TopicSettings settings;
  catalog::TableIdent ident;
  TableState table;
  std::unique_ptr<TableWriter> writer;
  std::map<int, CompiledSchema> schemas;  // by schema id
  int json_schema_id = -1;  // value.format json: the subject version in use (-1: not yet)
  int64_t json_checked_ms = 0;  // when the subject was last checked for a new version
  std::optional<decode::RawValueDecoder> raw_value;    // value.format: binary
  std::optional<decode::KeyColumnAppender> key_column;  // key.format: string
  // key.format: registry: the table's `key` column (a struct of the key schema's fields,
  // or a primitive for an Avro primitive key), and decoders compiled against it.
  std::optional<iceberg::NestedField> key_field;
  std::map<int, CompiledSchema> key_schemas;  // by key schema id
  std::map<std::string, int> key_guid_ids;
  std::vector<::arrow::ArrayBuilder*> key_children;  // struct key: its child builders
  int key_index = -1;                                 // the `key` column's position
  std::map<std::string, int> guid_ids;
  std::map<int32_t, PartitionState> partitions;
  int partition_count = 0;
  bool suspended = false;
  std::string suspend_reason;
  int64_t last_commit_ms = 0;
  int64_t skipped = 0;
  int64_t committed_records = 0;
};

class PipelineImpl : public Pipeline {
 public:
  PipelineImpl(const config::Config& config, catalog::Catalog* catalog, storage::FileIO* io)
      : config_(config),
        io_(io),
        committer_(std::make_unique<Committer>(catalog, io)),
        delta_(std::make_unique<DeltaMirror>(catalog, io)) {}

  Status Init() {
    FLOE_ASSIGN_OR_RAISE(consumer_, kafka::Consumer::Make(config_.kafka));
    registry::ClientOptions ro;
    ro.url = config_.registry.url;
    ro.basic_auth_user_info = config_.registry.basic_auth_user_info.value_or("");
    ro.timeout_ms = static_cast<int>(config_.registry.request_timeout_ms);
    FLOE_ASSIGN_OR_RAISE(registry_, registry::MakeRegistryClient(ro));
    return Status::OK();
  }

  Status Run(std::atomic<bool>& stop) override {
    FLOE_RETURN_NOT_OK(WithRetry(stop, "discover topics", [&] { return Discover(); }));
    kafka::Batch batch;
    std::vector<kafka::PartitionError> errors;
    int64_t last_discover = MonotonicMs();
    int64_t last_progress = MonotonicMs();
    while (!stop.load()) {
      batch.Clear();
      errors.clear();
      Status st = consumer_->Poll(kPollMs, kPollMaxRecords, &batch, &errors);
      if (!st.ok()) {
        FLOE_LOG_WARN("{}; retrying", st.message());
        std::this_thread::sleep_for(std::chrono::seconds(1));
        continue;
      }
      for (const auto& e : errors) HandlePartitionError(e);
      for (const auto& r : batch.records()) {
        if (stop.load() && registry_outage_) break;
        FLOE_RETURN_NOT_OK(Process(r, stop));
      }
      batch.Clear();
      FLOE_RETURN_NOT_OK(CommitDue(stop, false));
      EnforceMemoryBudget(stop);
      if (MonotonicMs() - last_discover > kRediscoverMs) {
        Status ds = Discover();
        if (!ds.ok()) FLOE_LOG_WARN("topic discovery failed: {}", ds.message());
        RefreshJsonSubjects();
        last_discover = MonotonicMs();
      }
      if (MonotonicMs() - last_progress > 10000) {
        LogProgress();
        last_progress = MonotonicMs();
      }
    }
    FLOE_LOG_INFO("stopping: committing buffered records");
    std::atomic<bool> no_stop{false};
    FLOE_RETURN_NOT_OK(CommitDue(no_stop, true));
    LogProgress();
    return Status::OK();
  }

 private:
  // Retries systemic failures with exponential backoff until `stop`.
  template <typename F>
  Status WithRetry(std::atomic<bool>& stop, const char* what, F&& fn) {
    int64_t backoff_ms = 500;
    while (true) {
      Status st = fn();
      if (st.ok()) return st;
      ErrorKind kind = KindOf(st);
      if (kind != ErrorKind::kRetriable && kind != ErrorKind::kStateUnknown) return st;
      if (stop.load()) return st;
      FLOE_LOG_WARN("{} failed: {}; retrying in {} ms", what, st.message(), backoff_ms);
      std::this_thread::sleep_for(std::chrono::milliseconds(backoff_ms));
      backoff_ms = std::min<int64_t>(backoff_ms * 2, 30000);
    }
  }

  Status Discover() {
    FLOE_ASSIGN_OR_RAISE(auto topics, consumer_->ListTopics(kMetadataTimeoutMs));
    FLOE_ASSIGN_OR_RAISE(cluster_id_, consumer_->ClusterId(kMetadataTimeoutMs));
    std::vector<std::string> names;
    for (const auto& [name, count] : topics) names.push_back(name);
    FLOE_RETURN_NOT_OK(config::CheckTableCollisions(config_, names));
    bool changed = false;
    Status first_error;
    for (const auto& [name, count] : topics) {
      auto settings = config::ResolveTopic(config_, name);
      if (!settings) continue;
      auto it = topics_.find(name);
      if (it != topics_.end() && it->second.partition_count == count) continue;
      if (it == topics_.end()) {
        TopicState ts;
        ts.settings = *settings;
        ts.ident = catalog::TableIdent{settings->NamespaceLevels(), settings->table};
        it = topics_.emplace(name, std::move(ts)).first;
        FLOE_LOG_INFO("topic {} → table {}", name, settings->QualifiedTable());
      }
      // The count is kept only once every partition has its position: a topic whose
      // partitions could not all be loaded (a new topic's partition without a leader yet)
      // is tried again by the next discovery instead of being taken as done. The partitions
      // already loaded are assigned meanwhile.
      const int previous = it->second.partition_count;
      it->second.partition_count = count;
      Status st = LoadPositions(name, it->second);
      if (!st.ok()) {
        it->second.partition_count = previous;
        if (first_error.ok()) first_error = st;
      }
      changed = true;
    }
    if (changed) FLOE_RETURN_NOT_OK(Reassign());
    return first_error;
  }

  // Seeks every partition of the topic to the table's recorded position (ARCHITECTURE.md §2).
  Status LoadPositions(const std::string& topic, TopicState& ts) {
    if (ts.suspended) return Status::OK();
    FLOE_ASSIGN_OR_RAISE(ts.table, committer_->Load(ts.ident));
    if (ts.table.exists && !ts.table.cluster_id.empty() && ts.table.cluster_id != cluster_id_) {
      return SuspendTopic(topic, ts, "table " + ts.ident.ToString() + " was written from Kafka cluster " +
                                         ts.table.cluster_id + " but the broker is cluster " +
                                         cluster_id_ + "; positions do not apply");
    }
    if (ts.table.exists) {
      FLOE_RETURN_NOT_OK(committer_->EnsureFormats(ts.ident, FormatsProperty(ts.settings)));
      // Recovery (ARCHITECTURE.md §2): Floe snapshots committed to Iceberg but not yet to
      // Delta (a crash in between) are replayed into Delta before reading on.
      if (WantsDelta(ts.settings)) SyncDelta(ts);
    }
    if (ts.table.exists && ts.table.has_data_files && !ts.table.positions) {
      return SuspendTopic(topic, ts, "offsets lost: table " + ts.ident.ToString() +
                                         " holds data but no floe.kafka.offsets; Floe will not "
                                         "restart it from the beginning on its own");
    }
    const std::map<int32_t, int64_t>* recorded = nullptr;
    if (ts.table.positions) {
      auto it = ts.table.positions->find(topic);
      if (it != ts.table.positions->end()) recorded = &it->second;
    }
    for (int32_t p = 0; p < ts.partition_count; ++p) {
      if (ts.partitions.count(p)) continue;
      FLOE_ASSIGN_OR_RAISE(auto wm, consumer_->QueryWatermarks({topic, p}, kMetadataTimeoutMs));
      PartitionState ps;
      auto rit = recorded ? recorded->find(p) : decltype(recorded->end()){};
      if (recorded && rit != recorded->end()) {
        ps.start = rit->second;
        ps.start_recorded = true;
        if (ps.start < wm.low || ps.start > wm.high) {
          return SuspendTopic(topic, ts,
                              "recorded position " + std::to_string(ps.start) + " of partition " +
                                  std::to_string(p) + " is outside the log [" +
                                  std::to_string(wm.low) + ", " + std::to_string(wm.high) +
                                  "] (log start, high watermark): retention or a topic reset "
                                  "removed records Floe has not ingested; not resetting silently");
        }
      } else {
        ps.start = wm.low;  // a new table (or partition) starts at the beginning of the log
      }
      ts.partitions[p] = ps;
    }
    return Status::OK();
  }

  Status Reassign() {
    std::map<kafka::TopicPartition, int64_t> assignment;
    for (auto& [topic, ts] : topics_) {
      if (ts.suspended) continue;
      for (auto& [p, ps] : ts.partitions) {
        assignment[{topic, p}] = ps.next >= 0 ? ps.next : ps.start;
      }
    }
    return consumer_->Assign(assignment);
  }

  Status SuspendTopic(const std::string& topic, TopicState& ts, const std::string& reason) {
    ts.suspended = true;
    ts.suspend_reason = reason;
    FLOE_LOG_ERROR("topic {} suspended: {}", topic, reason);
    return Status::OK();
  }

  void HandlePartitionError(const kafka::PartitionError& e) {
    auto it = topics_.find(e.tp.topic);
    if (it == topics_.end()) {
      FLOE_LOG_WARN("kafka: {}", e.message);
      return;
    }
    if (e.out_of_range) {
      auto wm = consumer_->QueryWatermarks(e.tp, kMetadataTimeoutMs);
      std::string range = wm.ok() ? "[" + std::to_string(wm->low) + ", " + std::to_string(wm->high) + "]"
                                  : "(unknown)";
      (void)SuspendTopic(e.tp.topic, it->second,
                         "position " + std::to_string(e.offset) + " of partition " +
                             std::to_string(e.tp.partition) + " is out of range; the log is " +
                             range + " (log start, high watermark): " + e.message);
      (void)Reassign();
      return;
    }
    FLOE_LOG_WARN("kafka {}/{}: {}", e.tp.topic, e.tp.partition, e.message);
  }

  Status Process(const kafka::Record& r, std::atomic<bool>& stop) {
    auto it = topics_.find(*r.topic);
    if (it == topics_.end() || it->second.suspended) return Status::OK();
    TopicState& ts = it->second;
    auto pit = ts.partitions.find(r.partition);
    if (pit == ts.partitions.end()) return Status::OK();
    PartitionState& ps = pit->second;
    int64_t expected = ps.next >= 0 ? ps.next : ps.start;
    if (r.offset < expected) return Status::OK();  // already covered (stale fetch after reassign)

    // value.format json: a record its schema rejects makes Floe look for a newer version of
    // the subject once before the record counts as invalid.
    for (bool rechecked = false;; rechecked = true) {
      ResolvedValue value;
      KeyRow key;
      // Schemas come from the registry and the first one creates the table: both may meet
      // an outage, retried until it ends (or Floe stops).
      Status st = WithRetry(stop, "schema registry", [&]() -> Status {
        FLOE_RETURN_NOT_OK(EnsureKeyField(ts, r));
        if (ts.settings.value_format == config::ValueFormat::kBinary) {
          FLOE_RETURN_NOT_OK(EnsureRawTable(ts));
        } else {
          FLOE_ASSIGN_OR_RAISE(value, Resolve(ts, r));
        }
        return ResolveKey(ts, r, &key);
      });
      registry_outage_ = false;
      if (!st.ok()) {
        ErrorKind kind = KindOf(st);
        if (kind == ErrorKind::kInvalidRecord || kind == ErrorKind::kNotFound) return Invalid(ts, r, st);
        if (kind == ErrorKind::kSuspend) {
          FLOE_RETURN_NOT_OK(CommitTopic(*r.topic, ts, stop, /*batch_done=*/false));
          return SuspendTopic(*r.topic, ts, Where(r) + ": " + st.message());
        }
        if (stop.load()) {
          registry_outage_ = true;
          return Status::OK();
        }
        return st;
      }
      // A value that fails to decode leaves nothing appended (its decoder sees to it); the
      // key was validated above.
      st = ts.writer->AppendRow(
          [&](::arrow::ArrayBuilder* const* columns) -> Status {
            if (ts.raw_value) {
              FLOE_RETURN_NOT_OK(ts.raw_value->Decode(r.value, r.value_len, columns));
            } else {
              FLOE_RETURN_NOT_OK(value.Decode(columns));
            }
            return AppendKey(ts, r, key, columns);
          },
          r);
      if (!st.ok()) {
        if (KindOf(st) != ErrorKind::kInvalidRecord) return st;
        if (!rechecked && ts.settings.value_format == config::ValueFormat::kJson &&
            CheckJsonSubject(*r.topic, ts, /*rate_limited=*/true)) {
          continue;
        }
        return Invalid(ts, r, st);
      }
      ps.next = r.offset + 1;
      return Status::OK();
    }
  }

  static std::string Where(const kafka::Record& r) {
    return "topic " + *r.topic + " partition " + std::to_string(r.partition) + " offset " +
           std::to_string(r.offset);
  }

  Status Invalid(TopicState& ts, const kafka::Record& r, const Status& why) {
    std::string msg = Where(r) + ": " + why.message();
    if (ts.settings.on_invalid_record == config::InvalidRecordPolicy::kSkip) {
      ts.skipped++;
      FLOE_LOG_WARN("skipped invalid record ({} skipped so far): {}", ts.skipped, msg);
      ts.partitions[r.partition].next = r.offset + 1;
      return Status::OK();
    }
    // suspend: commit everything before this record, then stop the topic here.
    std::atomic<bool> no_stop{false};
    FLOE_RETURN_NOT_OK(CommitTopic(*r.topic, ts, no_stop, /*batch_done=*/false));
    FLOE_RETURN_NOT_OK(SuspendTopic(*r.topic, ts, "invalid record at " + msg));
    return Reassign();
  }

  // The decoder for the record's value and the bytes it decodes: the registry framing (or,
  // for value.format json, the subject's latest version) picks the schema; a Protobuf
  // payload's message indexes pick the message. Compiles what it has not seen and creates
  // the table writer on the first schema.
  Result<ResolvedValue> Resolve(TopicState& ts, const kafka::Record& r) {
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
  Result<ResolvedValue> ResolveFramed(TopicState& ts, const kafka::Record& r, Role role,
                                      const uint8_t* bytes, size_t len) {
    kafka::Header h;
    const char* header =
        role == Role::kValue ? registry::kValueSchemaIdHeader : registry::kKeySchemaIdHeader;
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
      return InvalidRecord("schema id header has " + std::to_string(framing.header_rest_len) +
                           " bytes after the id; only Protobuf puts message indexes there");
    }
    if (cs->avro) {
      v.avro = cs->avro.get();
    } else if (cs->json) {
      v.json = cs->json.get();
    } else {
      // Message indexes: in the header after the id when the header carries any (Confluent's
      // header serializers), else at the start of the payload.
      size_t consumed = 0;
      registry::MessageIndexes path;
      if (framing.header_rest_len > 0) {
        FLOE_ASSIGN_OR_RAISE(path, registry::ParseMessageIndexes(
                                       framing.header_rest, framing.header_rest_len, &consumed));
        if (consumed != framing.header_rest_len) {
          return InvalidRecord("schema id header has " +
                               std::to_string(framing.header_rest_len - consumed) +
                               " bytes after the message indexes");
        }
      } else {
        FLOE_ASSIGN_OR_RAISE(path, registry::ParseMessageIndexes(v.data, v.size, &consumed));
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
  Result<CompiledSchema*> SchemaFor(TopicState& ts, const registry::Framing& f, Role role) {
    auto& schemas = role == Role::kValue ? ts.schemas : ts.key_schemas;
    auto& guid_ids = role == Role::kValue ? ts.guid_ids : ts.key_guid_ids;
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
    if (it != schemas.end()) return &it->second;
    if (!fetched) {
      FLOE_ASSIGN_OR_RAISE(fetched, registry_->ById(id));
    }
    return Compile(ts, id, *fetched, role);
  }

  // value.format json: the latest version of the topic's subject (looked up once, then
  // refreshed by RefreshJsonSubjects).
  Result<CompiledSchema*> JsonSubjectSchema(TopicState& ts) {
    auto it = ts.schemas.find(ts.json_schema_id);
    if (ts.json_schema_id >= 0 && it != ts.schemas.end()) return &it->second;
    std::shared_ptr<const registry::RegisteredSchema> latest;
    if (ts.json_schema_id >= 0) {
      FLOE_ASSIGN_OR_RAISE(latest, registry_->ById(ts.json_schema_id));
    } else {
      auto fetched = registry_->BySubjectVersion(ts.settings.value_subject, 0);
      if (!fetched.ok() && KindOf(fetched.status()) == ErrorKind::kNotFound) {
        // A missing subject is a setup problem, not a bad record: never skip records for it.
        return Suspend(fetched.status().message() + "; value.format: json reads the latest "
                       "JSON Schema of subject '" + ts.settings.value_subject +
                       "' (set value.subject to use another)");
      }
      FLOE_ASSIGN_OR_RAISE(latest, std::move(fetched));
    }
    if (latest->schema_type != "JSON") {
      return Suspend("subject '" + ts.settings.value_subject + "' holds a " +
                     latest->schema_type + " schema; value.format: json needs a JSON Schema");
    }
    ts.json_schema_id = latest->id;
    return Compile(ts, latest->id, *latest, Role::kValue);
  }

  // value.format json: picks up a new version of each topic's subject (called every
  // kRediscoverMs). Records are decoded with the newest version from then on.
  void RefreshJsonSubjects() {
    for (auto& [topic, ts] : topics_) {
      if (ts.settings.value_format == config::ValueFormat::kJson) {
        (void)CheckJsonSubject(topic, ts, /*rate_limited=*/false);
      }
    }
  }

  // True when the subject has a newer JSON Schema than the one in use (now in use). With
  // `rate_limited`, asks the registry at most once per second per topic.
  bool CheckJsonSubject(const std::string& topic, TopicState& ts, bool rate_limited) {
    if (ts.suspended || ts.json_schema_id < 0) return false;
    const int64_t now = MonotonicMs();
    if (rate_limited && now - ts.json_checked_ms < 1000) return false;
    ts.json_checked_ms = now;
    auto latest = registry_->BySubjectVersion(ts.settings.value_subject, 0);
    if (!latest.ok()) {
      FLOE_LOG_WARN("topic {}: cannot check subject '{}' for a new version: {}", topic,
                    ts.settings.value_subject, latest.status().message());
      return false;
    }
    if ((*latest)->id == ts.json_schema_id || (*latest)->schema_type != "JSON") return false;
    FLOE_LOG_INFO("topic {}: subject '{}' has version {} (schema id {}); decoding with it "
                  "from now on",
                  topic, ts.settings.value_subject, (*latest)->version, (*latest)->id);
    ts.json_schema_id = (*latest)->id;
    return true;
  }

  // Maps a value schema to the table (creating it on the first schema), or checks a key
  // schema against the `key` column, and compiles the decoder. Protobuf message decoders
  // are compiled per message-index path later (CompileMessage).
  Result<CompiledSchema*> Compile(TopicState& ts, int id, const registry::RegisteredSchema& s,
                                  Role role) {
    const std::string what = (role == Role::kKey ? "key schema " : "schema ") + std::to_string(id);
    CompiledSchema cs;
    if (s.schema_type == "AVRO") {
      auto avro = schema::AvroSchema::Parse(s.schema);
      if (!avro.ok()) return InvalidRecord(what + ": " + avro.status().message());
      if (role == Role::kValue) {
        auto fields = schema::AvroToIcebergFields(*avro);
        if (!fields.ok()) return InvalidRecord(what + ": " + fields.status().message());
        FLOE_RETURN_NOT_OK(PrepareTable(ts, what, std::move(*fields)));
      } else if (avro->root().type != schema::AvroType::kRecord) {
        FLOE_ASSIGN_OR_RAISE(avro, WrapAvroKey(s.schema, what));
      }
      decode::AvroDecoderOptions options;
      options.skip_columns = SkipColumns(ts, role);
      FLOE_ASSIGN_OR_RAISE(auto target, DecodeTarget(ts, role));
      auto decoder = decode::AvroDecoder::Make(*avro, target, options);
      if (decoder.ok()) {
        cs.avro = std::move(*decoder);
      } else {
        cs.invalid = Incompatible(ts, what, decoder.status());
      }
    } else if (s.schema_type == "JSON") {
      if (!s.references.empty()) {
        return InvalidRecord(what + ": JSON Schema references to other subjects are not "
                             "supported; use local $ref/$defs");
      }
      auto json = schema::JsonSchema::Parse(s.schema);
      if (!json.ok()) return InvalidRecord(what + ": " + json.status().message());
      if (role == Role::kValue) {
        auto fields = schema::JsonSchemaToIcebergFields(*json);
        if (!fields.ok()) return InvalidRecord(what + ": " + fields.status().message());
        FLOE_RETURN_NOT_OK(PrepareTable(ts, what, std::move(*fields)));
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
    } else if (s.schema_type == "PROTOBUF") {
      FLOE_ASSIGN_OR_RAISE(cs.protobuf, ParseProtobuf(s, what));
    } else {
      return InvalidRecord(what + " has schemaType '" + s.schema_type +
                           "'; Floe reads AVRO, PROTOBUF and JSON");
    }
    auto& slot = (role == Role::kValue ? ts.schemas : ts.key_schemas)[id];
    slot = std::move(cs);
    if (slot.invalid.ok()) {
      FLOE_LOG_INFO("table {}: compiled {} {}", ts.ident.ToString(), s.schema_type, what);
    } else {
      FLOE_LOG_WARN("table {}: records of {} are invalid: {}", ts.ident.ToString(), what,
                    slot.invalid.message());
    }
    return &slot;
  }

  Result<std::shared_ptr<const schema::ProtobufSchema>> ParseProtobuf(
      const registry::RegisteredSchema& s, const std::string& what) {
    std::map<std::string, std::string> imports;
    FLOE_RETURN_NOT_OK(ResolveImports(s, &imports, 0));
    auto proto = schema::ProtobufSchema::Make(s.schema, imports);
    if (!proto.ok()) return InvalidRecord(what + ": " + proto.status().message());
    return std::move(*proto);
  }

  // An Avro key that is not a record (a string, a long, ...) is read as a record with one
  // field `key`: its binary encoding is the same bytes.
  static Result<schema::AvroSchema> WrapAvroKey(const std::string& text, const std::string& what) {
    auto wrapped = schema::AvroSchema::Parse(
        R"({"type":"record","name":"floe_key","fields":[{"name":"key","type":)" + text + "}]}");
    if (!wrapped.ok()) return InvalidRecord(what + ": " + wrapped.status().message());
    return std::move(*wrapped);
  }

  // The schema a decoder fills: the table for a value; for a key, the `key` struct's
  // fields (decoded into the struct's child builders) or the primitive `key` column alone.
  Result<iceberg::Schema> DecodeTarget(const TopicState& ts, Role role) {
    if (role == Role::kValue) return ts.writer->schema();
    const iceberg::NestedField* key = ts.writer->schema().FindTopLevel(decode::kKeyColumn);
    if (key == nullptr) return Suspend("table " + ts.ident.ToString() + " has no key column");
    iceberg::Schema target;
    if (key->type->id == iceberg::TypeId::kStruct) {
      target.fields = key->type->fields;
    } else {
      target.fields = {*key};
    }
    return target;
  }

  // The Protobuf message a payload's message indexes select, mapped and compiled once.
  Result<CompiledMessage*> CompileMessage(TopicState& ts, CompiledSchema& cs,
                                                  const registry::MessageIndexes& path,
                                                  Role role) {
    FLOE_ASSIGN_OR_RAISE(const auto* message,
                         cs.protobuf->MessageAt(path.data(), static_cast<size_t>(path.size)));
    const std::string what =
        (role == Role::kKey ? "key Protobuf message " : "Protobuf message ") + message->full_name();
    if (role == Role::kValue) {
      auto fields = schema::ProtobufToIcebergFields(*message);
      if (!fields.ok()) return InvalidRecord(what + ": " + fields.status().message());
      FLOE_RETURN_NOT_OK(PrepareTable(ts, what, std::move(*fields)));
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
      FLOE_LOG_WARN("table {}: records of {} are invalid: {}", ts.ident.ToString(), what,
                    m.invalid.message());
    }
    cs.messages.push_back(std::move(m));
    return &cs.messages.back();
  }

  // Protobuf imports: each schema reference (recursively) fetched by subject and version
  // and named by its import path.
  Status ResolveImports(const registry::RegisteredSchema& s,
                        std::map<std::string, std::string>* imports, int depth) {
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

  static std::vector<std::string> SkipColumns(const TopicState& ts, Role role) {
    if (role == Role::kValue && ts.settings.key_format != config::KeyFormat::kBinary) {
      return {decode::kKeyColumn};
    }
    return {};
  }

  // A schema whose types do not fit the table (a type changed, a nullable field for a
  // required column): its records are invalid and follow on.invalid.record. (Columns a
  // schema adds are not invalid: they suspend the topic until schema evolution exists.)
  Status Incompatible(const TopicState& ts, const std::string& what, const Status& why) {
    return InvalidRecord(what + " does not fit table " + ts.ident.ToString() + ": " +
                         why.message());
  }

  // The table for a value schema's fields: created on the first schema; a later schema
  // must fit it (new columns need schema evolution, not built yet).
  Status PrepareTable(TopicState& ts, const std::string& what,
                      std::vector<iceberg::NestedField> fields) {
    const iceberg::Schema* existing = ts.writer ? &ts.writer->schema()
                                                : (ts.table.schema ? &*ts.table.schema : nullptr);
    int last_id = ts.writer ? std::max(ts.table.last_column_id, ts.writer->schema().HighestFieldId())
                            : ts.table.last_column_id;
    FLOE_RETURN_NOT_OK(AddKeyField(ts, &fields));
    auto built = schema::BuildTableSchema(fields, existing, &last_id);
    if (!built.ok()) {
      // e.g. a value field named _kafka: the topic cannot be mapped until the schema changes.
      return Suspend(what + ": " + built.status().message());
    }
    if (existing != nullptr && last_id > existing->HighestFieldId() &&
        last_id > ts.table.last_column_id) {
      // The writer schema adds columns. Fields the writer lacks are fine (the decoder
      // appends nulls) and type widenings are checked by the decoder; adding columns needs
      // schema evolution, which is not built yet.
      return Suspend(what + " adds columns to table " + ts.ident.ToString() +
                     "; schema evolution is not supported yet, so the topic stops here with "
                     "nothing lost");
    }
    return OpenWriter(ts, *built);
  }

  // key.format string and registry add a top-level `key` column after the value's fields.
  Status AddKeyField(const TopicState& ts, std::vector<iceberg::NestedField>* fields) {
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
      fields->push_back(iceberg::NestedField{
          0, decode::kKeyColumn, false, iceberg::Type::Primitive(iceberg::TypeId::kString), {}});
    }
    return Status::OK();
  }

  // key.format: registry: the `key` column's type comes from the table once it exists;
  // before that, from the schema of the first record's key, or when that record has no
  // key, from the latest version of the subject `<topic>-key`.
  Status EnsureKeyField(TopicState& ts, const kafka::Record& r) {
    if (ts.settings.key_format != config::KeyFormat::kRegistry || ts.key_field) {
      return Status::OK();
    }
    const iceberg::Schema* table = ts.writer ? &ts.writer->schema()
                                             : (ts.table.schema ? &*ts.table.schema : nullptr);
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
      const std::string subject = ts.settings.topic + "-key";
      auto latest = registry_->BySubjectVersion(subject, 0);
      if (!latest.ok() && KindOf(latest.status()) == ErrorKind::kNotFound) {
        return Suspend("the first record has no key and subject '" + subject +
                       "' does not exist, so the type of the `key` column (key.format: "
                       "registry) is unknown: " + latest.status().message());
      }
      FLOE_ASSIGN_OR_RAISE(s, std::move(latest));
      what = "key schema of subject '" + subject + "'";
    } else {
      kafka::Header h;
      bool has_header = r.FindHeader(registry::kKeySchemaIdHeader, &h);
      FLOE_ASSIGN_OR_RAISE(auto framing,
                           registry::DetectFraming(has_header ? h.value : nullptr,
                                                   has_header ? h.value_len : 0, r.key,
                                                   r.key_len));
      if (framing.source == registry::Framing::Source::kHeaderGuid) {
        FLOE_ASSIGN_OR_RAISE(s, registry_->ByGuid(framing.GuidString()));
      } else {
        FLOE_ASSIGN_OR_RAISE(s, registry_->ById(framing.schema_id));
      }
      if (s->schema_type == "PROTOBUF") {
        // The message indexes: in the header after the id, else at the payload's start.
        const bool in_header = framing.header_rest_len > 0;
        size_t consumed = 0;
        FLOE_ASSIGN_OR_RAISE(
            parsed, registry::ParseMessageIndexes(
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
  Result<iceberg::NestedField> KeyFieldOf(const registry::RegisteredSchema& s,
                                          const registry::MessageIndexes& path,
                                          const std::string& what) {
    std::vector<iceberg::NestedField> fields;
    bool wrapped = false;
    if (s.schema_type == "AVRO") {
      auto avro = schema::AvroSchema::Parse(s.schema);
      if (!avro.ok()) return InvalidRecord(what + ": " + avro.status().message());
      if (avro->root().type != schema::AvroType::kRecord) {
        FLOE_ASSIGN_OR_RAISE(avro, WrapAvroKey(s.schema, what));
        wrapped = true;
      }
      auto mapped = schema::AvroToIcebergFields(*avro);
      if (!mapped.ok()) return InvalidRecord(what + ": " + mapped.status().message());
      fields = std::move(*mapped);
    } else if (s.schema_type == "JSON") {
      auto json = schema::JsonSchema::Parse(s.schema);
      if (!json.ok()) return InvalidRecord(what + ": " + json.status().message());
      auto mapped = schema::JsonSchemaToIcebergFields(*json);
      if (!mapped.ok()) return InvalidRecord(what + ": " + mapped.status().message());
      fields = std::move(*mapped);
    } else if (s.schema_type == "PROTOBUF") {
      FLOE_ASSIGN_OR_RAISE(auto proto, ParseProtobuf(s, what));
      FLOE_ASSIGN_OR_RAISE(const auto* message,
                           proto->MessageAt(path.data(), static_cast<size_t>(path.size)));
      auto mapped = schema::ProtobufToIcebergFields(*message);
      if (!mapped.ok()) return InvalidRecord(what + ": " + mapped.status().message());
      fields = std::move(*mapped);
    } else {
      return InvalidRecord(what + " has schemaType '" + s.schema_type + "'");
    }
    if (wrapped) {
      iceberg::NestedField key = fields.front();
      key.required = false;
      return key;
    }
    return iceberg::NestedField{0, decode::kKeyColumn, false,
                                iceberg::Type::Struct(std::move(fields)), {}};
  }

  // Prepares the record's key for AppendKey: key.format string validates the UTF-8;
  // registry resolves the key's decoder and validates the bytes completely.
  Status ResolveKey(TopicState& ts, const kafka::Record& r, KeyRow* key) {
    key->null = r.key == nullptr;
    switch (ts.settings.key_format) {
      case config::KeyFormat::kBinary: return Status::OK();
      case config::KeyFormat::kString: return ts.key_column->Validate(r.key, r.key_len);
      case config::KeyFormat::kRegistry:
        if (key->null) return Status::OK();
        FLOE_ASSIGN_OR_RAISE(key->decoded, ResolveFramed(ts, r, Role::kKey, r.key, r.key_len));
        return key->decoded.Validate();
    }
    return Status::OK();
  }

  // Appends the (validated) key's columns; nothing can fail here for a valid key.
  Status AppendKey(TopicState& ts, const kafka::Record& r, const KeyRow& key,
                   ::arrow::ArrayBuilder* const* columns) {
    switch (ts.settings.key_format) {
      case config::KeyFormat::kBinary: return Status::OK();
      case config::KeyFormat::kString: return ts.key_column->Append(r.key, r.key_len, columns);
      case config::KeyFormat::kRegistry: break;
    }
    ::arrow::ArrayBuilder* column = columns[ts.key_index];
    if (key.null) return column->AppendNull();
    if (ts.key_field->type->id != iceberg::TypeId::kStruct) {
      return key.decoded.Decode(columns + ts.key_index);
    }
    auto* key_struct = static_cast<::arrow::StructBuilder*>(column);
    if (ts.key_children.empty()) {
      for (int i = 0; i < key_struct->num_fields(); ++i) {
        ts.key_children.push_back(key_struct->child_builder(i).get());
      }
    }
    FLOE_RETURN_NOT_OK(key.decoded.Decode(ts.key_children.data()));
    return key_struct->Append();
  }

  // Creates the table (first schema seen) and the table writer; then the key appender.
  Status OpenWriter(TopicState& ts, const iceberg::Schema& table_schema) {
    if (!ts.writer) {
      TableWriterOptions wo;
      if (!ts.table.exists) {
        FLOE_ASSIGN_OR_RAISE(ts.table, committer_->CreateIfAbsent(ts.ident, table_schema,
                                                                  FormatsProperty(ts.settings)));
      }
      wo.table_location = ts.table.location;
      FLOE_ASSIGN_OR_RAISE(wo.local_table_dir, storage::FileUriToPath(ts.table.location));
      wo.target_file_size_bytes = ts.settings.target_file_size_bytes;
      wo.zstd_level = static_cast<int>(ts.settings.zstd_level);
      wo.dictionary_page_bytes = ts.settings.dictionary_page_size_bytes;
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
        return Suspend("table " + ts.ident.ToString() + " cannot take key.format: string: " +
                       key.status().message());
      }
      ts.key_column = std::move(*key);
    }
    return Status::OK();
  }

  // value.format: binary: the table is `value` (binary) [+ `key`] + `_kafka`.
  Status EnsureRawTable(TopicState& ts) {
    if (ts.writer && ts.raw_value) return Status::OK();
    std::vector<iceberg::NestedField> fields = {iceberg::NestedField{
        0, decode::kValueColumn, false, iceberg::Type::Primitive(iceberg::TypeId::kBinary), {}}};
    FLOE_RETURN_NOT_OK(AddKeyField(ts, &fields));
    const iceberg::Schema* existing = ts.table.schema ? &*ts.table.schema : nullptr;
    int last_id = ts.table.last_column_id;
    auto built = schema::BuildTableSchema(fields, existing, &last_id);
    if (!built.ok()) return Suspend(built.status().message());
    FLOE_RETURN_NOT_OK(OpenWriter(ts, *built));
    auto raw = decode::RawValueDecoder::Make(ts.writer->schema());
    if (!raw.ok()) {
      return Suspend("table " + ts.ident.ToString() + " cannot take value.format: binary: " +
                     raw.status().message());
    }
    ts.raw_value = std::move(*raw);
    return Status::OK();
  }

  Status CommitDue(std::atomic<bool>& stop, bool force) {
    int64_t now = MonotonicMs();
    for (auto& [topic, ts] : topics_) {
      if (ts.last_commit_ms == 0) ts.last_commit_ms = now;
      if (!force && now - ts.last_commit_ms < ts.settings.commit_interval_ms) continue;
      FLOE_RETURN_NOT_OK(CommitTopic(topic, ts, stop, !registry_outage_));
    }
    return Status::OK();
  }

  // `batch_done`: every record fetched so far was processed, so the consumer's position (which
  // moves past transaction markers and aborted records) may end the batch (ARCHITECTURE.md §2:
  // b = last delivered + 1, or the consumer position if larger).
  Status CommitTopic(const std::string& topic, TopicState& ts, std::atomic<bool>& stop,
                     bool batch_done) {
    ts.last_commit_ms = MonotonicMs();
    if (ts.suspended && !batch_done) return Status::OK();
    if (batch_done && !ts.suspended) {
      auto positions = consumer_->Positions();
      if (positions.ok()) {
        for (auto& [p, ps] : ts.partitions) {
          auto it = positions->find(kafka::TopicPartition{topic, p});
          if (it == positions->end() || it->second < 0) continue;
          int64_t current = ps.next >= 0 ? ps.next : ps.start;
          if (it->second > current) ps.next = it->second;
        }
      }
    }
    bool any = false;
    for (auto& [p, ps] : ts.partitions) any |= ps.next >= 0;
    if (!any) return Status::OK();
    if (!ts.writer && !ts.table.exists) return Status::OK();  // nothing to record positions in
    CommitRequest req;
    req.ident = ts.ident;
    req.cluster_id = cluster_id_;
    if (ts.writer) {
      FLOE_ASSIGN_OR_RAISE(req.files, ts.writer->TakeFiles());
    }
    int64_t records = 0;
    for (const auto& f : req.files) records += f.record_count;
    for (auto& [p, ps] : ts.partitions) {
      if (ps.next < 0) continue;
      req.expected[topic][p] = ps.start_recorded ? std::optional<int64_t>(ps.start) : std::nullopt;
      req.new_positions[topic][p] = ps.next;
    }
    Status st = WithRetry(stop, "commit", [&] { return committer_->Commit(req); });
    if (!st.ok()) {
      if (KindOf(st) == ErrorKind::kConflict) {
        // Fenced: another writer advanced this table's positions. Our files are not
        // referenced; re-read from the table's positions.
        FLOE_LOG_WARN("table {}: {}; re-reading from the table's positions", ts.ident.ToString(), st.message());
        for (const auto& f : req.files) (void)io_->Delete(f.file_path);
        ts.partitions.clear();
        ts.schemas.clear();
        ts.json_schema_id = -1;
        ts.raw_value.reset();
        ts.key_column.reset();
        ts.key_field.reset();
        ts.key_schemas.clear();
        ts.key_guid_ids.clear();
        ts.key_children.clear();
        ts.key_index = -1;
        ts.writer.reset();
        FLOE_RETURN_NOT_OK(LoadPositions(topic, ts));
        return Reassign();
      }
      return st;
    }
    for (auto& [p, ps] : ts.partitions) {
      if (ps.next < 0) continue;
      ps.start = ps.next;
      ps.start_recorded = true;
      ps.next = -1;
    }
    ts.committed_records += records;
    if (WantsDelta(ts.settings)) SyncDelta(ts);
    FLOE_LOG_DEBUG("table {}: committed {} records in {} files", ts.ident.ToString(), records, req.files.size());
    return Status::OK();
  }

  static bool WantsDelta(const config::TopicSettings& settings) {
    return std::find(settings.formats.begin(), settings.formats.end(),
                     config::TableFormat::kDelta) != settings.formats.end();
  }
  // The floe.formats table property: Iceberg is always kept (it is the primary record).
  static std::string FormatsProperty(const config::TopicSettings& settings) {
    return WantsDelta(settings) ? "iceberg,delta" : "iceberg";
  }
  // Delta follows Iceberg; a failure here is logged and repaired by the next commit's (or
  // the next start's) sync, never by re-committing Iceberg.
  void SyncDelta(TopicState& ts) {
    auto version = delta_->Sync(ts.ident);
    if (!version.ok()) {
      FLOE_LOG_WARN("table {}: Delta log not updated yet ({}); it catches up at the next "
                    "commit",
                    ts.ident.ToString(), version.status().message());
    }
  }

  void EnforceMemoryBudget(std::atomic<bool>& stop) {
    int64_t total = 0;
    TopicState* largest = nullptr;
    const std::string* largest_topic = nullptr;
    int64_t largest_bytes = -1;
    for (auto& [topic, ts] : topics_) {
      if (!ts.writer) continue;
      int64_t b = ts.writer->MemoryBytes();
      total += b;
      if (b > largest_bytes) {
        largest_bytes = b;
        largest = &ts;
        largest_topic = &topic;
      }
    }
    if (total > config_.memory_budget_bytes && largest != nullptr) {
      FLOE_LOG_DEBUG("memory {} > budget {}: committing {} early", total, config_.memory_budget_bytes, *largest_topic);
      Status st = CommitTopic(*largest_topic, *largest, stop, true);
      if (!st.ok()) FLOE_LOG_WARN("early commit failed: {}", st.message());
    }
  }

  void LogProgress() {
    for (const auto& [topic, ts] : topics_) {
      if (ts.suspended) {
        FLOE_LOG_WARN("topic {}: SUSPENDED: {}", topic, ts.suspend_reason);
        continue;
      }
      FLOE_LOG_INFO("topic {} → {}: {} records committed this run, {} buffered, {} skipped", topic,
                    ts.ident.ToString(), ts.committed_records,
                    ts.writer ? ts.writer->buffered_rows() : 0, ts.skipped);
    }
  }

  const config::Config& config_;
  std::unique_ptr<kafka::Consumer> consumer_;
  std::unique_ptr<registry::SchemaSource> registry_;
  storage::FileIO* io_;
  std::unique_ptr<Committer> committer_;
  std::unique_ptr<DeltaMirror> delta_;
  std::string cluster_id_;
  std::map<std::string, TopicState> topics_;
  bool registry_outage_ = false;
};

}  // namespace

Result<std::unique_ptr<Pipeline>> Pipeline::Make(const config::Config& config,
                                                 catalog::Catalog* catalog,
                                                 storage::FileIO* io) {
  auto p = std::make_unique<PipelineImpl>(config, catalog, io);
  FLOE_RETURN_NOT_OK(p->Init());
  return std::unique_ptr<Pipeline>(std::move(p));
}

}  // namespace floe::pipeline
