// One table's faults never stop the daemon (table_faults.h): storage and catalog faults
// pause the topic and it reads again from its table's positions; faults an operator must
// fix suspend it; the other topics go on. Also the record-level cases that are not bad
// records: tombstones, schemas the table cannot take yet, ids the registry does not know
// yet. Every case reads the table back.
#include <gtest/gtest.h>

#include <algorithm>

#include "floe/decode/avro_test_encoder.h"
#include "floe/delta/log.h"
#include "floe/pipeline/pipeline_test_fixture.h"
#include "floe/schema/table_schema.h"
#include "floe/table/delta_mirror.h"

namespace floe::pipeline {
namespace {

constexpr char kTwoTopics[] =
    "topics: [{name: orders}, {name: other}]\n"
    "defaults: {commit.interval.ms: 1000}\n";

class PipelineFaultsTest : public PipelineTest {
 protected:
  // A second topic `other` with its own schema; produces ids [first, first + n).
  void AddOther(int64_t first, int n) {
    if (other_id_ == 0) {
      h_->kafka.AddTopic("other", 1);
      other_id_ = h_->registry.Register("other-value", testing::AvroSchemaText());
    }
    for (int64_t id = first; id < first + n; ++id) {
      ScriptedSource::Message m;
      m.value = FramedAvro(other_id_, id, "o");
      h_->kafka.Produce("other", 0, std::move(m));
    }
  }
  // Metadata JSON files of a table (each commit writes one).
  size_t MetadataFiles(const std::string& table = "orders") {
    auto md = h_->Metadata(table);
    EXPECT_TRUE(md.ok());
    size_t n = 0;
    for (const auto& f : *h_->memory_io->List(md->location + "/metadata/")) {
      n += f.uri.find(".metadata.json") != std::string::npos;
    }
    return n;
  }
  size_t MetadataObjects(const std::string& table = "orders") {
    auto md = h_->Metadata(table);
    EXPECT_TRUE(md.ok());
    return h_->memory_io->List(md->location + "/metadata/")->size();
  }

  int other_id_ = 0;
};

TEST_F(PipelineFaultsTest, AFullDiskPausesTheTopicRemovesThePartialFileAndResumes) {
  Make(kOneTopic);
  Produce(0, 0, 5);
  ASSERT_TRUE(h_->Start().ok());
  ASSERT_TRUE(Committed(5));
  // Every write of the next data file fails, as on a full disk, twice.
  h_->io.FailNext("StreamWrite", "/data/", 2,
                  Retriable("write: No space left on device"));
  Produce(0, 5, 5);
  ASSERT_TRUE(h_->RunUntil([&] { return h_->Topic("orders").paused; }));
  EXPECT_NE(h_->Topic("orders").reason.find("No space left on device"),
            std::string::npos);
  EXPECT_NE(h_->Topic("orders").reason.find("/data/"), std::string::npos)
      << "the message names the file: " << h_->Topic("orders").reason;
  // Only the committed file is left: the partial one was deleted.
  EXPECT_EQ(h_->DataFileObjects().size(), 1u);
  ASSERT_TRUE(Committed(10));
  EXPECT_EQ(Ids(), Range(0, 10));
  EXPECT_EQ(h_->DataFileObjects().size(), 2u);
  EXPECT_EQ(Recorded(), (table::Positions{{"orders", {{0, 10}}}}));
}

TEST_F(PipelineFaultsTest, ACatalogThatRefusesWritesPausesWithoutLeavingFilesBehind) {
  Make(kOneTopic);
  Produce(0, 0, 5);
  ASSERT_TRUE(h_->Start().ok());
  ASSERT_TRUE(Committed(5));
  const size_t files_before = MetadataObjects();
  h_->store.FailSwaps(6, Retriable("catalog /x/catalog.db is read-only"),
                      /*applied=*/false);
  Produce(0, 5, 5);
  ASSERT_TRUE(h_->RunUntil([&] { return h_->Topic("orders").paused; }));
  EXPECT_NE(h_->Topic("orders").reason.find("read-only"), std::string::npos);
  // Every failed attempt took its metadata file, manifest list, manifest and data file
  // back with it.
  ASSERT_TRUE(h_->RunUntil([&] { return h_->store.swap_failures_left() == 0; }, 20000));
  EXPECT_EQ(MetadataObjects(), files_before);
  EXPECT_EQ(h_->DataFileObjects().size(), 1u);
  ASSERT_TRUE(Committed(10));
  EXPECT_EQ(Ids(), Range(0, 10));
  EXPECT_EQ(MetadataFiles(), 3u);  // create, first commit, the commit that went through
}

TEST_F(PipelineFaultsTest, StoppingWhileTheCatalogRefusesWritesIsCleanAndLosesNothing) {
  Make(kOneTopic);
  Produce(0, 0, 5);
  ASSERT_TRUE(h_->Start().ok());
  ASSERT_TRUE(Committed(5));
  h_->store.FailSwaps(1000, Retriable("catalog is read-only"), /*applied=*/false);
  Produce(0, 5, 5);
  ASSERT_TRUE(h_->RunFor(3000).ok());
  EXPECT_TRUE(h_->Finish().ok());  // `floe run` exits 0
  EXPECT_EQ(h_->DataFileObjects().size(), 1u);
  h_->store.FailSwaps(0, Status::OK(), false);
  ASSERT_TRUE(h_->Restart().ok());
  ASSERT_TRUE(h_->Start().ok());
  ASSERT_TRUE(Committed(5));
  EXPECT_EQ(Ids(), Range(0, 10));
}

TEST_F(PipelineFaultsTest, ADroppedTableSuspendsItsTopicAndTheOthersGoOn) {
  Make(kTwoTopics);
  Produce(0, 0, 3);
  AddOther(0, 3);
  ASSERT_TRUE(h_->Start().ok());
  ASSERT_TRUE(Committed(3) && Committed(3, "other"));
  ASSERT_TRUE(h_->catalog->DropTable({{"kafka"}, "orders"}, /*purge=*/false).ok());
  Produce(0, 3, 2);
  AddOther(3, 4);
  ASSERT_TRUE(h_->RunUntil([&] { return h_->Topic("orders").suspended; }));
  EXPECT_NE(h_->Topic("orders").reason.find("dropped"), std::string::npos)
      << h_->Topic("orders").reason;
  ASSERT_TRUE(Committed(7, "other"));
  EXPECT_EQ(Ids("other"), Range(0, 7));
}

// Issue 38 item 11: on.table.dropped: recreate creates the table again and fills it from
// the beginning of the log, exactly once.
TEST_F(PipelineFaultsTest, ADroppedTableIsCreatedAgainWhenTheConfigSaysSo) {
  Make(
      "topics: [{name: orders, on.table.dropped: recreate}]\n"
      "defaults: {commit.interval.ms: 1000}\n");
  Produce(0, 0, 3);
  ASSERT_TRUE(h_->Start().ok());
  ASSERT_TRUE(Committed(3));
  const auto before = h_->Metadata("orders");
  ASSERT_TRUE(before.ok());
  ASSERT_TRUE(h_->catalog->DropTable({{"kafka"}, "orders"}, /*purge=*/false).ok());
  Produce(0, 3, 2);
  ASSERT_TRUE(h_->RunUntil(
      [&] {
        auto rows = h_->Rows("orders");  // absent between the drop and the first commit
        return rows.ok() && rows->size() == 5u;
      },
      20000));
  ASSERT_TRUE(h_->RunFor(3000).ok());
  EXPECT_FALSE(h_->Topic("orders").suspended);
  EXPECT_EQ(Ids(), Range(0, 5));
  EXPECT_EQ(Recorded(), (table::Positions{{"orders", {{0, 5}}}}));
  EXPECT_NE(h_->Metadata("orders")->table_uuid, before->table_uuid);  // a new table
}

TEST_F(PipelineFaultsTest, ACorruptMetadataFileSuspendsItsTopicAndTheOthersGoOn) {
  Make(kTwoTopics);
  Produce(0, 0, 3);
  AddOther(0, 3);
  ASSERT_TRUE(h_->Start().ok());
  ASSERT_TRUE(Committed(3) && Committed(3, "other"));
  auto loaded = h_->catalog->LoadTable({{"kafka"}, "orders"});
  ASSERT_TRUE(loaded.ok());
  ASSERT_TRUE(h_->memory_io->Delete(loaded->metadata_location).ok());
  ASSERT_TRUE(h_->memory_io->WriteNew(loaded->metadata_location, "{not json").ok());
  ASSERT_TRUE(h_->Restart().ok());  // the corrupt file is met while starting
  ASSERT_TRUE(h_->Start().ok());
  EXPECT_TRUE(h_->Topic("orders").suspended);
  EXPECT_NE(h_->Topic("orders").reason.find(loaded->metadata_location), std::string::npos)
      << h_->Topic("orders").reason;
  AddOther(3, 2);
  ASSERT_TRUE(Committed(2, "other"));
  EXPECT_EQ(Ids("other"), Range(0, 5));
}

TEST_F(PipelineFaultsTest, AColumnAnotherWriterAddedAfterKafkaIsKeptAndLeftNull) {
  Make(kOneTopic);
  Produce(0, 0, 3);
  ASSERT_TRUE(h_->Start().ok());
  ASSERT_TRUE(Committed(3));
  // pyiceberg's add_column appends the new column after `_kafka`.
  auto md = h_->Metadata("orders");
  ASSERT_TRUE(md.ok());
  iceberg::Schema wider = *md->CurrentSchema();
  wider.schema_id = md->current_schema_id + 1;
  wider.fields.push_back(
      iceberg::NestedField{md->last_column_id + 1,
                           "note",
                           false,
                           iceberg::Type::Primitive(iceberg::TypeId::kString),
                           {}});
  catalog::TableCommit add{
      {{"kafka"}, "orders"},
      {iceberg::requirement::AssertCurrentSchemaId{md->current_schema_id}},
      {u::AddSchema{wider, md->last_column_id + 1}, u::SetCurrentSchema{-1}}};
  auto added = h_->catalog->CommitTable(add, catalog::Writer::kExternal);
  ASSERT_TRUE(added.ok()) << added.status().ToString();
  ASSERT_TRUE(h_->Restart().ok());
  ASSERT_TRUE(h_->Start().ok());
  Produce(0, 3, 4);
  ASSERT_TRUE(Committed(4));
  EXPECT_FALSE(h_->Topic("orders").suspended) << h_->Topic("orders").reason;
  EXPECT_EQ(Ids(), Range(0, 7));
  EXPECT_EQ(h_->Metadata("orders")->CurrentSchema()->fields.back().name, "note");
}

TEST_F(PipelineFaultsTest, TombstonesAreCountedAndSkippedUnderTheDefaultPolicy) {
  Make(kOneTopic);
  Produce(0, 0, 2);
  h_->kafka.Produce("orders", 0, ScriptedSource::Message{});  // null value
  Produce(0, 2, 2);
  h_->kafka.Produce("orders", 0, ScriptedSource::Message{});
  ASSERT_TRUE(h_->Start().ok());
  ASSERT_TRUE(h_->RunUntil([&] {
    return h_->RecordedPositions("orders") == table::Positions{{"orders", {{0, 6}}}};
  }));
  EXPECT_FALSE(h_->Topic("orders").suspended);
  EXPECT_EQ(h_->Topic("orders").tombstones, 2);
  EXPECT_EQ(h_->Topic("orders").skipped_records, 0);
  EXPECT_EQ(Ids(), Range(0, 4));
}

TEST_F(PipelineFaultsTest, AWidenedTypeSuspendsEvenUnderSkip) {
  Make(kSkipTopic);
  Produce(0, 0, 3);
  // `id` long → string: a schema the table cannot take (not a bad record).
  const int changed = h_->registry.Register(
      "orders-value",
      R"({"type":"record","name":"order","fields":[{"name":"id","type":"string"},)"
      R"({"name":"name","type":"string"}]})");
  ProduceRaw(0, FramedAvro(changed, 3, "x"));
  Produce(0, 4, 2);
  ASSERT_TRUE(h_->Start().ok());
  ASSERT_TRUE(h_->RunUntil([&] { return h_->Topic("orders").suspended; }));
  EXPECT_NE(h_->Topic("orders").reason.find("does not fit table"), std::string::npos)
      << h_->Topic("orders").reason;
  EXPECT_EQ(h_->Topic("orders").skipped_records, 0);
  ASSERT_TRUE(h_->RunFor(3000).ok());
  EXPECT_EQ(Ids(), Range(0, 3));
  EXPECT_EQ(Recorded(), (table::Positions{{"orders", {{0, 3}}}}));  // stops at the record
}

// Avro encodes int and long alike, so FramedAvro serves both versions.
constexpr char kIntIdSchema[] =
    R"({"type":"record","name":"order","fields":[{"name":"id","type":"int"},)"
    R"({"name":"name","type":"string"}]})";

TEST_F(PipelineFaultsTest, IntToLongWidensTheColumnAndOldProducersGoOn) {
  Make(kSkipTopic);
  const int v1 = h_->registry.Register("orders-value", kIntIdSchema);
  const int v2 = h_->registry.Register("orders-value", testing::AvroSchemaText());
  for (int64_t id = 0; id < 6; ++id) {
    ProduceRaw(0, FramedAvro(id == 2 || id == 3 ? v2 : v1, id, "n"));  // v1, v2, v1 again
  }
  ASSERT_TRUE(h_->Start().ok());
  ASSERT_TRUE(Committed(6));
  EXPECT_EQ(h_->Topic("orders").skipped_records, 0);
  EXPECT_EQ(Ids(), Range(0, 6));
  auto md = h_->Metadata("orders");
  ASSERT_TRUE(md.ok());
  EXPECT_EQ(md->CurrentSchema()->FindTopLevel("id")->type->id, iceberg::TypeId::kLong);
  EXPECT_EQ(md->schemas.size(), 2u);
}

TEST_F(PipelineFaultsTest, AChangeTheSubjectsLevelRulesOutSuspendsNamingTheLevel) {
  Make(kSkipTopic);
  h_->registry.SetCompatibility("orders-value", "FORWARD");
  const int v1 = h_->registry.Register("orders-value", kIntIdSchema);
  const int v2 = h_->registry.Register("orders-value", testing::AvroSchemaText());
  ProduceRaw(0, FramedAvro(v1, 0, "a"));
  ProduceRaw(0, FramedAvro(v2, 1, "b"));
  ASSERT_TRUE(h_->Start().ok());
  ASSERT_TRUE(h_->RunUntil([&] { return h_->Topic("orders").suspended; }));
  const std::string reason = h_->Topic("orders").reason;
  EXPECT_NE(reason.find("compatibility level FORWARD (schema registry) refuses field id"),
            std::string::npos)
      << reason;
  EXPECT_NE(reason.find("offset 1"), std::string::npos) << reason;
  // Never skipped, whatever the policy.
  EXPECT_EQ(h_->Topic("orders").skipped_records, 0);
  EXPECT_EQ(Recorded(), (table::Positions{{"orders", {{0, 1}}}}));
  auto md = h_->Metadata("orders");
  ASSERT_TRUE(md.ok());
  EXPECT_EQ(md->schemas.size(), 1u);
}

TEST_F(PipelineFaultsTest, ANewRequiredFieldWithoutADefaultSuspendsUnderLevelNone) {
  Make(kOneTopic);
  h_->registry.SetCompatibility("", "NONE");
  Produce(0, 0, 2);
  const int v2 = h_->registry.Register(
      "orders-value",
      R"({"type":"record","name":"order","fields":[{"name":"id","type":"long"},)"
      R"({"name":"name","type":"string"},{"name":"must","type":"long"}]})");
  decode::testing::AvroEncoder e;
  e.Long(2).String("c").Long(7);
  ProduceRaw(0, testing::Framed(v2, e.str()));
  ASSERT_TRUE(h_->Start().ok());
  ASSERT_TRUE(h_->RunUntil([&] { return h_->Topic("orders").suspended; }));
  const std::string reason = h_->Topic("orders").reason;
  EXPECT_NE(reason.find("field must: it is new, required and has no default"),
            std::string::npos)
      << reason;
  EXPECT_EQ(reason.find("schema registry"), std::string::npos) << reason;
  EXPECT_EQ(Ids(), Range(0, 2));
  EXPECT_EQ(Recorded(), (table::Positions{{"orders", {{0, 2}}}}));
}

TEST_F(PipelineFaultsTest, AWideningOfATableWithDeltaEvolvesBothFormats) {
  Make(
      "topics: [{name: orders, formats: [iceberg, delta]}]\n"
      "defaults: {commit.interval.ms: 1000}\n");
  const int v1 = h_->registry.Register("orders-value", kIntIdSchema);
  const int v2 = h_->registry.Register("orders-value", testing::AvroSchemaText());
  ProduceRaw(0, FramedAvro(v1, 0, "a"));
  ProduceRaw(0, FramedAvro(v2, 1, "b"));
  ProduceRaw(0, FramedAvro(v2, 2, "c"));
  ASSERT_TRUE(h_->Start().ok());
  ASSERT_TRUE(Committed(3));
  EXPECT_FALSE(h_->Topic("orders").suspended) << h_->Topic("orders").reason;
  EXPECT_EQ(Ids(), Range(0, 3));
  auto md = h_->Metadata("orders");
  ASSERT_TRUE(md.ok());
  const iceberg::NestedField* id = md->CurrentSchema()->FindTopLevel("id");
  EXPECT_EQ(id->type->id, iceberg::TypeId::kLong);
  // Delta: the column keeps its id and physical name and records the change; the table
  // lists the typeWidening feature and enables it.
  delta::DeltaLog log(&h_->io, md->location);
  auto snap = log.ReadSnapshot();
  ASSERT_TRUE(snap.ok()) << snap.status().ToString();
  ASSERT_TRUE(snap->protocol && snap->metadata);
  for (const auto* features :
       {&snap->protocol->reader_features, &snap->protocol->writer_features}) {
    ASSERT_TRUE(features->has_value());
    EXPECT_NE(std::find((*features)->begin(), (*features)->end(), "typeWidening"),
              (*features)->end());
    EXPECT_NE(std::find((*features)->begin(), (*features)->end(), "columnMapping"),
              (*features)->end());
  }
  EXPECT_EQ(snap->metadata->configuration.at("delta.enableTypeWidening"), "true");
  const std::string& schema = snap->metadata->schema_string;
  EXPECT_NE(schema.find(R"("name":"id","type":"long")"), std::string::npos) << schema;
  EXPECT_NE(
      schema.find(R"("delta.columnMapping.id":)" + std::to_string(id->id) +
                  R"(,"delta.columnMapping.physicalName":"id",)"
                  R"("delta.typeChanges":[{"fromType":"integer","toType":"long"}])"),
      std::string::npos)
      << schema;
  EXPECT_GE(snap->files.size(), 2u);  // a file of each schema
  EXPECT_EQ(snap->TxnVersion(table::DeltaAppId(md->table_uuid, "orders", 0)), 3);
  // Later commits write no metaData again: version 0 and the widening have one each.
  ProduceRaw(0, FramedAvro(v2, 3, "d"));
  ASSERT_TRUE(Committed(4));
  auto later = log.ReadSnapshot();
  ASSERT_TRUE(later.ok());
  int metadata_actions = 0, protocol_actions = 0;
  for (int64_t v = 0; v <= later->version; ++v) {
    auto text = h_->io.Read(log.CommitUri(v));
    ASSERT_TRUE(text.ok()) << text.status().ToString();
    auto actions = delta::DecodeActions(*text);
    ASSERT_TRUE(actions.ok());
    for (const auto& a : *actions) {
      metadata_actions += std::holds_alternative<delta::Metadata>(a);
      protocol_actions += std::holds_alternative<delta::Protocol>(a);
    }
  }
  EXPECT_EQ(metadata_actions, 2);
  EXPECT_EQ(protocol_actions, 2);
  EXPECT_EQ(later->metadata->schema_string, schema);
}

TEST_F(PipelineFaultsTest, AnIdTheRegistryLearnsLateIsDecodedNotSkipped) {
  Make(kSkipTopic);
  Produce(0, 0, 2);
  const int late_id = schema_id_ + 1;  // the id the next registration gets
  ProduceRaw(0, FramedAvro(late_id, 2, "late"));
  Produce(0, 3, 2);
  ASSERT_TRUE(h_->Start().ok());
  ASSERT_TRUE(h_->RunFor(5000).ok());  // the registry does not know it for 5 s
  EXPECT_EQ(h_->Topic("orders").skipped_records, 0);
  EXPECT_EQ(Ids(), Range(0, 2));  // what came before is committed meanwhile
  ASSERT_EQ(h_->registry.Register("orders-value", testing::AvroSchemaTextRenamed()),
            late_id);
  ASSERT_TRUE(Committed(3));
  EXPECT_EQ(Ids(), Range(0, 5));
  EXPECT_EQ(h_->Topic("orders").skipped_records, 0);
}

TEST_F(PipelineFaultsTest, AnIdTheRegistryNeverKnowsIsSkippedAfterTheWindow) {
  Make(kSkipTopic);
  Produce(0, 0, 2);
  ProduceRaw(0, FramedAvro(999, 2, "never"));
  Produce(0, 3, 2);
  ASSERT_TRUE(h_->Start().ok());
  ASSERT_TRUE(h_->RunFor(20000).ok());
  EXPECT_EQ(h_->Topic("orders").skipped_records, 0);  // still asking
  ASSERT_TRUE(
      h_->RunUntil([&] { return h_->Topic("orders").skipped_records == 1; }, 20000));
  ASSERT_TRUE(
      h_->RunUntil([&] { return Ids() == std::vector<int64_t>{0, 1, 3, 4}; }, 2000));
}

}  // namespace
}  // namespace floe::pipeline
