#include "floe/kafka/consumer.h"

#include <fcntl.h>
#include <librdkafka/rdkafka.h>
#include <poll.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <utility>

#include "floe/common/log.h"
#include "floe/common/util.h"

namespace floe::kafka {
namespace {

rd_kafka_t* Rk(void* p) { return static_cast<rd_kafka_t*>(p); }

Status KafkaError(const std::string& what, rd_kafka_resp_err_t err) {
  std::string msg = what + ": " + rd_kafka_err2str(err);
  switch (err) {
    case RD_KAFKA_RESP_ERR__UNKNOWN_TOPIC:
    case RD_KAFKA_RESP_ERR_UNKNOWN_TOPIC_OR_PART:
      return NotFound(msg);
    case RD_KAFKA_RESP_ERR__AUTHENTICATION:
    case RD_KAFKA_RESP_ERR_SASL_AUTHENTICATION_FAILED:
    case RD_KAFKA_RESP_ERR_TOPIC_AUTHORIZATION_FAILED:
    case RD_KAFKA_RESP_ERR_GROUP_AUTHORIZATION_FAILED:
    case RD_KAFKA_RESP_ERR_CLUSTER_AUTHORIZATION_FAILED:
      return MakeError(ErrorKind::kUnauthorized, msg);
    default:
      return Retriable(msg);
  }
}

// A broker outage repeats the same few errors at every reconnect attempt, per broker
// (librdkafka's own "identical error(s) suppressed" only merges back-to-back ones): one
// line per distinct error every 30 s, with the count of those held back, is what an
// operator can read.
constexpr int64_t kRepeatedErrorLogMs = 30000;

LogRateLimiter& RepeatedErrorLimiter() {
  static LogRateLimiter limiter(kRepeatedErrorLogMs);  // shared by every consumer
  return limiter;
}

// The rate-limit key of a librdkafka error line, in `buf` (no allocation): the level, the
// facility and the message up to " (after Nms in state X…)", the part that changes
// between repeats of one error. Broker names and counts before it stay in the key, so
// another broker's failure or a change in "1/3 brokers are down" is logged at once.
std::string_view RepeatKey(char (&buf)[256], int level, const char* fac,
                           std::string_view msg) {
  const size_t cut = msg.find(" (after ");
  if (cut != std::string_view::npos) msg = msg.substr(0, cut);
  const int n =
      std::snprintf(buf, sizeof(buf), "%d|%s|%.*s", level, fac,
                    static_cast<int>(std::min<size_t>(msg.size(), 200)), msg.data());
  return std::string_view(buf, static_cast<size_t>(std::clamp(n, 0, 255)));
}

// librdkafka's own log lines go through Floe's logger instead of raw stderr; warnings and
// errors that repeat are rate-limited (called from librdkafka's threads).
void LogCallback(const rd_kafka_t*, int level, const char* fac, const char* buf) {
  if (level <= 4) {
    const auto spd = level <= 3 ? ::spdlog::level::err : ::spdlog::level::warn;
    if (!::spdlog::should_log(spd)) return;
    char key_buf[256];
    LogRepeats repeats;
    if (RepeatedErrorLimiter().Admit(RepeatKey(key_buf, level, fac, buf), &repeats)) {
      ::spdlog::log(spd, "kafka {}: {}{}", fac, buf, repeats);
    }
  } else if (level <= 6) {
    FLOE_LOG_INFO("kafka {}: {}", fac, buf);
  } else {
    FLOE_LOG_DEBUG("kafka {}: {}", fac, buf);
  }
}

}  // namespace

size_t Record::HeaderCount() const {
  if (headers == nullptr) return header_array_len;
  return rd_kafka_header_cnt(static_cast<const rd_kafka_headers_t*>(headers));
}

Header Record::GetHeader(size_t i) const {
  Header h;
  if (headers == nullptr) return i < header_array_len ? header_array[i] : h;
  const char* name = nullptr;
  const void* val = nullptr;
  size_t size = 0;
  if (rd_kafka_header_get_all(static_cast<const rd_kafka_headers_t*>(headers), i, &name,
                              &val, &size) == RD_KAFKA_RESP_ERR_NO_ERROR) {
    h.key = name;
    h.value = static_cast<const uint8_t*>(val);
    h.value_len = val ? size : 0;
  }
  return h;
}

bool Record::FindHeader(const char* name, Header* out) const {
  if (headers == nullptr) {
    for (size_t i = header_array_len; i-- > 0;) {
      if (header_array[i].key == name) {
        *out = header_array[i];
        return true;
      }
    }
    return false;
  }
  const void* val = nullptr;
  size_t size = 0;
  if (rd_kafka_header_get_last(static_cast<const rd_kafka_headers_t*>(headers), name,
                               &val, &size) != RD_KAFKA_RESP_ERR_NO_ERROR) {
    return false;
  }
  out->key = name;
  out->value = static_cast<const uint8_t*>(val);
  out->value_len = val ? size : 0;
  return true;
}

void Batch::Clear() {
  for (auto& r : records_) {
    if (r.native != nullptr)
      rd_kafka_message_destroy(static_cast<rd_kafka_message_t*>(r.native));
  }
  records_.clear();
}

namespace {

// librdkafka's prefetch limits, which Floe treats as consumer-wide totals and divides
// over the assigned partitions (each partition has its own queue, where librdkafka
// applies them per partition): docs/architecture.md "Fairness".
constexpr const char* kQueuedMessages = "queued.min.messages";
constexpr const char* kQueuedKBytes = "queued.max.messages.kbytes";
// What one partition keeps at least, however many are assigned: a fetch response's
// share (`max.partition.fetch.bytes`) dominates below these anyway.
constexpr int64_t kMinQueuedMessages = 500;
constexpr int64_t kMinQueuedKBytes = 64;

std::optional<int64_t> IntProperty(const std::map<std::string, std::string>& props,
                                   const char* name) {
  auto it = props.find(name);
  if (it == props.end()) return std::nullopt;
  char* end = nullptr;
  const long long v = std::strtoll(it->second.c_str(), &end, 10);
  if (end == it->second.c_str() || *end != '\0' || v <= 0) return std::nullopt;
  return v;
}

// One partition's share of a consumer-wide total: the total over the partitions, or over
// kMinDivisor when fewer are assigned (a partition alone does not need the prefetch of
// eight), never below `floor` (nor above the total).
constexpr size_t kMinDivisor = 8;

int64_t ShareOf(int64_t total, size_t partitions, int64_t floor) {
  const int64_t share = total / static_cast<int64_t>(std::max(kMinDivisor, partitions));
  return std::min(total, std::max(share, floor));
}

}  // namespace

Result<Consumer::Handle> Consumer::OpenHandle(
    const std::map<std::string, std::string>& props, int wake_write) {
  rd_kafka_conf_t* conf = rd_kafka_conf_new();
  char err[512];
  for (const auto& [k, v] : props) {
    if (rd_kafka_conf_set(conf, k.c_str(), v.c_str(), err, sizeof(err)) !=
        RD_KAFKA_CONF_OK) {
      rd_kafka_conf_destroy(conf);
      return InvalidConfig("kafka." + k + ": " + err);
    }
  }
  rd_kafka_conf_set_log_cb(conf, LogCallback);
  rd_kafka_t* rk = rd_kafka_new(RD_KAFKA_CONSUMER, conf, err, sizeof(err));
  if (rk == nullptr) {
    rd_kafka_conf_destroy(conf);
    return InvalidConfig(std::string("kafka: cannot create consumer: ") + err);
  }
  rd_kafka_poll_set_consumer(rk);
  rd_kafka_queue_t* queue = rd_kafka_queue_get_consumer(rk);
  rd_kafka_queue_io_event_enable(queue, wake_write, "1", 1);
  return Handle{rk, queue};
}

void Consumer::CloseHandle() {
  rd_kafka_t* rk = Rk(rk_);
  for (auto& pq : partition_queues_) ReleaseQueue(pq.queue);
  partition_queues_.clear();
  rd_kafka_queue_io_event_enable(static_cast<rd_kafka_queue_t*>(queue_), -1, nullptr, 0);
  rd_kafka_queue_destroy(static_cast<rd_kafka_queue_t*>(queue_));
  // Explicit assignment, no group membership to leave: close is quick.
  rd_kafka_assign(rk, nullptr);
  rd_kafka_consumer_close(rk);
  rd_kafka_destroy(rk);
  rk_ = nullptr;
  queue_ = nullptr;
}

Result<std::unique_ptr<Consumer>> Consumer::Make(
    const std::map<std::string, std::string>& props) {
  std::map<std::string, std::string> all = props;
  all.emplace("group.id", "floe");
  all.emplace("client.id", "floe");
  all["isolation.level"] = "read_committed";
  all["enable.auto.commit"] = "false";
  all["enable.auto.offset.store"] = "false";
  all["auto.offset.reset"] = "error";
  all["enable.partition.eof"] = "false";
  int wake[2];
  if (pipe2(wake, O_NONBLOCK | O_CLOEXEC) != 0) {
    return Status::IOError("kafka: cannot create the consumer's wake-up pipe: ",
                           std::strerror(errno));
  }
  auto handle = OpenHandle(all, wake[1]);
  if (!handle.ok()) {
    close(wake[0]);
    close(wake[1]);
    return handle.status();
  }
  FLOE_LOG_INFO("kafka: librdkafka {}", rd_kafka_version_str());
  auto consumer = std::unique_ptr<Consumer>(
      new Consumer(handle->rk, handle->queue, wake[0], wake[1]));
  consumer->props_ = std::move(all);
  return consumer;
}

Status Consumer::DividePrefetch(size_t partitions) {
  const auto messages = IntProperty(props_, kQueuedMessages);
  const auto kbytes = IntProperty(props_, kQueuedKBytes);
  if (!messages && !kbytes) return Status::OK();  // librdkafka's own defaults
  std::map<std::string, std::string> divided = props_;
  std::string shares;
  if (messages) {
    const int64_t n = ShareOf(*messages, partitions, kMinQueuedMessages);
    divided[kQueuedMessages] = std::to_string(n);
    shares += std::to_string(n) + " records";
  }
  if (kbytes) {
    const int64_t n = ShareOf(*kbytes, partitions, kMinQueuedKBytes);
    divided[kQueuedKBytes] = std::to_string(n);
    shares += (shares.empty() ? "" : " and ") + std::to_string(n) + " KiB";
  }
  if (divided == props_) return Status::OK();
  // Nothing is assigned yet, so no record of the old handle is held anywhere.
  FLOE_ASSIGN_OR_RAISE(Handle handle, OpenHandle(divided, wake_write_));
  CloseHandle();
  rk_ = handle.rk;
  queue_ = handle.queue;
  FLOE_LOG_INFO(
      "kafka: prefetch divided over {} partitions: up to {} queued per partition",
      partitions, shares);
  return Status::OK();
}

Consumer::~Consumer() {
  CloseHandle();
  close(wake_read_);
  close(wake_write_);
}

Result<std::map<std::string, int>> Consumer::ListTopics(int timeout_ms) {
  const rd_kafka_metadata_t* md = nullptr;
  auto err = rd_kafka_metadata(Rk(rk_), 1, nullptr, &md, timeout_ms);
  if (err != RD_KAFKA_RESP_ERR_NO_ERROR) return KafkaError("list topics", err);
  std::map<std::string, int> out;
  for (int i = 0; i < md->topic_cnt; ++i) {
    const auto& t = md->topics[i];
    if (t.err == RD_KAFKA_RESP_ERR_NO_ERROR) out[t.topic] = t.partition_cnt;
  }
  rd_kafka_metadata_destroy(md);
  return out;
}

Result<std::string> Consumer::ClusterId(int timeout_ms) {
  char* id = rd_kafka_clusterid(Rk(rk_), timeout_ms);
  if (id == nullptr)
    return Retriable("kafka: cluster id not available (broker unreachable?)");
  std::string out(id);
  rd_kafka_mem_free(Rk(rk_), id);
  return out;
}

Result<Watermarks> Consumer::QueryWatermarks(const TopicPartition& tp, int timeout_ms) {
  Watermarks w;
  auto err = rd_kafka_query_watermark_offsets(Rk(rk_), tp.topic.c_str(), tp.partition,
                                              &w.low, &w.high, timeout_ms);
  if (err != RD_KAFKA_RESP_ERR_NO_ERROR) {
    return KafkaError("watermarks of " + tp.topic + "/" + std::to_string(tp.partition),
                      err);
  }
  return w;
}

std::optional<int64_t> Consumer::CachedHighWatermark(const TopicPartition& tp) {
  int64_t low = RD_KAFKA_OFFSET_INVALID;
  int64_t high = RD_KAFKA_OFFSET_INVALID;
  auto err = rd_kafka_get_watermark_offsets(Rk(rk_), tp.topic.c_str(), tp.partition, &low,
                                            &high);
  if (err != RD_KAFKA_RESP_ERR_NO_ERROR || high < 0) return std::nullopt;
  return high;
}

Status Consumer::Assign(const std::map<TopicPartition, int64_t>& start_offsets) {
  // The prefetch limits are divided once, over the first assignment (librdkafka reads
  // them only when a handle is created): partitions assigned later get the same share.
  if (!prefetch_divided_ && !start_offsets.empty()) {
    FLOE_RETURN_NOT_OK(DividePrefetch(start_offsets.size()));
    prefetch_divided_ = true;
  }
  rd_kafka_topic_partition_list_t* list =
      rd_kafka_topic_partition_list_new(static_cast<int>(start_offsets.size()));
  assigned_.clear();
  topic_by_handle_.clear();
  for (const auto& [tp, off] : start_offsets) {
    rd_kafka_topic_partition_list_add(list, tp.topic.c_str(), tp.partition)->offset = off;
    assigned_.push_back(tp);
    if (!topic_names_.count(tp.topic)) {
      topic_names_[tp.topic] = std::make_unique<std::string>(tp.topic);
    }
  }
  // Every partition gets its own queue, taken off the consumer queue before it is
  // assigned (librdkafka forwards a partition's queue at assignment unless the
  // application set its forwarding); a handle kept stays valid across assignments.
  std::vector<PartitionQueue> queues;
  for (const auto& tp : assigned_) {
    auto it = std::find_if(partition_queues_.begin(), partition_queues_.end(),
                           [&](const PartitionQueue& pq) { return pq.tp == tp; });
    if (it != partition_queues_.end()) {
      queues.push_back(*it);
      it->queue = nullptr;
      continue;
    }
    rd_kafka_queue_t* q =
        rd_kafka_queue_get_partition(Rk(rk_), tp.topic.c_str(), tp.partition);
    if (q == nullptr) continue;  // left on the consumer queue: read from there
    rd_kafka_queue_forward(q, nullptr);
    rd_kafka_queue_io_event_enable(q, wake_write_, "1", 1);
    queues.push_back({tp, q});
  }
  for (auto& pq : partition_queues_) {
    if (pq.queue != nullptr) ReleaseQueue(pq.queue);
  }
  partition_queues_ = std::move(queues);
  next_queue_ = 0;
  auto err = rd_kafka_assign(Rk(rk_), list);
  rd_kafka_topic_partition_list_destroy(list);
  if (err != RD_KAFKA_RESP_ERR_NO_ERROR) return KafkaError("assign", err);
  return Status::OK();
}

void Consumer::ReleaseQueue(void* queue) {
  auto* q = static_cast<rd_kafka_queue_t*>(queue);
  rd_kafka_queue_io_event_enable(q, -1, nullptr, 0);
  rd_kafka_queue_destroy(q);
}

size_t Consumer::TakeFrom(void* queue, size_t want, Batch* batch,
                          std::vector<PartitionError>* errors) {
  constexpr size_t kChunk = 1024;
  rd_kafka_message_t* chunk[kChunk];
  size_t taken = 0;
  while (taken < want && pending_error_.ok()) {
    const size_t n = std::min(kChunk, want - taken);
    ssize_t got =
        rd_kafka_consume_batch_queue(static_cast<rd_kafka_queue_t*>(queue), 0, chunk, n);
    if (got < 0) {
      pending_error_ = KafkaError("kafka consumer", rd_kafka_last_error());
      break;
    }
    for (ssize_t i = 0; i < got; ++i) Take(chunk[i], batch, errors);
    taken += static_cast<size_t>(got);
    if (static_cast<size_t>(got) < n) break;  // the queue is empty
  }
  return taken;
}

void Consumer::Wait(int timeout_ms) {
  pollfd pfd{wake_read_, POLLIN, 0};
  if (poll(&pfd, 1, timeout_ms) > 0) {
    char drain[256];
    while (read(wake_read_, drain, sizeof(drain)) > 0) {
    }
  }
}

Status Consumer::Poll(int timeout_ms, size_t max_records, Batch* batch,
                      std::vector<PartitionError>* errors) {
  // A client-wide error seen after records were taken is reported by the next Poll, so
  // the records taken before it (the consumer position is already past them) are not
  // dropped.
  if (!pending_error_.ok()) return std::exchange(pending_error_, Status::OK());
  // Fairness (docs/architecture.md "Fairness"): the partitions take turns, each at most
  // `share` records a turn, starting one further each Poll, so a backlog drains evenly
  // across partitions. Records are taken in bulk (one lock and no clock read per
  // record); only when every queue is empty does Poll wait, on the wake-up pipe, up to
  // timeout_ms.
  const int64_t deadline = MonotonicMs() + timeout_ms;
  const size_t queues = partition_queues_.size();
  const size_t share = std::max<size_t>(256, max_records / std::max<size_t>(1, queues));
  for (;;) {
    // The consumer queue: client-wide errors and events, and any record it got before
    // its partition had a queue of its own.
    TakeFrom(queue_, max_records - std::min(max_records, batch->records_.size()), batch,
             errors);
    for (bool any = true;
         any && batch->records_.size() < max_records && pending_error_.ok();) {
      any = false;
      for (size_t k = 0; k < queues && batch->records_.size() < max_records; ++k) {
        const auto& pq = partition_queues_[(next_queue_ + k) % queues];
        const size_t want = std::min(share, max_records - batch->records_.size());
        if (TakeFrom(pq.queue, want, batch, errors) > 0) any = true;
      }
    }
    if (queues > 0) next_queue_ = (next_queue_ + 1) % queues;
    if (!batch->records_.empty() || !pending_error_.ok()) break;
    const int64_t wait = deadline - MonotonicMs();
    if (wait <= 0) break;
    Wait(static_cast<int>(wait));
  }
  if (batch->records_.empty() && !pending_error_.ok()) {
    return std::exchange(pending_error_, Status::OK());
  }
  return Status::OK();
}

void Consumer::Take(void* message, Batch* batch, std::vector<PartitionError>* errors) {
  auto* m = static_cast<rd_kafka_message_t*>(message);
  if (m->err != RD_KAFKA_RESP_ERR_NO_ERROR) {
    PartitionError pe;
    if (m->rkt) pe.tp.topic = rd_kafka_topic_name(m->rkt);
    pe.tp.partition = m->partition;
    pe.offset = m->offset;
    pe.message = rd_kafka_message_errstr(m);
    pe.out_of_range = m->err == RD_KAFKA_RESP_ERR__AUTO_OFFSET_RESET ||
                      m->err == RD_KAFKA_RESP_ERR_OFFSET_OUT_OF_RANGE;
    rd_kafka_resp_err_t err = m->err;
    rd_kafka_message_destroy(m);
    if (pe.tp.topic.empty() && !pe.out_of_range) {
      // Client-wide errors (broker down, all brokers unreachable): systemic, retried by
      // the caller. librdkafka keeps reconnecting on its own.
      if (err == RD_KAFKA_RESP_ERR__ALL_BROKERS_DOWN ||
          err == RD_KAFKA_RESP_ERR__TRANSPORT) {
        char key_buf[256];
        LogRepeats repeats;
        if (RepeatedErrorLimiter().Admit(RepeatKey(key_buf, 4, "consumer", pe.message),
                                         &repeats)) {
          FLOE_LOG_WARN("kafka: {}{}", pe.message, repeats);
        }
      } else if (pending_error_.ok()) {
        pending_error_ = KafkaError("kafka consumer", err);
      }
      return;
    }
    errors->push_back(std::move(pe));
    return;
  }
  const std::string* topic = AssignedTopic(m->rkt);
  if (topic == nullptr) {  // not assigned any more: drop (it will be re-fetched)
    rd_kafka_message_destroy(m);
    return;
  }
  Record r;
  r.topic = topic;
  r.partition = m->partition;
  r.offset = m->offset;
  rd_kafka_timestamp_type_t tstype;
  r.timestamp_ms = rd_kafka_message_timestamp(m, &tstype);
  r.key = static_cast<const uint8_t*>(m->key);
  r.key_len = m->key ? m->key_len : 0;
  r.value = static_cast<const uint8_t*>(m->payload);
  r.value_len = m->payload ? m->len : 0;
  r.native = m;
  rd_kafka_headers_t* hdrs = nullptr;
  if (rd_kafka_message_headers(m, &hdrs) == RD_KAFKA_RESP_ERR_NO_ERROR) r.headers = hdrs;
  batch->records_.push_back(r);
}

const std::string* Consumer::AssignedTopic(const void* rkt) {
  for (const auto& [handle, name] : topic_by_handle_) {
    if (handle == rkt) return name;
  }
  auto it = topic_names_.find(
      std::string_view(rd_kafka_topic_name(static_cast<const rd_kafka_topic_t*>(rkt))));
  if (it == topic_names_.end()) return nullptr;
  topic_by_handle_.emplace_back(rkt, it->second.get());
  return it->second.get();
}

Result<std::map<TopicPartition, int64_t>> Consumer::Positions() {
  rd_kafka_topic_partition_list_t* list =
      rd_kafka_topic_partition_list_new(static_cast<int>(assigned_.size()));
  for (const auto& tp : assigned_)
    rd_kafka_topic_partition_list_add(list, tp.topic.c_str(), tp.partition);
  auto err = rd_kafka_position(Rk(rk_), list);
  if (err != RD_KAFKA_RESP_ERR_NO_ERROR) {
    rd_kafka_topic_partition_list_destroy(list);
    return KafkaError("positions", err);
  }
  std::map<TopicPartition, int64_t> out;
  for (int i = 0; i < list->cnt; ++i) {
    const auto& e = list->elems[i];
    out[TopicPartition{e.topic, e.partition}] = e.offset >= 0 ? e.offset : -1;
  }
  rd_kafka_topic_partition_list_destroy(list);
  return out;
}

Status Consumer::CommitForMonitoring(const std::map<TopicPartition, int64_t>& positions) {
  if (positions.empty()) return Status::OK();
  rd_kafka_topic_partition_list_t* list =
      rd_kafka_topic_partition_list_new(static_cast<int>(positions.size()));
  for (const auto& [tp, off] : positions) {
    rd_kafka_topic_partition_list_add(list, tp.topic.c_str(), tp.partition)->offset = off;
  }
  auto err = rd_kafka_commit(Rk(rk_), list, 1 /*async*/);
  rd_kafka_topic_partition_list_destroy(list);
  if (err != RD_KAFKA_RESP_ERR_NO_ERROR) return KafkaError("commit (monitoring)", err);
  return Status::OK();
}

Status Consumer::Ping(int timeout_ms) {
  const rd_kafka_metadata_t* md = nullptr;
  auto err = rd_kafka_metadata(Rk(rk_), 0, nullptr, &md, timeout_ms);
  if (err != RD_KAFKA_RESP_ERR_NO_ERROR) return KafkaError("kafka metadata", err);
  const int brokers = md->broker_cnt;
  rd_kafka_metadata_destroy(md);
  if (brokers == 0) return Retriable("kafka metadata: no broker in the answer");
  return Status::OK();
}

std::string Consumer::Property(const std::string& name) const {
  char value[512];
  size_t size = sizeof(value);
  if (rd_kafka_conf_get(rd_kafka_conf(Rk(rk_)), name.c_str(), value, &size) !=
      RD_KAFKA_CONF_OK) {
    return "";
  }
  return value;
}

}  // namespace floe::kafka
