// The pipeline tests' fixture (pipeline_test.cc, pipeline_faults_test.cc): a Harness
// (pipeline_test_util.h) with one Avro topic, and helpers that read the table back.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "floe/pipeline/pipeline_test_util.h"

namespace floe::pipeline {

using testing::FramedAvro;
using testing::Harness;
using testing::Row;
using testing::ScriptedSource;

namespace u = iceberg::update;

inline constexpr char kOneTopic[] =
    "topics: [{name: orders}]\n"
    "defaults: {commit.interval.ms: 1000}\n";
inline constexpr char kSkipTopic[] =
    "topics: [{name: orders, on.invalid.record: skip}]\n"
    "defaults: {commit.interval.ms: 1000}\n";

class PipelineTest : public ::testing::Test {
 protected:
  void Make(const std::string& yaml, const std::string& topic = "orders",
            int partitions = 1) {
    h_ = std::make_unique<Harness>(yaml);
    h_->kafka.AddTopic(topic, partitions);
    schema_id_ = h_->registry.Register(topic + "-value", testing::AvroSchemaText());
  }
  // Produces ids [first, first + n) on the partition; returns the last offset.
  int64_t Produce(int32_t partition, int64_t first, int n,
                  const std::string& topic = "orders") {
    int64_t last = -1;
    for (int64_t id = first; id < first + n; ++id) {
      ScriptedSource::Message m;
      m.value = FramedAvro(schema_id_, id, "name-" + std::to_string(id));
      last = h_->kafka.Produce(topic, partition, std::move(m));
    }
    return last;
  }
  int64_t ProduceRaw(int32_t partition, std::string value,
                     const std::string& topic = "orders") {
    ScriptedSource::Message m;
    m.value = std::move(value);
    return h_->kafka.Produce(topic, partition, std::move(m));
  }
  // One topic: ids 0..9 committed, then 10..14 read and buffered (the batch a fence then
  // finds taken by another writer).
  void CommitTenThenBufferFive() {
    Make(kOneTopic);
    Produce(0, 0, 10);
    ASSERT_TRUE(h_->Start().ok());
    ASSERT_TRUE(Committed(10));
    Produce(0, 10, 5);
    ASSERT_TRUE(h_->RunUntil([&] { return h_->Topic("orders").buffered_records == 5; }));
  }
  bool Committed(int64_t n, const std::string& topic = "orders") {
    return h_->RunUntil([&] { return h_->Topic(topic).committed_records >= n; });
  }
  std::vector<Row> Rows(const std::string& table = "orders") {
    auto rows = h_->Rows(table);
    EXPECT_TRUE(rows.ok()) << rows.status().ToString();
    return rows.ok() ? *rows : std::vector<Row>{};
  }
  // The rows' ids, which must be exactly once each.
  std::vector<int64_t> Ids(const std::string& table = "orders") {
    std::vector<int64_t> ids;
    for (const auto& r : Rows(table)) ids.push_back(r.id);
    std::sort(ids.begin(), ids.end());
    return ids;
  }
  static std::vector<int64_t> Range(int64_t first, int64_t n) {
    std::vector<int64_t> out;
    for (int64_t i = first; i < first + n; ++i) out.push_back(i);
    return out;
  }
  table::Positions Recorded(const std::string& table = "orders") {
    auto p = h_->RecordedPositions(table);
    EXPECT_TRUE(p.has_value());
    return p.value_or(table::Positions{});
  }
  Status ForgeProperty(const std::string& key, const std::string& value) {
    catalog::TableCommit c{{{"kafka"}, "orders"}, {}, {u::SetProperties{{{key, value}}}}};
    return h_->catalog->CommitTable(c, catalog::Writer::kFloe).status();
  }

  std::unique_ptr<Harness> h_;
  int schema_id_ = 0;
};

}  // namespace floe::pipeline
