// The pipeline's metrics: a status snapshot as Prometheus families, and a pipeline run
// whose commits, rows and freshness show in the registry's text
// (tests/integration/test_metrics.py scrapes a real Floe with a real Prometheus).
#include "floe/pipeline/status_metrics.h"

#include <gtest/gtest.h>
#include <prometheus/text_serializer.h>

#include <string>

#include "floe/pipeline/pipeline_test_fixture.h"

namespace floe::pipeline {
namespace {

bool Has(const std::string& text, const std::string& line) {
  return text.find(line) != std::string::npos;
}

TEST(StatusMetrics, ASnapshotBecomesCountersAndGauges) {
  TopicStatus t;
  t.topic = "orders";
  t.table = "kafka.orders";
  t.state = "suspended";
  t.read_records = 120;
  t.read_bytes = 4800;
  t.committed_records = 100;
  t.buffered_records = 20;
  t.newest_committed_timestamp_ms = 1'000'000;
  t.last_commit_ms = 1'002'000;
  PartitionStatus p0;
  p0.partition = 0;
  p0.committed = 60;
  p0.high_watermark = 70;
  p0.lag = 10;
  p0.consumed = 66;
  p0.read_lag = 4;
  PartitionStatus p1;  // nothing known yet: no lag series rather than a guess
  p1.partition = 1;
  t.partitions = {p0, p1};
  const std::string text = prometheus::TextSerializer().Serialize(
      StatusMetrics::FromSnapshot({t}, /*now_ms=*/1'003'500));
  const std::string labels = "{topic=\"orders\",table=\"kafka.orders\"}";
  EXPECT_TRUE(Has(text, "# TYPE floe_records_read_total counter")) << text;
  EXPECT_TRUE(Has(text, "floe_records_read_total" + labels + " 120")) << text;
  EXPECT_TRUE(Has(text, "floe_read_bytes_total" + labels + " 4800")) << text;
  EXPECT_TRUE(Has(text, "floe_records_committed_total" + labels + " 100")) << text;
  EXPECT_TRUE(Has(text, "floe_records_buffered" + labels + " 20")) << text;
  EXPECT_TRUE(Has(text, "floe_table_freshness_seconds" + labels + " 3.5")) << text;
  EXPECT_TRUE(Has(text, "floe_table_last_commit_age_seconds" + labels + " 1.5")) << text;
  EXPECT_TRUE(Has(text,
                  "floe_topic_state{topic=\"orders\",table=\"kafka.orders\",state="
                  "\"suspended\"} 1"))
      << text;
  EXPECT_TRUE(Has(text,
                  "floe_topic_state{topic=\"orders\",table=\"kafka.orders\",state="
                  "\"running\"} 0"))
      << text;
  EXPECT_TRUE(
      Has(text, "floe_partition_lag_records{topic=\"orders\",partition=\"0\"} 10"))
      << text;
  EXPECT_FALSE(Has(text, "floe_partition_lag_records{topic=\"orders\",partition=\"1\"}"))
      << text;
  EXPECT_TRUE(
      Has(text, "floe_partition_committed_offset{topic=\"orders\",partition=\"0\"} 60"))
      << text;
  EXPECT_TRUE(
      Has(text, "floe_partition_consumed_offset{topic=\"orders\",partition=\"0\"} 66"))
      << text;
  EXPECT_TRUE(
      Has(text, "floe_partition_read_lag_records{topic=\"orders\",partition=\"0\"} 4"))
      << text;
  EXPECT_FALSE(
      Has(text, "floe_partition_read_lag_records{topic=\"orders\",partition=\"1\"}"))
      << text;
}

TEST_F(PipelineTest, CommitsFilesAndRowsShowInTheMetrics) {
  Make(kOneTopic);
  metrics::Metrics m;
  h_->metrics = &m;
  ASSERT_TRUE(h_->Restart().ok());
  Produce(0, 0, 50);
  ASSERT_TRUE(Committed(50));
  const TopicStatus t = h_->Topic("orders");
  EXPECT_EQ(t.read_records, 50);
  EXPECT_GT(t.read_bytes, 50 * 5);
  EXPECT_GE(t.newest_committed_timestamp_ms, 0);
  const std::string text = m.Render();
  const std::string labels = "{table=\"kafka.orders\",topic=\"orders\"}";
  EXPECT_TRUE(Has(text, "floe_commits_total" + labels + " 1")) << text;
  EXPECT_TRUE(Has(text, "floe_data_files_total" + labels + " 1")) << text;
  EXPECT_TRUE(Has(text, "floe_commit_duration_seconds_count" + labels + " 1")) << text;
  EXPECT_TRUE(Has(text, "floe_data_file_size_bytes_count" + labels + " 1")) << text;
  EXPECT_TRUE(Has(text, "floe_commit_failures_total" + labels + " 0")) << text;
}

}  // namespace
}  // namespace floe::pipeline
