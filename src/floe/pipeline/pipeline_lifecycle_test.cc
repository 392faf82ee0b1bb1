// The topic lifecycle an operator sees and acts on (topic_lifecycle.h, admin_bridge.h):
// a suspension records where and why and is saved in the table; a resume re-reads from
// the table's positions; a resume with skip-incompatible skips the suspension's schema
// (or exactly its record) and goes on; a restart while suspended stays suspended. Every
// case goes through the AdminBridge the REST server uses and reads the table back.
#include <gtest/gtest.h>

#include <future>

#include "floe/common/json.h"
#include "floe/pipeline/admin_bridge.h"
#include "floe/pipeline/pipeline_test_fixture.h"
#include "floe/pipeline/topic_lifecycle.h"

namespace floe::pipeline {
namespace {

// `id` long → string: a schema the table cannot take.
constexpr char kStringIdSchema[] =
    R"({"type":"record","name":"order","fields":[{"name":"id","type":"string"},)"
    R"({"name":"name","type":"string"}]})";

class PipelineLifecycleTest : public PipelineTest {
 protected:
  void MakeWithAdmin(const std::string& yaml) {
    Make(yaml);
    h_->admin = &bridge_;
    ASSERT_TRUE(h_->Restart().ok());
  }
  // A record of the incompatible schema (registered on first use).
  int64_t ProduceIncompatible(int64_t id) {
    if (bad_id_ == 0) bad_id_ = h_->registry.Register("orders-value", kStringIdSchema);
    // The schema is refused before any payload is decoded.
    return ProduceRaw(0, FramedAvro(bad_id_, id, "bad"));
  }
  // The published status of a topic (steps until the bridge has one).
  TopicStatus Published(const std::string& topic = "orders") {
    bool published = false;
    h_->RunUntil([&] {
      bridge_.Snapshot(&published);
      return published;
    });
    EXPECT_TRUE(h_->RunFor(600).ok());  // a fresh snapshot
    for (auto& t : bridge_.Snapshot()) {
      if (t.topic == topic) return t;
    }
    ADD_FAILURE() << "no status for " << topic;
    return TopicStatus{};
  }
  // Queues a resume and steps until the pipeline answered it.
  Status Resume(bool skip, const std::string& topic = "orders") {
    auto answer = bridge_.QueueResume(topic, skip);
    EXPECT_TRUE(h_->RunUntil([&] {
      return answer.wait_for(std::chrono::seconds(0)) == std::future_status::ready;
    }));
    return answer.get();
  }
  std::optional<std::string> StateProperty() {
    auto md = h_->Metadata("orders");
    EXPECT_TRUE(md.ok());
    auto it = md->properties.find("floe.topic-state.orders");
    if (it == md->properties.end()) return std::nullopt;
    return it->second;
  }
  // Suspends `orders` at offset 3 with the incompatible schema: ids 0..2 good, 3 bad,
  // 4..5 good.
  void SuspendAtThree() {
    Produce(0, 0, 3);
    ProduceIncompatible(3);
    Produce(0, 4, 2);
    ASSERT_TRUE(h_->Start().ok());
    ASSERT_TRUE(h_->RunUntil([&] { return h_->Topic("orders").suspended; }));
  }

  AdminBridge bridge_;
  int bad_id_ = 0;
};

TEST_F(PipelineLifecycleTest, ASuspensionShowsReasonSchemaPartitionOffsetAndLag) {
  MakeWithAdmin(kOneTopic);
  SuspendAtThree();
  TopicStatus t = Published();
  EXPECT_EQ(t.state, "suspended");
  EXPECT_EQ(t.table, "kafka.orders");
  EXPECT_NE(t.reason.find("does not fit table"), std::string::npos) << t.reason;
  EXPECT_NE(t.reason.find("partition 0 offset 3"), std::string::npos) << t.reason;
  EXPECT_EQ(t.schema_id, bad_id_);
  EXPECT_EQ(t.partition, 0);
  EXPECT_EQ(t.offset, 3);
  EXPECT_GT(t.since_ms, 0);
  ASSERT_EQ(t.partitions.size(), 1u);
  EXPECT_EQ(t.partitions[0].committed, 3);
  EXPECT_EQ(t.partitions[0].high_watermark, 6);
  EXPECT_EQ(t.partitions[0].lag, 3);
  EXPECT_GT(t.last_commit_ms, 0);
  EXPECT_EQ(t.committed_records, 3);
  EXPECT_EQ(Ids(), Range(0, 3));
  // Saved in the table, with the same facts.
  auto prop = StateProperty();
  ASSERT_TRUE(prop.has_value());
  auto doc = TopicStateFromJson(*prop);
  ASSERT_TRUE(doc.ok()) << doc.status().ToString();
  ASSERT_TRUE(doc->suspension.has_value());
  EXPECT_EQ(doc->suspension->schema_id, bad_id_);
  EXPECT_EQ(doc->suspension->partition, 0);
  EXPECT_EQ(doc->suspension->offset, 3);
  EXPECT_EQ(doc->suspension->reason, t.reason);
  EXPECT_TRUE(doc->skip.empty());
}

TEST_F(PipelineLifecycleTest, AResumeRereadsAndSuspendsAgainWhileTheCauseRemains) {
  MakeWithAdmin(kOneTopic);
  SuspendAtThree();
  const std::string reason = h_->Topic("orders").reason;
  const int polls_before = h_->kafka.assign_calls();
  ASSERT_TRUE(Resume(false).ok());
  EXPECT_GT(h_->kafka.assign_calls(), polls_before);  // assigned again
  ASSERT_TRUE(h_->RunUntil([&] { return h_->Topic("orders").suspended; }));
  TopicStatus t = Published();
  EXPECT_EQ(t.state, "suspended");
  EXPECT_EQ(t.reason, reason);
  EXPECT_EQ(t.offset, 3);
  EXPECT_EQ(t.schema_id, bad_id_);
  EXPECT_EQ(Ids(), Range(0, 3));
  EXPECT_EQ(t.skipped_records, 0);
}

TEST_F(PipelineLifecycleTest, ResumingATopicThatIsNotSuspendedOrUnknownIsRefused) {
  MakeWithAdmin(kOneTopic);
  Produce(0, 0, 2);
  ASSERT_TRUE(h_->Start().ok());
  ASSERT_TRUE(Committed(2));
  Status running = Resume(false);
  EXPECT_EQ(KindOf(running), ErrorKind::kConflict) << running.ToString();
  EXPECT_NE(running.message().find("not suspended"), std::string::npos);
  Status unknown = Resume(false, "nope");
  EXPECT_EQ(KindOf(unknown), ErrorKind::kNotFound) << unknown.ToString();
}

TEST_F(PipelineLifecycleTest, ResumeWithSkipSkipsThatSchemaCountsAndLaterRecordsLand) {
  MakeWithAdmin(kOneTopic);
  Produce(0, 0, 3);
  ProduceIncompatible(3);
  Produce(0, 4, 2);
  ProduceIncompatible(6);  // later records of the same schema are skipped too
  Produce(0, 7, 1);
  ASSERT_TRUE(h_->Start().ok());
  ASSERT_TRUE(h_->RunUntil([&] { return h_->Topic("orders").suspended; }));
  ASSERT_TRUE(Resume(true).ok());
  EXPECT_EQ(h_->Topic("orders").state, "resuming");
  ASSERT_TRUE(h_->RunUntil([&] { return Ids().size() == 6; }));
  EXPECT_EQ(Ids(), (std::vector<int64_t>{0, 1, 2, 4, 5, 7}));
  ASSERT_TRUE(h_->RunUntil([&] { return h_->Topic("orders").state == "running"; }));
  TopicStatus t = Published();
  EXPECT_EQ(t.skipped_records, 2);
  EXPECT_EQ(t.skip_schema_ids, std::vector<int>{bad_id_});
  EXPECT_EQ(Recorded(), (table::Positions{{"orders", {{0, 8}}}}));
  // The skip set is saved (state running) and survives a restart.
  auto prop = StateProperty();
  ASSERT_TRUE(prop.has_value());
  auto doc = TopicStateFromJson(*prop);
  ASSERT_TRUE(doc.ok());
  EXPECT_FALSE(doc->suspension.has_value());
  EXPECT_EQ(doc->skip.schema_ids, std::set<int>{bad_id_});
  ASSERT_TRUE(h_->Finish().ok());
  ASSERT_TRUE(h_->Restart().ok());
  ProduceIncompatible(8);
  Produce(0, 9, 1);
  ASSERT_TRUE(h_->Start().ok());
  ASSERT_TRUE(h_->RunUntil([&] { return Ids().size() == 7; }));
  EXPECT_EQ(Ids(), (std::vector<int64_t>{0, 1, 2, 4, 5, 7, 9}));
  EXPECT_EQ(h_->Topic("orders").skipped_records, 1);  // this run
  EXPECT_FALSE(h_->Topic("orders").suspended);
}

TEST_F(PipelineLifecycleTest, ARestartWhileSuspendedStaysSuspendedWithTheSameFacts) {
  MakeWithAdmin(kOneTopic);
  SuspendAtThree();
  TopicStatus before = Published();
  ASSERT_TRUE(h_->Finish().ok());
  ASSERT_TRUE(h_->Restart().ok());
  ASSERT_TRUE(h_->Start().ok());
  ASSERT_TRUE(h_->RunFor(5000).ok());
  TopicStatus after = Published();
  EXPECT_EQ(after.state, "suspended");
  EXPECT_EQ(after.reason, before.reason);
  EXPECT_EQ(after.schema_id, bad_id_);
  EXPECT_EQ(after.partition, 0);
  EXPECT_EQ(after.offset, 3);
  EXPECT_EQ(after.since_ms, before.since_ms);
  ASSERT_EQ(after.partitions.size(), 1u);
  EXPECT_EQ(after.partitions[0].committed, 3);
  EXPECT_EQ(after.partitions[0].lag, 3);
  // Nothing was read: not even the good records after the bad one.
  EXPECT_EQ(Ids(), Range(0, 3));
  EXPECT_FALSE(h_->kafka.assignment().count({"orders", 0}));
  // And it resumes from there.
  ASSERT_TRUE(Resume(true).ok());
  ASSERT_TRUE(h_->RunUntil([&] { return Ids().size() == 5; }));
  EXPECT_EQ(Ids(), (std::vector<int64_t>{0, 1, 2, 4, 5}));
  EXPECT_EQ(h_->Topic("orders").skipped_records, 1);
}

TEST_F(PipelineLifecycleTest, SkipAfterAnInvalidRecordSkipsExactlyThatRecord) {
  MakeWithAdmin(kOneTopic);
  Produce(0, 0, 2);
  ProduceRaw(0, "not framed");
  ProduceRaw(0, "not framed either");
  Produce(0, 4, 2);
  ASSERT_TRUE(h_->Start().ok());
  ASSERT_TRUE(h_->RunUntil([&] { return h_->Topic("orders").suspended; }));
  TopicStatus t = Published();
  EXPECT_EQ(t.schema_id, -1);
  EXPECT_EQ(t.offset, 2);
  ASSERT_TRUE(Resume(true).ok());
  // The next invalid record is another cause: suspended again at offset 3.
  ASSERT_TRUE(h_->RunUntil([&] { return h_->Topic("orders").suspended; }));
  EXPECT_EQ(Published().offset, 3);
  EXPECT_EQ(h_->Topic("orders").skipped_records, 1);
  ASSERT_TRUE(Resume(true).ok());
  ASSERT_TRUE(h_->RunUntil([&] { return Ids().size() == 4; }));
  EXPECT_EQ(Ids(), (std::vector<int64_t>{0, 1, 4, 5}));
  EXPECT_EQ(Published().skip_records,
            (std::vector<std::pair<int32_t, int64_t>>{{0, 2}, {0, 3}}));
}

TEST_F(PipelineLifecycleTest, FixThenResumeLandsEveryRecord) {
  MakeWithAdmin(kOneTopic);
  Produce(0, 0, 2);
  const int late_id = schema_id_ + 1;  // the id the next registration gets
  ProduceRaw(0, FramedAvro(late_id, 2, "late"));
  Produce(0, 3, 2);
  ASSERT_TRUE(h_->Start().ok());
  // Unknown for the whole window: the record counts as invalid and suspends the topic.
  ASSERT_TRUE(h_->RunUntil([&] { return h_->Topic("orders").suspended; }, 20000));
  EXPECT_EQ(Ids(), Range(0, 2));
  // The operator fixes the cause (the schema gets registered), then resumes plainly.
  // (Another schema text: the registry gives the same text the same id.)
  ASSERT_EQ(h_->registry.Register("orders-value", testing::AvroSchemaTextRenamed()),
            late_id);
  ASSERT_TRUE(Resume(false).ok());
  ASSERT_TRUE(h_->RunUntil([&] { return Ids().size() == 5; }));
  EXPECT_EQ(Ids(), Range(0, 5));
  EXPECT_EQ(h_->Topic("orders").skipped_records, 0);
  ASSERT_TRUE(h_->RunUntil([&] { return h_->Topic("orders").state == "running"; }));
  EXPECT_FALSE(StateProperty().has_value());  // cleared
}

TEST_F(PipelineLifecycleTest, SkipIsRefusedWhenNoRecordCausedTheSuspension) {
  MakeWithAdmin(kOneTopic);
  Produce(0, 0, 3);
  ASSERT_TRUE(h_->Start().ok());
  ASSERT_TRUE(Committed(3));
  ASSERT_TRUE(h_->Finish().ok());
  h_->kafka.set_cluster_id("cluster-B");
  ASSERT_TRUE(h_->Restart().ok());
  ASSERT_TRUE(h_->Start().ok());
  ASSERT_TRUE(h_->Topic("orders").suspended);
  Status st = Resume(true);
  EXPECT_EQ(KindOf(st), ErrorKind::kInvalidInput) << st.ToString();
  EXPECT_TRUE(h_->Topic("orders").suspended);
  EXPECT_FALSE(StateProperty().has_value());  // not a record's fault: memory only
}

TEST_F(PipelineLifecycleTest, AnUnreadableStatePropertySuspendsUntilAResumeRewritesIt) {
  MakeWithAdmin(kOneTopic);
  Produce(0, 0, 2);
  ASSERT_TRUE(h_->Start().ok());
  ASSERT_TRUE(Committed(2));
  ASSERT_TRUE(h_->Finish().ok());
  ASSERT_TRUE(ForgeProperty("floe.topic-state.orders", "{not json").ok());
  Produce(0, 2, 2);
  ASSERT_TRUE(h_->Restart().ok());
  ASSERT_TRUE(h_->Start().ok());
  ASSERT_TRUE(h_->RunFor(3000).ok());
  TopicStatus t = Published();
  EXPECT_EQ(t.state, "suspended");
  EXPECT_NE(t.reason.find("floe.topic-state.orders cannot be read"), std::string::npos)
      << t.reason;
  EXPECT_EQ(Ids(), Range(0, 2));
  ASSERT_TRUE(Resume(false).ok());
  EXPECT_FALSE(StateProperty().has_value());
  ASSERT_TRUE(h_->RunUntil([&] { return Ids().size() == 4; }));
  EXPECT_EQ(Ids(), Range(0, 4));
}

TEST(AdminBridgeTest, AnUnansweredResumeTimesOutAndCloseAnswersTheRest) {
  AdminBridge bridge;
  bool published = true;
  EXPECT_TRUE(bridge.Snapshot(&published).empty());
  EXPECT_FALSE(published);
  Status st = bridge.Resume("orders", false, /*timeout_ms=*/20);
  EXPECT_EQ(KindOf(st), ErrorKind::kRetriable) << st.ToString();
  EXPECT_NE(st.message().find("stays queued"), std::string::npos);
  auto queued = bridge.QueueResume("orders", true);
  // The timed-out command is still queued: the pipeline takes both, in order.
  auto commands = bridge.TakeCommands();
  ASSERT_EQ(commands.size(), 2u);
  EXPECT_FALSE(commands[0].skip_incompatible);
  EXPECT_TRUE(commands[1].skip_incompatible);
  EXPECT_TRUE(bridge.TakeCommands().empty());
  commands[1].done->set_value(Conflict("not suspended"));
  EXPECT_EQ(KindOf(queued.get()), ErrorKind::kConflict);
  // A resume waiting while the pipeline stops is answered by Close, and so is any later.
  auto waiting = bridge.QueueResume("orders", false);
  bridge.Close(Retriable("floe is stopping"));
  EXPECT_EQ(waiting.get().message(), "floe is stopping");
  EXPECT_EQ(bridge.Resume("orders", false).message(), "floe is stopping");
  bridge.Publish({TopicStatus{}});
  EXPECT_EQ(bridge.Snapshot(&published).size(), 1u);
  EXPECT_TRUE(published);
}

TEST(TopicStateJsonTest, RoundTrips) {
  PersistedTopicState s;
  s.suspension = Suspension{"why", 7, 2, 41, 1234, true};
  s.skip.schema_ids = {3, 7};
  s.skip.records = {{1, 5}};
  auto back = TopicStateFromJson(TopicStateToJson(s));
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  ASSERT_TRUE(back->suspension.has_value());
  EXPECT_EQ(back->suspension->reason, "why");
  EXPECT_EQ(back->suspension->schema_id, 7);
  EXPECT_EQ(back->suspension->partition, 2);
  EXPECT_EQ(back->suspension->offset, 41);
  EXPECT_EQ(back->suspension->time_ms, 1234);
  EXPECT_EQ(back->skip.schema_ids, (std::set<int>{3, 7}));
  EXPECT_EQ(back->skip.records, (std::set<std::pair<int32_t, int64_t>>{{1, 5}}));
  EXPECT_FALSE(TopicStateFromJson(R"({"state":"bogus"})").ok());
  EXPECT_FALSE(TopicStateFromJson("not json").ok());
}

}  // namespace
}  // namespace floe::pipeline
