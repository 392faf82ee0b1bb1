// The loop's reaction to the consumer group moving partitions (RecordSource::
// TakeRebalances, scripted): a revoked partition's topic drops what it read and did not
// commit, reads the partitions it keeps again, and a partition given back starts from the
// table's position; every record lands exactly once.
#include "floe/pipeline/pipeline_test_fixture.h"

namespace floe::pipeline {
namespace {

using PipelineRebalanceTest = PipelineTest;

TEST_F(PipelineRebalanceTest, ARevocationMidBatchDropsTheRangeAndLosesNothing) {
  Make(kOneTopic, "orders", /*partitions=*/2);
  Produce(0, 0, 10);
  Produce(1, 100, 10);
  ASSERT_TRUE(h_->Start().ok());
  ASSERT_TRUE(Committed(20));

  // Read, not committed yet: ten more records of each partition.
  Produce(0, 10, 10);
  Produce(1, 110, 10);
  ASSERT_TRUE(h_->RunUntil([&] { return h_->Topic("orders").buffered_records == 20; }));

  // The group takes partition 1 away in the middle of the batch.
  h_->kafka.Revoke({"orders", 1});
  ASSERT_TRUE(h_->RunUntil([&] { return h_->Topic("orders").committed_records >= 30; }));
  // Partition 0's records were read again and committed; partition 1's were not.
  EXPECT_EQ(Recorded().at("orders").at(0), 20);
  EXPECT_EQ(Recorded().at("orders").at(1), 10);
  EXPECT_EQ(h_->kafka.assignment().count({"orders", 1}), 0u);
  EXPECT_EQ(Ids(), [] {
    auto ids = Range(0, 20);
    auto more = Range(100, 10);
    ids.insert(ids.end(), more.begin(), more.end());
    return ids;
  }());
  // The dropped range's file was deleted: the two commits' files are all there is.
  EXPECT_EQ(h_->DataFileObjects().size(), 2u);

  // Given back, partition 1 is read from the table's position.
  Produce(1, 120, 5);
  h_->kafka.Grant({"orders", 1});
  ASSERT_TRUE(h_->RunUntil([&] { return h_->Topic("orders").committed_records >= 45; }));
  auto expected = Range(0, 20);
  auto p1 = Range(100, 25);
  expected.insert(expected.end(), p1.begin(), p1.end());
  EXPECT_EQ(Ids(), expected);
  EXPECT_EQ(Recorded().at("orders").at(1), 25);
}

}  // namespace
}  // namespace floe::pipeline
