// TopicSet: the topics a pipeline reads and their lifecycle (docs/architecture.md, "Topic
// lifecycle"). It discovers the enabled topics and their partitions, loads each topic's
// table and positions (again after a fault, a pause, a lost fence or an operator's
// resume), moves topics between running, paused and suspended, and keeps the consumer's
// assignment in step. It never takes records: the loop calls it between batches, with
// what a translator's verdict or a commit decided.
//
// Threading: used by the pipeline thread only.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <utility>

#include "floe/common/status.h"
#include "floe/config/config.h"
#include "floe/kafka/consumer.h"
#include "floe/pipeline/pipeline.h"
#include "floe/pipeline/topic_state.h"

namespace floe::metrics {
class Metrics;
}
namespace floe::storage {
class FileIO;
}

namespace floe::pipeline {

class DeadLetters;
class RangeCommit;
class SchemaResolver;

class TopicSet {
 public:
  // What it works with; every pointer must outlive it. `config` is the pipeline's, which
  // a reload replaces in place.
  struct Deps {
    const config::Config* config = nullptr;
    kafka::RecordSource* source = nullptr;
    storage::FileIO* io = nullptr;
    const Clock* clock = nullptr;
    table::Committer* committer = nullptr;
    DeadLetters* dead_letters = nullptr;
    RangeCommit* commits = nullptr;
    SchemaResolver* resolver = nullptr;
    metrics::Metrics* metrics = nullptr;
  };
  explicit TopicSet(const Deps& deps) : d_(deps) {}

  std::map<std::string, TopicState>& all() { return topics_; }
  const std::map<std::string, TopicState>& all() const { return topics_; }
  const std::string& cluster_id() const { return cluster_id_; }
  // Counts the seeks (Reassign that succeeded): records fetched before one are fetched
  // again.
  int64_t reassignments() const { return reassignments_; }

  // The cluster's topics: new enabled ones start (their table and positions loaded),
  // ones with more partitions load the new partitions; a configured topic the cluster
  // lacks is warned about. Kafka's errors (a table's faults pause or suspend its topic).
  Status Discover();
  // Seeks every partition read to its position.
  Status Reassign();
  // `r`: the record the topic stops at (a record-level suspension, persisted in the table
  // so a restart stays suspended); `schema_id`: its value schema when it is the cause.
  Status SuspendTopic(const std::string& topic, TopicState& ts, const std::string& reason,
                      const kafka::Record* r = nullptr, int schema_id = -1);
  // An operator's resume (`skip`: skip-incompatible).
  Status ResumeTopic(const std::string& topic, bool skip);
  // One table's storage or catalog failed (TableFaults): its uncommitted files go, and
  // the topic pauses (a fault time can fix) or suspends; every other topic goes on.
  Status TableFault(const std::string& topic, TopicState& ts, const Status& fault);
  // Fenced: another writer advanced the table's (or its dead-letter table's) positions;
  // the topic reads again at once from them.
  Status Refence(const std::string& topic, TopicState& ts, const Status& why);
  // Paused topics whose time has come load their table and positions again.
  Status ResumeDue();
  // The consumer group moved partitions. A revoked partition's topic drops what it read
  // and did not commit (its partitions share the topic's files) and reads the partitions
  // it keeps again from its table's positions; an assigned one is read from its table's
  // position.
  Status Rebalanced(const kafka::Rebalance& rebalance);
  // A partition-level error of the consumer (out of range suspends the topic).
  void HandlePartitionError(const kafka::PartitionError& e);
  // The topic whose writers (its table's and its dead letters') buffer the most bytes
  // (nullptr: none buffers any), and in `*total` what all of them buffer.
  std::pair<const std::string, TopicState>* LargestBuffer(int64_t* total);
  // Delta logs behind their Iceberg tables synced again: those whose retry time came,
  // or (`all`, at shutdown) every one behind.
  void RetryDelta(bool all);
  // value.format json: each topic's subject checked for a newer version (decoded with
  // from then on).
  void RefreshJsonSubjects();
  // One progress line per topic (`elapsed_ms` since the last), and the run in one line.
  void LogProgress(int64_t elapsed_ms);
  void LogRunSummary(int64_t elapsed_ms) const;
  // A reload stopped the topic; with `restart`, its run's counters wait for Discover to
  // start it again.
  void Remove(const std::string& topic, bool restart);

 private:
  void WarnMissingTopics(const std::map<std::string, int>& existing);
  Status LoadPositions(const std::string& topic, TopicState& ts);
  Status LoadPositionsOrPause(const std::string& topic, TopicState& ts);
  Status RecreateDropped(const std::string& topic, TopicState& ts, const Status& why);

  Deps d_;
  std::map<std::string, TopicState> topics_;
  std::string cluster_id_;
  int64_t reassignments_ = 0;
  std::map<std::string, int64_t> missing_warned_ms_;  // configured topics not found
  // Counters of topics a reload restarted, until Discover starts them again.
  std::map<std::string, TopicState> restarted_counters_;
};

}  // namespace floe::pipeline
