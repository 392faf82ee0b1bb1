// Floe's admin routes (docs/architecture.md, "Topic lifecycle"): the topics an operator
// sees and acts on, under their own prefix, apart from the Iceberg REST Catalog's /v1/:
//
//   GET  /floe/v1/topics                    every topic (state, reason, positions, lag)
//   GET  /floe/v1/topics/{topic}            one topic
//   POST /floe/v1/topics/{topic}/resume     retry from the table's positions
//        ?skip-incompatible=true            ... skipping the records that caused it
//   POST /floe/v1/reload                    read the config file again (as SIGHUP):
//                                           204, or 400 naming the key the file breaks
//
// The server knows nothing of the pipeline: `floe run` hands it a TopicAdmin (cli wires
// the pipeline's AdminBridge to it). Bearer tokens as everywhere: read tokens may GET,
// only full tokens may POST (rest_server.cc). Errors are the Iceberg error model
// ({"error": {"message", "type", "code"}}): 404 NoSuchTopicException, 409
// TopicNotSuspendedException, 400 for a skip with nothing to skip, 503 when the pipeline
// does not answer in time.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "floe/common/status.h"
#include "floe/server/http.h"

namespace floe::server {

inline constexpr const char* kAdminPrefix = "/floe/v1";
inline constexpr const char* kNoSuchTopic = "NoSuchTopicException";
inline constexpr const char* kTopicNotSuspended = "TopicNotSuspendedException";

struct PartitionInfo {
  int32_t partition = 0;
  int64_t committed = -1;       // the table's recorded position (-1: none yet)
  int64_t high_watermark = -1;  // -1: not known yet
  int64_t lag = -1;             // high watermark - committed (-1: unknown)
  int64_t consumed = -1;        // the next offset to read (-1: not being read)
  int64_t read_lag = -1;        // high watermark - consumed (-1: unknown)
};

// One topic as the admin routes show it (pipeline::TopicStatus, copied by the wiring).
struct TopicInfo {
  std::string topic;
  std::string table;
  std::string state;  // running, paused, suspended, resuming
  std::string reason;
  int schema_id = -1;
  int32_t partition = -1;
  int64_t offset = -1;
  int64_t since_ms = 0;  // wall clock; 0: not suspended
  std::vector<PartitionInfo> partitions;
  int64_t last_commit_ms = 0;  // wall clock; 0: none seen
  std::string compatibility;
  std::vector<int> skip_schema_ids;
  std::vector<std::pair<int32_t, int64_t>> skip_records;
  int64_t committed_records = 0;
  int64_t buffered_records = 0;
  int64_t skipped_records = 0;
  int64_t dead_lettered_records = 0;
  int64_t tombstones = 0;
};

// What the admin routes act on. Thread-safe: called from the server's worker threads.
class TopicAdmin {
 public:
  virtual ~TopicAdmin() = default;
  // Every topic; kRetriable while the pipeline has not published its first status.
  virtual Result<std::vector<TopicInfo>> List() = 0;
  // kNotFound (unknown topic), kConflict (not suspended), kInvalidInput (nothing to
  // skip), kRetriable (no answer in time).
  virtual Status Resume(const std::string& topic, bool skip_incompatible) = 0;
  // Reads the config file again and applies it: kInvalidConfig (the file's error; the
  // running config stays), kRetriable (no answer in time).
  virtual Status Reload() = 0;
};

// Borrows `admin`, which must outlive the route set. `now_ms` (wall clock; empty: the
// system's) computes last-commit-age-ms.
std::unique_ptr<RouteSet> MakeAdminRoutes(TopicAdmin* admin,
                                          std::function<int64_t()> now_ms = {});

}  // namespace floe::server
