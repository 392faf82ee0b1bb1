// Pipeline: fetch → decode → table writer → committer, for every enabled topic
// (ARCHITECTURE.md §1). One thread runs the loop: poll → route → append → commit. Kafka,
// the registry, the catalog, storage and time are collaborators passed in as interfaces,
// so the loop runs as well over a broker as over the scripted fakes of the unit tests.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "floe/common/status.h"
#include "floe/config/config.h"

namespace floe::catalog {
class Catalog;
}
namespace floe::kafka {
class RecordSource;
}
namespace floe::registry {
class SchemaSource;
}
namespace floe::storage {
class FileIO;
}

namespace floe::metrics {
class Metrics;
}  // namespace floe::metrics

namespace floe::pipeline {

class AdminBridge;

// Time as the pipeline sees it. Empty members take the system's (monotonic and wall
// clock, this_thread::sleep_for); tests make sleeping advance a fake clock.
struct Clock {
  std::function<int64_t()> monotonic_ms;  // commit intervals, backoff, rediscovery
  std::function<int64_t()> wall_ms;       // snapshot and Delta commit timestamps
  std::function<void(int64_t)> sleep_ms;  // backoff between retries
};

// What the pipeline works with; every pointer must outlive it.
struct Collaborators {
  kafka::RecordSource* source = nullptr;      // Kafka (kafka::Consumer)
  registry::SchemaSource* schemas = nullptr;  // the Schema Registry (registry client)
  catalog::Catalog* catalog = nullptr;        // commits (shared with the REST server)
  storage::FileIO* io = nullptr;              // data files, metadata, the Delta log
  Clock clock;
  // Optional: where the pipeline publishes its topics' status and takes operator
  // commands (the admin routes of the REST server), once per Step.
  AdminBridge* admin = nullptr;
  // Optional: where commits are counted and timed (the server's GET /metrics); the
  // pipeline keeps a private registry without one.
  metrics::Metrics* metrics = nullptr;
  // Optional: reads the config file again, for a reload (SIGHUP or the admin surface's
  // POST /floe/v1/reload through `admin`); without it a reload is refused.
  std::function<Result<config::Config>()> load_config;
};

// One partition of a topic as an operator sees it.
struct PartitionStatus {
  int32_t partition = 0;
  int64_t committed = -1;  // the position the table records (-1: none yet)
  // The next offset to read: past what was read and not yet committed (-1: not being
  // read).
  int64_t consumed = -1;
  // For a partition being read, the one in the consumer's latest fetch response (taken
  // at every status snapshot); else asked every few seconds (-1: not known yet).
  int64_t high_watermark = -1;
  int64_t lag = -1;  // high_watermark - committed: what waits for a commit (-1: unknown)
  int64_t read_lag =
      -1;  // high_watermark - consumed: what waits to be read (-1: unknown)
};

// One topic as an operator sees it (docs/architecture.md, "Topic lifecycle").
struct TopicStatus {
  std::string topic;
  std::string table;  // "namespace.table"
  std::string state;  // "running", "paused", "suspended", "resuming"
  bool suspended = false;
  bool paused = false;     // a table fault: retried with backoff
  std::string reason;      // why it is suspended or paused
  int schema_id = -1;      // suspended by this value schema (-1: none)
  int32_t partition = -1;  // suspended at this record (-1: not a record's fault)
  int64_t offset = -1;
  int64_t since_ms = 0;  // suspended since (wall clock; 0: not suspended)
  std::vector<PartitionStatus> partitions;
  int64_t last_commit_ms = 0;  // the table's newest commit (wall clock; 0: none seen)
  std::string compatibility;   // the registry's compatibility level ("": not read)
  std::vector<int> skip_schema_ids;                       // chosen by the operator
  std::vector<std::pair<int32_t, int64_t>> skip_records;  // (partition, offset)
  int64_t committed_records = 0;                          // this run
  int64_t buffered_records = 0;
  int64_t skipped_records = 0;
  int64_t dead_lettered_records = 0;  // committed to the dead-letter table this run
  int64_t tombstones = 0;             // null values skipped (not rows)
  int64_t read_records = 0;           // taken from Kafka this run
  int64_t read_bytes = 0;             // their keys and values
  // The newest Kafka timestamp among the records committed this run (-1: none).
  int64_t newest_committed_timestamp_ms = -1;
};

class Pipeline {
 public:
  static Result<std::unique_ptr<Pipeline>> Make(const config::Config& config,
                                                Collaborators collaborators);
  virtual ~Pipeline() = default;

  // Runs until `stop` becomes true, then flushes and commits every table and returns OK.
  // Returns an error only for failures that need an operator (e.g. an invalid config
  // found at run time); record-level problems suspend or skip per topic.
  Status Run(std::atomic<bool>& stop);

  // Run's parts, for callers that drive the loop themselves (unit tests):
  // discovers the topics and assigns their partitions at the tables' positions;
  virtual Status Start(std::atomic<bool>& stop) = 0;
  // one round: poll, route and append the records, commit the tables that are due;
  virtual Status Step(std::atomic<bool>& stop) = 0;
  // flushes and commits every table.
  virtual Status Finish() = 0;

  virtual std::vector<TopicStatus> Topics() const = 0;

  // Applies a new config to the running pipeline (pipeline/reload.h): removed topics are
  // committed and stopped, changed ones committed and started again with their new
  // settings, new ones discovered. Refused (the running config stays) when two topics
  // would write one table. Errors returned are Kafka's or that refusal.
  virtual Status Reconfigure(config::Config next) = 0;
};

}  // namespace floe::pipeline
