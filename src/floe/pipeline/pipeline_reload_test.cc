// Live reconfiguration (reload.h): a new file's topics start, removed ones are committed
// and stop, changed ones start again from their table's positions, and a file that
// breaks a rule is refused while the running config stays. Through the AdminBridge (the
// path of SIGHUP and POST /floe/v1/reload) and Pipeline::Reconfigure.
#include <gtest/gtest.h>

#include <future>

#include "floe/pipeline/admin_bridge.h"
#include "floe/pipeline/pipeline_test_fixture.h"
#include "floe/pipeline/reload.h"

namespace floe::pipeline {
namespace {

constexpr char kBoth[] =
    "topics: [{name: orders}, {name: payments}]\n"
    "defaults: {commit.interval.ms: 1000}\n";

class PipelineReloadTest : public PipelineTest {
 protected:
  void SetUp() override { Remake(kOneTopic); }
  void Remake(const std::string& yaml) {
    Make(yaml);
    h_->kafka.AddTopic("payments", 1);
    h_->registry.Register("payments-value", testing::AvroSchemaText());
    h_->admin = &bridge_;
    h_->load_config = [this]() -> Result<config::Config> {
      if (!file_error_.ok()) return file_error_;
      return Harness::ParseConfig(file_);
    };
    ASSERT_TRUE(h_->Restart().ok());
  }
  std::vector<std::string> Running() {
    std::vector<std::string> out;
    for (const auto& t : h_->pipeline().Topics()) out.push_back(t.topic);
    return out;
  }
  // Reloads through the bridge, as POST /floe/v1/reload does, and steps until answered.
  Status Reload(const std::string& yaml) {
    file_ = yaml;
    auto answer = std::async(std::launch::async, [&] { return bridge_.Reload(60000); });
    EXPECT_TRUE(h_->RunUntil([&] {
      return answer.wait_for(std::chrono::milliseconds(1)) == std::future_status::ready;
    }));
    return answer.get();
  }

  AdminBridge bridge_;
  std::string file_;
  Status file_error_;
};

TEST_F(PipelineReloadTest, ANewEntryStartsItsTopicWithoutARestart) {
  Produce(0, 0, 5);
  Produce(0, 100, 7, "payments");
  ASSERT_TRUE(h_->Start().ok());
  ASSERT_TRUE(Committed(5));
  EXPECT_EQ(Running(), std::vector<std::string>{"orders"});
  ASSERT_TRUE(Reload(kBoth).ok());
  EXPECT_EQ(Running(), (std::vector<std::string>{"orders", "payments"}));
  ASSERT_TRUE(Committed(7, "payments"));
  EXPECT_EQ(Ids("payments"), Range(100, 7));
  Produce(0, 5, 3);
  ASSERT_TRUE(Committed(8));
  EXPECT_EQ(Ids(), Range(0, 8));
}

TEST_F(PipelineReloadTest, ARemovedEntryIsCommittedAndStops) {
  file_ = kBoth;
  h_->config = *Harness::ParseConfig(kBoth);
  ASSERT_TRUE(h_->Restart().ok());
  Produce(0, 0, 5);
  Produce(0, 100, 4, "payments");
  ASSERT_TRUE(h_->Start().ok());
  ASSERT_TRUE(Committed(4, "payments"));
  Produce(0, 104, 2, "payments");  // read but perhaps not committed yet
  ASSERT_TRUE(h_->RunFor(200).ok());
  ASSERT_TRUE(Reload(kOneTopic).ok());
  EXPECT_EQ(Running(), std::vector<std::string>{"orders"});
  EXPECT_EQ(Ids("payments"), Range(100, 6));  // everything read was committed
  Produce(0, 106, 3, "payments");
  Produce(0, 5, 1);
  ASSERT_TRUE(Committed(6));
  ASSERT_TRUE(h_->RunFor(3000).ok());
  EXPECT_EQ(Ids("payments"), Range(100, 6));  // no longer read
  EXPECT_EQ(Recorded("payments").at("payments").at(0), 6);
}

TEST_F(PipelineReloadTest, ChangedSettingsRestartTheTopicFromItsTablesPositions) {
  Produce(0, 0, 5);
  ASSERT_TRUE(h_->Start().ok());
  ASSERT_TRUE(Committed(5));
  Produce(0, 5, 5);
  ASSERT_TRUE(h_->RunFor(100).ok());
  ASSERT_TRUE(Reload("topics: [{name: orders, commit.interval.ms: 5000}]\n").ok());
  Produce(0, 10, 5);
  ASSERT_TRUE(h_->RunFor(6000).ok());
  EXPECT_EQ(Ids(), Range(0, 15));  // exactly once across the restart of the topic
}

// Issue 38 item 11: the counters behind the metrics' totals (committed, skipped,
// dead-lettered) went back to 0 when a reload restarted the topic.
TEST_F(PipelineReloadTest, ARestartedTopicKeepsItsRunsCounters) {
  Remake(
      "topics: [{name: orders, on.invalid.record: dlq}]\n"
      "defaults: {commit.interval.ms: 1000}\n");
  Produce(0, 0, 5);
  ProduceRaw(0, "not framed");
  ASSERT_TRUE(h_->Start().ok());
  ASSERT_TRUE(Committed(5));
  ASSERT_TRUE(
      h_->RunUntil([&] { return h_->Topic("orders").dead_lettered_records == 1; }));
  ASSERT_TRUE(Reload("topics: [{name: orders, on.invalid.record: dlq, "
                     "commit.interval.ms: 2000}]\n")
                  .ok());
  Produce(0, 5, 2);
  ProduceRaw(0, "not framed either");
  ASSERT_TRUE(h_->RunUntil([&] { return h_->Topic("orders").committed_records >= 7; }));
  ASSERT_TRUE(
      h_->RunUntil([&] { return h_->Topic("orders").dead_lettered_records == 2; }));
  EXPECT_EQ(Ids(), Range(0, 7));
  EXPECT_GE(h_->Topic("orders").read_records, 8);
}

TEST_F(PipelineReloadTest, AFileWithAnErrorIsRefusedAndTheRunningConfigStays) {
  Produce(0, 0, 3);
  ASSERT_TRUE(h_->Start().ok());
  ASSERT_TRUE(Committed(3));
  file_error_ = InvalidConfig("floe.yaml:4: topics[0].comit.interval.ms: unknown key");
  Status st = Reload(kBoth);
  EXPECT_EQ(KindOf(st), ErrorKind::kInvalidConfig);
  EXPECT_NE(st.message().find("comit.interval.ms"), std::string::npos);
  EXPECT_EQ(Running(), std::vector<std::string>{"orders"});
  // Two topics writing one table: refused before anything changes.
  file_error_ = Status::OK();
  st = Reload(
      "topics: [{name: orders}, {name: payments, table: orders}]\n"
      "defaults: {commit.interval.ms: 1000}\n");
  EXPECT_FALSE(st.ok());
  EXPECT_NE(st.message().find("payments"), std::string::npos) << st.message();
  EXPECT_EQ(Running(), std::vector<std::string>{"orders"});
  Produce(0, 3, 2);
  ASSERT_TRUE(Committed(5));
}

TEST_F(PipelineReloadTest, ASignalsRequestIsAppliedAtTheNextStep) {
  ASSERT_TRUE(h_->Start().ok());
  file_ = kBoth;
  bridge_.RequestReload();
  ASSERT_TRUE(h_->RunUntil([&] { return Running().size() == 2; }, 50));
}

TEST(ReloadPlanTest, RestartOnlySectionsKeepTheirRunningValues) {
  auto running = Harness::ParseConfig(kOneTopic);
  auto next = Harness::ParseConfig(
      "topics: [{name: payments}]\nlog.level: debug\nmemory.budget.bytes: 33554432\n"
      "rest: {listen: 127.0.0.1:9999}\n");
  ASSERT_TRUE(running.ok() && next.ok());
  next->warehouse = "/elsewhere";
  ReloadPlan plan = PlanReload(*running, *next, {});
  EXPECT_EQ(plan.restart_only_changes, (std::vector<std::string>{"warehouse", "rest"}));
  EXPECT_EQ(plan.config.warehouse, running->warehouse);
  EXPECT_EQ(plan.config.rest.listen, running->rest.listen);
  EXPECT_EQ(plan.config.log_level, "debug");
  EXPECT_EQ(plan.config.memory_budget_bytes, 33554432);
  ASSERT_EQ(plan.config.topics.size(), 1u);
  EXPECT_EQ(plan.config.topics[0].name, "payments");
}

}  // namespace
}  // namespace floe::pipeline
