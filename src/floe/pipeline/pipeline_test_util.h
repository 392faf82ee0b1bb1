// Fakes for the pipeline's unit tests: a scripted Kafka (RecordSource), a scripted schema
// registry, fault injection around FileIO and the pointer store, and a harness that runs
// a Pipeline over them with a fake clock and reads the committed table back.
#pragma once

#include <atomic>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "floe/catalog/catalog.h"
#include "floe/kafka/consumer.h"
#include "floe/pipeline/pipeline.h"
#include "floe/registry/client.h"
#include "floe/storage/file_io.h"
#include "floe/storage/file_io_test_util.h"
#include "floe/table/positions.h"

namespace floe::pipeline::testing {

// A Kafka cluster in memory: topics, partitions, logs with offsets (and gaps, as
// transaction markers leave), log start and high watermark. Poll serves the assigned
// partitions round-robin from their positions.
class ScriptedSource : public kafka::RecordSource {
 public:
  struct Message {
    std::optional<std::string> key;
    std::optional<std::string> value;  // nullopt: a tombstone
    int64_t timestamp_ms = 1'700'000'000'000;
    std::vector<std::pair<std::string, std::optional<std::string>>> headers;
  };

  void AddTopic(const std::string& topic, int partitions);
  // Appends a record; returns its offset.
  int64_t Produce(const std::string& topic, int32_t partition, Message m);
  // Advances the log end by `n` offsets that hold no record (transaction markers).
  void Gap(const std::string& topic, int32_t partition, int64_t n);
  // Retention: records below `offset` are gone.
  void SetLogStart(const std::string& topic, int32_t partition, int64_t offset);
  void set_cluster_id(std::string id) { cluster_id_ = std::move(id); }
  // The next `n` calls of `what` ("ListTopics", "Poll", "QueryWatermarks") fail with
  // `st`.
  void FailNext(const std::string& what, int n, Status st);
  // Called by every Poll with its timeout (the harness advances its clock).
  std::function<void(int)> on_poll;

  // The consumer group moves a partition: Revoke stops serving it at once and reports
  // it revoked; Grant reports it assigned (served once the reader assigns its position).
  void Revoke(const kafka::TopicPartition& tp);
  void Grant(const kafka::TopicPartition& tp);
  std::vector<kafka::Rebalance> TakeRebalances() override {
    return std::exchange(rebalances_, {});
  }

  const std::map<kafka::TopicPartition, int64_t>& assignment() const {
    return positions_;
  }
  int assign_calls() const { return assign_calls_; }

  Result<std::map<std::string, int>> ListTopics(int timeout_ms) override;
  Result<std::string> ClusterId(int timeout_ms) override;
  Result<kafka::Watermarks> QueryWatermarks(const kafka::TopicPartition& tp,
                                            int timeout_ms) override;
  Status Assign(const std::map<kafka::TopicPartition, int64_t>& start_offsets) override;
  Status Poll(int timeout_ms, size_t max_records, kafka::Batch* batch,
              std::vector<kafka::PartitionError>* errors) override;
  Result<std::map<kafka::TopicPartition, int64_t>> Positions() override;
  Status CommitForMonitoring(
      const std::map<kafka::TopicPartition, int64_t>& positions) override {
    for (const auto& [tp, offset] : positions) group_offsets_[tp] = offset;
    return Status::OK();
  }
  // What CommitForMonitoring recorded, per partition: the consumer group's offsets.
  const std::map<kafka::TopicPartition, int64_t>& group_offsets() const {
    return group_offsets_;
  }

 private:
  std::map<kafka::TopicPartition, int64_t> group_offsets_;
  std::vector<kafka::Rebalance> rebalances_;
  struct Stored {
    int64_t offset;
    Message message;
    std::vector<kafka::Header> header_views;
  };
  struct Log {
    int64_t low = 0;
    int64_t high = 0;  // next offset
    std::deque<Stored> records;
  };
  Status Injected(const std::string& what);

  std::map<std::string, std::unique_ptr<std::string>> topic_names_;
  std::map<kafka::TopicPartition, Log> logs_;
  std::map<kafka::TopicPartition, int64_t> positions_;
  std::map<std::string, std::pair<int, Status>> failures_;
  std::string cluster_id_ = "cluster-A";
  int assign_calls_ = 0;
  size_t rr_ = 0;  // round-robin start
};

// A schema registry in memory: schemas by id, subjects with versions.
class FakeRegistry : public registry::SchemaSource {
 public:
  // Registers `text` under `subject` (a new version) and returns its id.
  int Register(const std::string& subject, const std::string& text,
               registry::SchemaType type = registry::SchemaType::kAvro);
  // The next `n` lookups fail with `st` (e.g. a kRetriable outage).
  void FailNext(int n, Status st) {
    fail_count_ = n;
    fail_status_ = std::move(st);
  }
  int lookups() const { return lookups_; }
  // The compatibility level of `subject` ("" sets the global one, BACKWARD at first as
  // in Confluent's registry).
  void SetCompatibility(const std::string& subject, std::string level) {
    (subject.empty() ? global_level_ : levels_[subject]) = std::move(level);
  }

  Result<std::shared_ptr<const registry::RegisteredSchema>> ById(int id) override;
  Result<std::shared_ptr<const registry::RegisteredSchema>> ByGuid(
      const std::string& guid) override;
  Result<std::shared_ptr<const registry::RegisteredSchema>> BySubjectVersion(
      const std::string& subject, int version) override;
  Result<std::vector<registry::SubjectVersion>> SubjectVersionsOf(int id) override;
  Result<std::string> Compatibility(const std::string& subject) override {
    FLOE_RETURN_NOT_OK(Injected());
    auto it = levels_.find(subject);
    return it != levels_.end() ? it->second : global_level_;
  }

 private:
  std::string global_level_ = "BACKWARD";
  std::map<std::string, std::string> levels_;
  Status Injected();
  std::map<int, std::shared_ptr<registry::RegisteredSchema>> by_id_;
  std::map<std::string, std::vector<int>> subjects_;
  int next_id_ = 1;
  int fail_count_ = 0;
  Status fail_status_;
  int lookups_ = 0;
};

// A PointerStore that forwards to another; the next `n` swaps fail with `st`, applied to
// the inner store first when `applied` (an unknown outcome that did happen).
class FaultyStore : public catalog::PointerStore {
 public:
  explicit FaultyStore(catalog::PointerStore* inner) : inner_(inner) {}
  void FailSwaps(int n, Status st, bool applied) {
    fail_swaps_ = n;
    swap_status_ = std::move(st);
    applied_ = applied;
  }
  int swap_failures_left() const { return fail_swaps_; }
  // Only swaps of this table fail (empty: any table's).
  std::string only_table;
  Result<std::string> Get(const catalog::TableIdent& i) override {
    return inner_->Get(i);
  }
  Status Create(const catalog::TableIdent& i, const std::string& l) override {
    return inner_->Create(i, l);
  }
  Status Swap(const catalog::TableIdent& ident, const std::string& expected,
              const std::string& desired) override;
  Status Drop(const catalog::TableIdent& i, const std::string& expected) override {
    return inner_->Drop(i, expected);
  }
  Result<std::vector<catalog::TableIdent>> ListTables(
      const std::vector<std::string>& ns) override {
    return inner_->ListTables(ns);
  }
  Status Rename(const catalog::TableIdent& f, const catalog::TableIdent& t) override {
    return inner_->Rename(f, t);
  }
  Status SwapAll(const std::vector<SwapOp>& ops) override { return inner_->SwapAll(ops); }
  Status CreateNamespace(const std::vector<std::string>& ns,
                         const std::map<std::string, std::string>& p) override {
    return inner_->CreateNamespace(ns, p);
  }
  Result<bool> NamespaceExists(const std::vector<std::string>& ns) override {
    return inner_->NamespaceExists(ns);
  }
  Result<std::vector<std::vector<std::string>>> ListNamespaces() override {
    return inner_->ListNamespaces();
  }
  Result<std::map<std::string, std::string>> NamespaceProperties(
      const std::vector<std::string>& ns) override {
    return inner_->NamespaceProperties(ns);
  }
  Status UpdateNamespaceProperties(const std::vector<std::string>& ns,
                                   const std::map<std::string, std::string>& u,
                                   const std::vector<std::string>& r) override {
    return inner_->UpdateNamespaceProperties(ns, u, r);
  }
  Status DropNamespace(const std::vector<std::string>& ns) override {
    return inner_->DropNamespace(ns);
  }

 private:
  catalog::PointerStore* inner_;
  int fail_swaps_ = 0;
  Status swap_status_;
  bool applied_ = false;
};

// `payload` behind the Confluent prefix (magic 0, 4-byte schema id).
std::string Framed(int schema_id, const std::string& payload);
// Avro payloads of the test schema {id: long, name: string}, Confluent-framed.
std::string AvroSchemaText();
// The same fields in a record of another name: another schema (and id) for the registry,
// decoding the same payloads.
std::string AvroSchemaTextRenamed();
std::string FramedAvro(int schema_id, int64_t id, const std::string& name);
// Avro schema {id: long, name: string, extra: [null, string]} (a writer that adds a
// column).
std::string AvroSchemaWithExtraText();
std::string FramedAvroWithExtra(int schema_id, int64_t id, const std::string& name);

// One committed row of the test table.
struct Row {
  int64_t id = 0;
  std::string name;
  int32_t partition = 0;
  int64_t offset = 0;
};

// A Pipeline over the fakes (memory FileIO and pointer store behind the fault injectors),
// a fake clock that sleeping and polling advance, and readers for the result.
class Harness {
 public:
  // `topics_yaml`: the config's `topics:` list and anything after it, e.g.
  // "topics: [{name: orders}]\ndefaults: {commit.interval.ms: 1000}\n".
  explicit Harness(const std::string& topics_yaml);
  ~Harness();
  // The config the Harness would run `topics_yaml` with.
  static Result<config::Config> ParseConfig(const std::string& topics_yaml);

  // A new Pipeline over the same Kafka, registry, catalog and storage (a restart).
  Status Restart();
  Status Start();
  // Steps until `done()` is true or `max_steps` rounds passed (false then).
  bool RunUntil(const std::function<bool()>& done, int max_steps = 2000);
  // Steps for `ms` of fake time.
  Status RunFor(int64_t ms);
  Status Finish();
  Pipeline& pipeline() { return *pipeline_; }
  TopicStatus Topic(const std::string& topic);

  // The committed state of table kafka.<table>.
  Result<iceberg::TableMetadata> Metadata(const std::string& table);
  Result<std::vector<Row>> Rows(const std::string& table);
  std::optional<table::Positions> RecordedPositions(const std::string& table);
  // Every data file object under the warehouse (committed or not).
  std::vector<std::string> DataFileObjects();

  ScriptedSource kafka;
  FakeRegistry registry;
  std::unique_ptr<storage::FileIO> memory_io;
  storage::FaultyFileIO io;  // over memory_io
  std::unique_ptr<catalog::PointerStore> memory_store;
  FaultyStore store{nullptr};
  std::unique_ptr<catalog::Catalog> catalog;
  int64_t now_ms = 1'000'000;
  int64_t wall_ms = 1'765'000'000'000;
  int64_t slept_ms = 0;
  std::atomic<bool> stop{false};
  config::Config config;
  AdminBridge* admin = nullptr;         // handed to the pipeline by the next Restart()
  metrics::Metrics* metrics = nullptr;  // likewise
  std::function<Result<config::Config>()> load_config;  // likewise

 private:
  std::unique_ptr<Pipeline> pipeline_;
};

}  // namespace floe::pipeline::testing
