// The one wrapper around librdkafka's C API (ARCHITECTURE.md §1 Fetch). Floe assigns
// partitions explicitly and seeks them to the positions recorded in the table: the table,
// not the consumer group, owns offsets. read_committed, no auto commit,
// auto.offset.reset=error.
//
// Threading: one Consumer is used by one thread (the pipeline's fetch loop).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "floe/common/status.h"

namespace floe::kafka {

struct Header {
  std::string_view key;
  const uint8_t* value = nullptr;  // nullptr for a null header value
  size_t value_len = 0;
};

// A fetched record: views into librdkafka's buffer, valid until the owning Batch is
// cleared.
struct Record {
  const std::string* topic = nullptr;
  int32_t partition = 0;
  int64_t offset = 0;
  int64_t timestamp_ms = -1;  // -1 when the broker gave none
  const uint8_t* key = nullptr;
  size_t key_len = 0;
  const uint8_t* value = nullptr;  // nullptr for a tombstone
  size_t value_len = 0;
  void* native = nullptr;  // rd_kafka_message_t*; nullptr for a record of another source
  // rd_kafka_headers_t*, looked up once when the record is taken from the consumer (in a
  // tight loop over the batch, where the message's cache misses overlap); nullptr when
  // the record has none.
  void* headers = nullptr;
  // Headers of a record that does not come from librdkafka (a scripted source in tests):
  // a plain array, used when `headers` is nullptr.
  const Header* header_array = nullptr;
  size_t header_array_len = 0;

  size_t HeaderCount() const;
  Header GetHeader(size_t i) const;
  // Finds the last header with this key; false if absent. No allocation.
  bool FindHeader(const char* name, Header* out) const;
};

// Records from one Poll. Owns the librdkafka messages; Clear() releases them.
class Batch {
 public:
  Batch() = default;
  Batch(const Batch&) = delete;
  Batch& operator=(const Batch&) = delete;
  ~Batch() { Clear(); }
  void Clear();
  const std::vector<Record>& records() const { return records_; }
  bool empty() const { return records_.empty(); }
  // A record of a source other than librdkafka (native == nullptr): its bytes belong to
  // that source and must stay valid until Clear().
  void Add(const Record& record) { records_.push_back(record); }

 private:
  friend class Consumer;
  std::vector<Record> records_;
};

struct TopicPartition {
  std::string topic;
  int32_t partition = 0;
  bool operator<(const TopicPartition& o) const {
    return topic < o.topic || (topic == o.topic && partition < o.partition);
  }
  bool operator==(const TopicPartition& o) const {
    return topic == o.topic && partition == o.partition;
  }
};

struct Watermarks {
  int64_t low = 0;   // log start offset
  int64_t high = 0;  // high watermark (or last stable offset under read_committed)
};

// A partition-level failure reported by the consumer (e.g. offset out of range).
struct PartitionError {
  TopicPartition tp;
  int64_t offset = -1;
  std::string message;
  bool out_of_range = false;
};

// A change of the partitions a source reads, decided by the consumer group (cooperative
// incremental: only the partitions that move are named).
struct Rebalance {
  // Read from now on, from the positions the reader gives them (its tables' positions).
  std::vector<TopicPartition> assigned;
  // No longer read here: what was read from them and not committed is dropped (another
  // reader starts from the table's positions; a late commit of this one's loses the
  // fence).
  std::vector<TopicPartition> revoked;
};

// What the pipeline needs from Kafka: Consumer implements it over librdkafka; unit tests
// script it (pipeline/pipeline_test_util.h).
class RecordSource {
 public:
  virtual ~RecordSource() = default;
  // Topic names and partition counts (internal topics included; callers filter).
  virtual Result<std::map<std::string, int>> ListTopics(int timeout_ms) = 0;
  virtual Result<std::string> ClusterId(int timeout_ms) = 0;
  virtual Result<Watermarks> QueryWatermarks(const TopicPartition& tp,
                                             int timeout_ms) = 0;
  // The high watermark the client last saw for an assigned partition (in a fetch
  // response: no broker round trip); nullopt when it has none (not assigned, nothing
  // fetched yet), and by default.
  virtual std::optional<int64_t> CachedHighWatermark(const TopicPartition& tp) {
    (void)tp;
    return std::nullopt;
  }
  // Replaces the assignment: every partition starts at the given offset.
  virtual Status Assign(const std::map<TopicPartition, int64_t>& start_offsets) = 0;
  // Fetches up to max_records, waiting up to timeout_ms only while none has come. The
  // partitions share the batch: each gets an equal turn while it has records.
  // Partition errors are appended to `errors`; a client-wide failure returns an error
  // with an empty batch (when records were taken before it, they are returned and the
  // next Poll reports it).
  virtual Status Poll(int timeout_ms, size_t max_records, Batch* batch,
                      std::vector<PartitionError>* errors) = 0;
  // The group's changes to the partitions read since the last call, oldest first, each
  // reported once. None for a source whose partitions are assigned explicitly (Assign),
  // and by default.
  virtual std::vector<Rebalance> TakeRebalances() { return {}; }
  // The next position per assigned partition (-1 when unknown).
  virtual Result<std::map<TopicPartition, int64_t>> Positions() = 0;
  // Records positions the tables committed as the consumer group's offsets, for
  // monitoring tools (kafka-consumer-groups, lag exporters); never read back: the tables
  // own positions. Asynchronous; a failure here changes nothing Floe does.
  virtual Status CommitForMonitoring(
      const std::map<TopicPartition, int64_t>& positions) = 0;
};

class Consumer : public RecordSource {
 public:
  // `props` are the user's librdkafka properties; Floe's own (isolation.level,
  // enable.auto.commit, auto.offset.reset, enable.partition.eof) are set on top.
  // `queued.min.messages` and `queued.max.messages.kbytes` are totals for the consumer,
  // as librdkafka documents them for one consumer queue: the first Assign divides them
  // over its partitions, or over 8 when fewer are assigned (each partition has its own
  // queue, where librdkafka applies them per partition), and creates the client again
  // with the shares.
  static Result<std::unique_ptr<Consumer>> Make(
      const std::map<std::string, std::string>& props);
  ~Consumer() override;

  Result<std::map<std::string, int>> ListTopics(int timeout_ms) override;
  Result<std::string> ClusterId(int timeout_ms) override;
  Result<Watermarks> QueryWatermarks(const TopicPartition& tp, int timeout_ms) override;
  std::optional<int64_t> CachedHighWatermark(const TopicPartition& tp) override;
  Status Assign(const std::map<TopicPartition, int64_t>& start_offsets) override;
  Status Poll(int timeout_ms, size_t max_records, Batch* batch,
              std::vector<PartitionError>* errors) override;
  Result<std::map<TopicPartition, int64_t>> Positions() override;
  Status CommitForMonitoring(const std::map<TopicPartition, int64_t>& positions) override;
  // A metadata round trip to any broker of the cluster (no topics): OK when one answers
  // within timeout_ms. For readiness probes, on a client of their own.
  Status Ping(int timeout_ms);
  // A property of the live librdkafka client, as librdkafka reports it ("" when unknown).
  std::string Property(const std::string& name) const;

 private:
  Consumer(void* rk, void* queue, int wake_read, int wake_write)
      : rk_(rk), queue_(queue), wake_read_(wake_read), wake_write_(wake_write) {}
  struct Handle {
    void* rk;     // rd_kafka_t*
    void* queue;  // rd_kafka_queue_t*
  };
  // A librdkafka client with `props`, its consumer queue waking `wake_write`.
  static Result<Handle> OpenHandle(const std::map<std::string, std::string>& props,
                                   int wake_write);
  // Destroys the client and its queues (the wake-up pipe stays).
  void CloseHandle();
  // Before the first assignment: replaces the client by one whose per-partition prefetch
  // limits are the totals' shares over `partitions`.
  Status DividePrefetch(size_t partitions);
  // Takes up to `want` records of one queue into `batch` (non-blocking); how many came.
  size_t TakeFrom(void* queue, size_t want, Batch* batch,
                  std::vector<PartitionError>* errors);
  // Stops a partition queue's wake-ups and drops Floe's handle of it.
  static void ReleaseQueue(void* queue);
  // Waits until a queue may have become non-empty, or timeout_ms.
  void Wait(int timeout_ms);
  // Moves one message into `batch`, `errors`, or pending_error_ (a client-wide error).
  void Take(void* message, Batch* batch, std::vector<PartitionError>* errors);
  // The stable name of an assigned topic by librdkafka's topic handle; nullptr when the
  // topic is not assigned any more. No allocation after the first record of a topic.
  const std::string* AssignedTopic(const void* rkt);

  void* rk_;     // rd_kafka_t*
  void* queue_;  // rd_kafka_queue_t*: the consumer queue (client errors and events)
  // Each assigned partition's own queue (not forwarded to the consumer queue), read in
  // turn: librdkafka's prefetch limits then hold per partition, and a partition with a
  // full queue leaves the fetch requests to the others (docs/architecture.md
  // "Fairness").
  struct PartitionQueue {
    TopicPartition tp;
    void* queue;  // rd_kafka_queue_t*
  };
  std::vector<PartitionQueue> partition_queues_;
  size_t next_queue_ = 0;  // where the next Poll's round starts
  // A pipe librdkafka writes a byte to when one of the queues gets its first message.
  int wake_read_ = -1;
  int wake_write_ = -1;
  std::vector<TopicPartition> assigned_;
  std::map<std::string, std::unique_ptr<std::string>, std::less<>>
      topic_names_;  // stable
  std::vector<std::pair<const void*, const std::string*>> topic_by_handle_;
  Status pending_error_;                      // returned by the next Poll
  std::map<std::string, std::string> props_;  // every property the client was made with
  bool prefetch_divided_ = false;
};

}  // namespace floe::kafka
