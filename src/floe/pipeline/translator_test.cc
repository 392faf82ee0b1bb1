// Translators of one table over the scripted Kafka: their ranges commit together in one
// snapshot, and a partition revoked in the middle of a batch loses and duplicates
// nothing (the fence refuses the commit that comes too late).
#include "floe/pipeline/translator.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "floe/pipeline/dead_letters.h"
#include "floe/pipeline/pipeline_test_util.h"
#include "floe/pipeline/range_commit.h"
#include "floe/pipeline/schema_resolver.h"
#include "floe/pipeline/table_faults.h"
#include "floe/pipeline/table_setup.h"
#include "floe/pipeline/topic_state.h"
#include "floe/table/committer.h"
#include "floe/table/delta_mirror.h"

namespace floe::pipeline {
namespace {

using testing::FramedAvro;
using testing::Harness;
using testing::ScriptedSource;

// One reader's view of the table: its state, over the partitions it holds, and its
// translator (nothing shared with another reader's).
struct Reader {
  TopicState ts;
  std::unique_ptr<Translator> translator;
};

class TranslatorTest : public ::testing::Test {
 protected:
  TranslatorTest()
      : h_("topics: [{name: orders}]\n"),
        committer_(h_.catalog.get(), &h_.io, [this] { return h_.wall_ms; }),
        delta_(h_.catalog.get(), &h_.io, [this] { return h_.wall_ms; }),
        tables_(&committer_, &h_.io),
        dead_letters_(h_.catalog.get(), &committer_, &h_.io, &delta_),
        resolver_(&h_.registry, &tables_, [this] { return h_.now_ms; }) {
    clock_.monotonic_ms = [this] { return h_.now_ms; };
    clock_.wall_ms = [this] { return h_.wall_ms; };
    h_.kafka.AddTopic("orders", 2);
    schema_id_ = h_.registry.Register("orders-value", testing::AvroSchemaText());
  }

  // A reader of `partitions`, starting from the table's positions (the beginning of the
  // log where the table has none), as a reader that was just given them would.
  std::unique_ptr<Reader> MakeReader(const std::set<int32_t>& partitions) {
    auto reader = std::make_unique<Reader>();
    TopicState& ts = reader->ts;
    auto settings = config::ResolveTopic(h_.config, "orders");
    EXPECT_TRUE(settings.has_value());
    ts.settings = *settings;
    ts.ident = catalog::TableIdent{{"kafka"}, "orders"};
    ts.table_name = "kafka.orders";
    LoadRanges(ts, partitions);
    reader->translator =
        std::make_unique<Translator>(&ts, &resolver_, &dead_letters_, &clock_);
    return reader;
  }

  void LoadRanges(TopicState& ts, const std::set<int32_t>& partitions) {
    auto loaded = committer_.Load(ts.ident);
    ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
    ts.table = std::move(*loaded);
    ts.partitions.clear();
    for (int32_t p : partitions) {
      PartitionState ps;
      if (ts.table.positions) {
        auto t = ts.table.positions->find("orders");
        if (t != ts.table.positions->end() && t->second.count(p)) {
          ps.start = t->second.at(p);
          ps.start_recorded = true;
        }
      }
      ts.partitions[p] = ps;
    }
  }

  void Produce(int32_t partition, int64_t first, int n) {
    for (int64_t id = first; id < first + n; ++id) {
      ScriptedSource::Message m;
      m.value = FramedAvro(schema_id_, id, "name-" + std::to_string(id));
      h_.kafka.Produce("orders", partition, std::move(m));
    }
  }

  // Polls what the readers' partitions hold from their read positions and hands each
  // record to the reader of its partition; every record must be taken.
  void Feed(const std::vector<Reader*>& readers) {
    std::map<kafka::TopicPartition, int64_t> assignment;
    for (Reader* r : readers) {
      for (const auto& [p, ps] : r->ts.partitions) {
        assignment[{"orders", p}] = ps.ReadPosition();
      }
    }
    ASSERT_TRUE(h_.kafka.Assign(assignment).ok());
    for (int i = 0; i < 10; ++i) {
      kafka::Batch batch;
      std::vector<kafka::PartitionError> errors;
      ASSERT_TRUE(h_.kafka.Poll(0, 1000, &batch, &errors).ok());
      ASSERT_TRUE(errors.empty());
      if (batch.empty()) return;
      for (const auto& rec : batch.records()) {
        for (Reader* r : readers) {
          if (!r->ts.partitions.count(rec.partition)) continue;
          Verdict v = r->translator->Add(rec);
          ASSERT_TRUE(v.taken()) << v.reason << v.fault.ToString();
        }
      }
    }
  }

  Result<std::vector<TranslatedRange>> TakeAll(const std::vector<Reader*>& readers) {
    std::vector<TranslatedRange> ranges;
    for (Reader* r : readers) {
      FLOE_ASSIGN_OR_RAISE(auto range, r->translator->Take());
      ranges.push_back(std::move(range));
    }
    return ranges;
  }

  Status Commit(const std::vector<TranslatedRange>& ranges) {
    table::CommitRequest req =
        RequestFor(catalog::TableIdent{{"kafka"}, "orders"}, ranges);
    req.cluster_id = "cluster-A";
    return committer_.Commit(req);
  }

  std::vector<int64_t> Ids() {
    auto rows = h_.Rows("orders");
    EXPECT_TRUE(rows.ok()) << rows.status().ToString();
    std::vector<int64_t> ids;
    if (rows.ok()) {
      for (const auto& r : *rows) ids.push_back(r.id);
    }
    std::sort(ids.begin(), ids.end());
    return ids;
  }

  static std::vector<int64_t> Expected(std::vector<std::pair<int64_t, int64_t>> spans) {
    std::vector<int64_t> out;
    for (auto [first, n] : spans) {
      for (int64_t i = first; i < first + n; ++i) out.push_back(i);
    }
    std::sort(out.begin(), out.end());
    return out;
  }

  Harness h_;
  Clock clock_;
  table::Committer committer_;
  table::DeltaMirror delta_;
  TableSetup tables_;
  DeadLetters dead_letters_;
  SchemaResolver resolver_;
  int schema_id_ = 0;
};

TEST_F(TranslatorTest, TwoTranslatorsOfOneTableCommitInOneSnapshot) {
  Produce(0, 0, 20);
  Produce(1, 100, 30);
  auto a = MakeReader({0});
  auto b = MakeReader({1});
  Feed({a.get(), b.get()});
  auto ranges = TakeAll({a.get(), b.get()});
  ASSERT_TRUE(ranges.ok()) << ranges.status().ToString();
  ASSERT_EQ((*ranges)[0].partitions.size(), 1u);
  EXPECT_EQ((*ranges)[0].partitions.at(0).end, 20);
  EXPECT_EQ((*ranges)[1].partitions.at(1).end, 30);
  EXPECT_EQ((*ranges)[0].records + (*ranges)[1].records, 50);
  ASSERT_TRUE(Commit(*ranges).ok());

  auto md = h_.Metadata("orders");
  ASSERT_TRUE(md.ok());
  int data_snapshots = 0;
  for (const auto& s : md->snapshots) data_snapshots += s.summary.count("added-records");
  EXPECT_EQ(data_snapshots, 1);  // both ranges in one snapshot
  EXPECT_EQ(Ids(), Expected({{0, 20}, {100, 30}}));
  auto positions = h_.RecordedPositions("orders");
  ASSERT_TRUE(positions.has_value());
  EXPECT_EQ(positions->at("orders").at(0), 20);
  EXPECT_EQ(positions->at("orders").at(1), 30);
}

TEST_F(TranslatorTest, ARevocationMidBatchDropsTheRangeAndALateCommitLosesTheFence) {
  Produce(0, 0, 10);
  Produce(1, 100, 10);
  auto a = MakeReader({0, 1});
  Feed({a.get()});
  auto first = TakeAll({a.get()});
  ASSERT_TRUE(first.ok());
  ASSERT_TRUE(Commit(*first).ok());
  a->translator->Committed(first->front());

  // A reads on in both partitions; its range is taken (files written) but not yet
  // committed when partition 1 is revoked and given to B.
  Produce(0, 10, 10);
  Produce(1, 110, 10);
  Feed({a.get()});
  auto late = TakeAll({a.get()});
  ASSERT_TRUE(late.ok());
  EXPECT_EQ(late->front().records, 20);

  // B starts partition 1 from the table's position, reads and commits first.
  auto b = MakeReader({1});
  EXPECT_EQ(b->ts.partitions.at(1).start, 10);
  Feed({b.get()});
  auto b_range = TakeAll({b.get()});
  ASSERT_TRUE(b_range.ok());
  ASSERT_TRUE(Commit(*b_range).ok());

  // A's late commit names partition 1 from position 10, which B moved: the fence refuses
  // it and deletes its files.
  Status refused = Commit(*late);
  EXPECT_EQ(KindOf(refused), ErrorKind::kConflict) << refused.ToString();

  // A drops what it read (the revocation) and reads what it keeps from the table's
  // positions.
  DiscardUncommitted(a->ts, &h_.io);
  LoadRanges(a->ts, {0});
  EXPECT_EQ(a->ts.partitions.at(0).start, 10);
  Feed({a.get()});
  auto again = TakeAll({a.get()});
  ASSERT_TRUE(again.ok());
  ASSERT_TRUE(Commit(*again).ok());

  EXPECT_EQ(Ids(), Expected({{0, 20}, {100, 20}}));  // every record exactly once
  auto positions = h_.RecordedPositions("orders");
  ASSERT_TRUE(positions.has_value());
  EXPECT_EQ(positions->at("orders").at(0), 20);
  EXPECT_EQ(positions->at("orders").at(1), 20);
  // Nothing is left behind but the three committed files (the refused commit's file
  // was deleted).
  EXPECT_EQ(h_.DataFileObjects().size(), 3u);
}

TEST_F(TranslatorTest, AnInvalidRecordUnderSuspendIsAVerdictNotACommit) {
  Produce(0, 0, 3);
  ScriptedSource::Message bad;
  bad.value = std::string("\x00\x00\x00\x00", 4);  // framed, truncated
  h_.kafka.Produce("orders", 0, std::move(bad));
  auto a = MakeReader({0});
  ASSERT_TRUE(h_.kafka.Assign({{{"orders", 0}, 0}}).ok());
  kafka::Batch batch;
  std::vector<kafka::PartitionError> errors;
  ASSERT_TRUE(h_.kafka.Poll(0, 1000, &batch, &errors).ok());
  ASSERT_EQ(batch.records().size(), 4u);
  for (size_t i = 0; i < 3; ++i)
    EXPECT_TRUE(a->translator->Add(batch.records()[i]).taken());
  Verdict v = a->translator->Add(batch.records()[3]);
  EXPECT_EQ(v.kind, Verdict::Kind::kSuspend);
  EXPECT_NE(v.reason.find("offset 3"), std::string::npos) << v.reason;
  // Nothing was committed by the record path; the range ends before the record.
  auto md = h_.Metadata("orders");
  ASSERT_TRUE(md.ok());
  EXPECT_EQ(md->CurrentSnapshot(), nullptr);
  auto range = a->translator->Take();
  ASSERT_TRUE(range.ok());
  EXPECT_EQ(range->partitions.at(0).end, 3);
  EXPECT_EQ(range->records, 3);
}

}  // namespace
}  // namespace floe::pipeline
