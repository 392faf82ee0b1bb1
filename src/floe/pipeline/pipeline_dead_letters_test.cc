// on.invalid.record: dlq (dead_letters.h): invalid records land in <table>__dlq with the
// error, good ones in the table, each exactly once, through a main commit that fails
// after the dead letters' commit, a fence and a restart.
#include <gtest/gtest.h>

#include <set>

#include "floe/pipeline/dead_letters.h"
#include "floe/pipeline/pipeline_test_fixture.h"

namespace floe::pipeline {
namespace {

constexpr char kDlqTopic[] =
    "topics: [{name: orders, on.invalid.record: dlq}]\n"
    "defaults: {commit.interval.ms: 1000}\n";

class PipelineDeadLettersTest : public PipelineTest {
 protected:
  // ids 0..n-1 on partition 0 with a bad record after every `every`-th: returns the bad
  // records' offsets.
  std::vector<int64_t> ProduceMixed(int n, int every) {
    std::vector<int64_t> bad;
    for (int i = 0; i < n; ++i) {
      Produce(0, i, 1);
      if (i % every == every - 1)
        bad.push_back(ProduceRaw(0, "not framed " + std::to_string(i)));
    }
    return bad;
  }
  std::vector<int64_t> DeadOffsets() {
    std::vector<int64_t> out;
    for (const auto& r : Rows("orders__dlq")) out.push_back(r.offset);
    std::sort(out.begin(), out.end());
    return out;
  }
};

TEST_F(PipelineDeadLettersTest, BadRecordsGoToTheDeadLetterTableGoodOnesToTheTable) {
  Make(kDlqTopic);
  const auto bad = ProduceMixed(40, 10);
  ASSERT_TRUE(h_->Start().ok());
  ASSERT_TRUE(Committed(40));
  ASSERT_TRUE(
      h_->RunUntil([&] { return h_->Topic("orders").dead_lettered_records == 4; }));
  EXPECT_EQ(Ids(), Range(0, 40));
  EXPECT_EQ(DeadOffsets(), bad);
  EXPECT_EQ(h_->Topic("orders").skipped_records, 0);
  EXPECT_FALSE(h_->Topic("orders").suspended);
  // The dead-letter table records the batch's end as its positions too.
  EXPECT_EQ(Recorded("orders__dlq").at("orders").at(0), Recorded().at("orders").at(0));
  auto md = h_->Metadata("orders__dlq");
  ASSERT_TRUE(md.ok());
  std::vector<std::string> columns;
  for (const auto& f : md->CurrentSchema()->fields) columns.push_back(f.name);
  EXPECT_EQ(columns, (std::vector<std::string>{"value", "error", "_kafka"}));
}

TEST_F(PipelineDeadLettersTest,
       AMainCommitFailingAfterTheDeadLettersCommitLosesAndDoublesNothing) {
  Make(kDlqTopic);
  const auto bad = ProduceMixed(30, 5);
  h_->store.only_table = "orders";
  h_->store.FailSwaps(1, Retriable("catalog down"), /*applied=*/false);
  ASSERT_TRUE(h_->Start().ok());
  ASSERT_TRUE(Committed(30));
  ASSERT_TRUE(h_->RunFor(2000).ok());
  EXPECT_EQ(h_->store.swap_failures_left(), 0);
  EXPECT_EQ(Ids(), Range(0, 30));
  EXPECT_EQ(DeadOffsets(), bad);
  // A restart reads nothing again, adds nothing again.
  ASSERT_TRUE(h_->Restart().ok());
  ASSERT_TRUE(h_->Start().ok());
  Produce(0, 30, 2);
  ProduceRaw(0, "late bad");
  ASSERT_TRUE(h_->RunUntil([&] { return Ids().size() == 32; }));
  ASSERT_TRUE(h_->RunFor(2000).ok());
  EXPECT_EQ(Ids(), Range(0, 32));
  auto dead = DeadOffsets();
  EXPECT_EQ(dead.size(), bad.size() + 1);
  EXPECT_EQ(std::set<int64_t>(dead.begin(), dead.end()).size(), dead.size());
}

TEST_F(PipelineDeadLettersTest, ATopicOfOnlyBadRecordsHasDeadLettersAndNoTableYet) {
  Make(kDlqTopic);
  for (int i = 0; i < 5; ++i) ProduceRaw(0, "junk");
  ASSERT_TRUE(h_->Start().ok());
  ASSERT_TRUE(
      h_->RunUntil([&] { return h_->Topic("orders").dead_lettered_records == 5; }));
  EXPECT_FALSE(h_->Metadata("orders").ok());  // no schema yet: no table
  ASSERT_TRUE(h_->Restart().ok());
  ASSERT_TRUE(h_->Start().ok());
  ASSERT_TRUE(h_->RunFor(3000).ok());
  EXPECT_EQ(DeadOffsets(), (std::vector<int64_t>{0, 1, 2, 3, 4}));  // not again
  EXPECT_EQ(h_->Topic("orders").dead_lettered_records, 0);
  Produce(0, 0, 3);
  ASSERT_TRUE(Committed(3));
  EXPECT_EQ(Ids(), Range(0, 3));
}

TEST_F(PipelineDeadLettersTest, ARecordJudgedOtherwiseOnTheRereadStaysInOneTable) {
  Make(kDlqTopic);
  Produce(0, 0, 5);
  const int next_id = schema_id_ + 1;  // the registry's next id: unknown for now
  ProduceRaw(0, FramedAvro(next_id, 5, "late schema"));
  Produce(0, 6, 4);
  ASSERT_TRUE(h_->Start().ok());
  // The unknown id pauses the topic after committing 0..4; 30 s later it is a dead
  // letter, committed before the batch 6..9, whose commit fails.
  ASSERT_TRUE(Committed(5));
  h_->store.only_table = "orders";
  h_->store.FailSwaps(1, Retriable("catalog down"), /*applied=*/false);
  ASSERT_TRUE(h_->RunUntil([&] { return h_->store.swap_failures_left() == 0; }, 20000));
  EXPECT_EQ(DeadOffsets(), (std::vector<int64_t>{5}));
  // Before the batch is read again the id becomes known: offset 5 now decodes, but it is
  // a dead letter already and must not land in the table too.
  ASSERT_EQ(h_->registry.Register("orders-value", testing::AvroSchemaTextRenamed()),
            next_id);
  ASSERT_TRUE(h_->RunUntil([&] { return Ids().size() >= 9; }, 5000));
  ASSERT_TRUE(h_->RunFor(3000).ok());
  std::vector<int64_t> want = Range(0, 5);
  for (int64_t id : Range(6, 4)) want.push_back(id);
  EXPECT_EQ(Ids(), want);
  EXPECT_EQ(DeadOffsets(), (std::vector<int64_t>{5}));
}

TEST_F(PipelineDeadLettersTest, ADiscoveryOfMorePartitionsKeepsBufferedDeadLetters) {
  Make(
      "topics: [{name: orders, on.invalid.record: dlq}]\n"
      "defaults: {commit.interval.ms: 60000}\n");
  Produce(0, 0, 2);
  ProduceRaw(0, "junk");
  ASSERT_TRUE(h_->Start().ok());
  ASSERT_TRUE(h_->RunFor(1000).ok());  // read and buffered, not committed
  h_->kafka.AddTopic("orders", 2);     // a second partition: discovered at 30 s
  ASSERT_TRUE(h_->RunFor(65000).ok());
  EXPECT_EQ(Ids(), Range(0, 2));
  EXPECT_EQ(DeadOffsets(), (std::vector<int64_t>{2}));
}

}  // namespace
}  // namespace floe::pipeline
