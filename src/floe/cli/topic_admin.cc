#include "floe/cli/topic_admin.h"

#include "floe/pipeline/admin_bridge.h"

namespace floe::cli {
namespace {

server::TopicInfo InfoOf(const pipeline::TopicStatus& s) {
  server::TopicInfo t;
  t.topic = s.topic;
  t.table = s.table;
  t.state = s.state;
  t.reason = s.reason;
  t.schema_id = s.schema_id;
  t.partition = s.partition;
  t.offset = s.offset;
  t.since_ms = s.since_ms;
  for (const auto& p : s.partitions) {
    t.partitions.push_back(
        {p.partition, p.committed, p.high_watermark, p.lag, p.consumed, p.read_lag});
  }
  t.last_commit_ms = s.last_commit_ms;
  t.compatibility = s.compatibility;
  t.skip_schema_ids = s.skip_schema_ids;
  t.skip_records = s.skip_records;
  t.committed_records = s.committed_records;
  t.buffered_records = s.buffered_records;
  t.skipped_records = s.skipped_records;
  t.dead_lettered_records = s.dead_lettered_records;
  t.tombstones = s.tombstones;
  return t;
}

class BridgeAdmin : public server::TopicAdmin {
 public:
  explicit BridgeAdmin(pipeline::AdminBridge* bridge) : bridge_(bridge) {}

  Result<std::vector<server::TopicInfo>> List() override {
    bool published = false;
    auto topics = bridge_->Snapshot(&published);
    if (!published) {
      return Retriable(
          "the pipeline has not reported its topics yet (it is starting: connecting to "
          "Kafka and loading the tables); try again in a few seconds");
    }
    std::vector<server::TopicInfo> out;
    out.reserve(topics.size());
    for (const auto& s : topics) out.push_back(InfoOf(s));
    return out;
  }

  Status Resume(const std::string& topic, bool skip_incompatible) override {
    return bridge_->Resume(topic, skip_incompatible);
  }

  Status Reload() override { return bridge_->Reload(); }

 private:
  pipeline::AdminBridge* bridge_;
};

}  // namespace

std::unique_ptr<server::TopicAdmin> MakeTopicAdmin(pipeline::AdminBridge* bridge) {
  return std::make_unique<BridgeAdmin>(bridge);
}

}  // namespace floe::cli
