// Renames through the pipeline loop (issue 16): an Avro field renamed by alias and a
// Protobuf field renamed under its number keep their column (same field id, one schema
// change), producers still on the old schema land in the renamed column, before and after
// a restart, and the Parquet files keep the column's first name for Delta.
#include <arrow/api.h>
#include <arrow/util/key_value_metadata.h>
#include <gtest/gtest.h>
#include <parquet/arrow/reader.h>

#include <map>

#include "floe/decode/avro_test_encoder.h"
#include "floe/delta/log.h"
#include "floe/delta/schema.h"
#include "floe/iceberg/manifest.h"
#include "floe/pipeline/pipeline_test_fixture.h"
#include "floe/schema/rename_hints.h"

namespace floe::pipeline {
namespace {

// v2 of the test schema: `name` is now `title` (the same bytes on the wire).
constexpr char kRenamedSchema[] =
    R"({"type":"record","name":"order","fields":[{"name":"id","type":"long"},)"
    R"({"name":"title","aliases":["name"],"type":"string"}]})";

// One committed row, its text column found by field id (not by name).
struct IdRow {
  int64_t id = 0;
  std::string text;
  std::string parquet_column;  // the Parquet column name the text came from
  int64_t offset = 0;
};

class PipelineRenameTest : public PipelineTest {
 protected:
  // Every committed row, its value of field `field_id` (a string column) read by id.
  std::vector<IdRow> RowsById(int field_id) {
    std::vector<IdRow> out;
    auto md = h_->Metadata("orders");
    EXPECT_TRUE(md.ok()) << md.status().ToString();
    if (!md.ok() || md->CurrentSnapshot() == nullptr) return out;
    auto& io = *h_->memory_io;
    auto manifests = iceberg::ReadManifestList(io, md->CurrentSnapshot()->manifest_list);
    EXPECT_TRUE(manifests.ok());
    for (const auto& m : *manifests) {
      auto entries = iceberg::ReadManifestEntries(io, m);
      EXPECT_TRUE(entries.ok());
      for (const auto& e : *entries) {
        if (!e.is_live()) continue;
        auto file = io.OpenInputFile(e.data_file.file_path);
        EXPECT_TRUE(file.ok());
        auto reader = ::parquet::arrow::OpenFile(*file, ::arrow::default_memory_pool());
        EXPECT_TRUE(reader.ok());
        auto t = (*reader)->ReadTable();
        EXPECT_TRUE(t.ok());
        auto batch = *(*t)->CombineChunksToBatch();
        std::shared_ptr<::arrow::StringArray> text;
        std::string column;
        for (int i = 0; i < batch->num_columns(); ++i) {
          const auto& md_kv = batch->schema()->field(i)->metadata();
          if (md_kv && md_kv->Contains("PARQUET:field_id") &&
              *md_kv->Get("PARQUET:field_id") == std::to_string(field_id)) {
            text = std::static_pointer_cast<::arrow::StringArray>(batch->column(i));
            column = batch->schema()->field(i)->name();
          }
        }
        auto ids =
            std::static_pointer_cast<::arrow::Int64Array>(batch->GetColumnByName("id"));
        auto kafka = std::static_pointer_cast<::arrow::StructArray>(
            batch->GetColumnByName("_kafka"));
        auto offsets = std::static_pointer_cast<::arrow::Int64Array>(kafka->field(1));
        for (int64_t i = 0; i < batch->num_rows(); ++i) {
          IdRow r;
          r.id = ids->Value(i);
          r.text = text && !text->IsNull(i) ? text->GetString(i) : "<null>";
          r.parquet_column = column;
          r.offset = offsets->Value(i);
          out.push_back(r);
        }
      }
    }
    std::sort(out.begin(), out.end(),
              [](const IdRow& a, const IdRow& b) { return a.offset < b.offset; });
    return out;
  }

  // The table's current field `name` (top level), or null.
  const iceberg::NestedField* Field(const iceberg::TableMetadata& md,
                                    const std::string& name) {
    return md.CurrentSchema()->FindTopLevel(name);
  }
};

TEST_F(PipelineRenameTest, AvroAliasRenamesTheColumnAndOldProducersLandInIt) {
  Make(
      "topics: [{name: orders, formats: [iceberg, delta]}]\n"
      "defaults: {commit.interval.ms: 1000}\n");
  const int v1 = schema_id_;
  const int v2 = h_->registry.Register("orders-value", kRenamedSchema);
  ProduceRaw(0, testing::FramedAvro(v1, 0, "n0"));
  ProduceRaw(0, testing::FramedAvro(v1, 1, "n1"));
  ProduceRaw(0, testing::FramedAvro(v2, 2, "t2"));  // renames name → title
  ProduceRaw(0, testing::FramedAvro(v1, 3, "n3"));  // an old producer, interleaved
  ProduceRaw(0, testing::FramedAvro(v2, 4, "t4"));
  ProduceRaw(0, testing::FramedAvro(v1, 5, "n5"));
  ASSERT_TRUE(h_->Start().ok());
  ASSERT_TRUE(Committed(6));
  ASSERT_FALSE(h_->Topic("orders").suspended) << h_->Topic("orders").reason;

  auto md = h_->Metadata("orders");
  ASSERT_TRUE(md.ok());
  ASSERT_EQ(md->schemas.size(), 2u);  // one schema change, not one per producer switch
  const auto* before = md->schemas[0].FindTopLevel("name");
  ASSERT_NE(before, nullptr);
  const auto* title = Field(*md, "title");
  ASSERT_NE(title, nullptr);
  EXPECT_EQ(title->id, before->id);  // the same column
  EXPECT_EQ(Field(*md, "name"), nullptr);
  EXPECT_EQ(md->last_column_id, md->schemas[0].HighestFieldId());  // nothing added
  // Former names (the standard name mapping) and the Parquet column name are recorded.
  EXPECT_NE(
      md->properties.at(schema::kNameMappingProperty).find(R"("names":["title","name"])"),
      std::string::npos)
      << md->properties.at(schema::kNameMappingProperty);
  EXPECT_EQ(md->properties.at(schema::kColumnNamesProperty),
            R"({")" + std::to_string(title->id) + R"(":"name"})");

  // Every row's value, read by field id: in column `title` whatever the producer wrote.
  auto rows = RowsById(title->id);
  ASSERT_EQ(rows.size(), 6u);
  const std::vector<std::string> want = {"n0", "n1", "t2", "n3", "t4", "n5"};
  for (size_t i = 0; i < rows.size(); ++i) {
    EXPECT_EQ(rows[i].id, static_cast<int64_t>(i));
    EXPECT_EQ(rows[i].text, want[i]) << "offset " << rows[i].offset;
    // Every file names the column by its first name: Delta reads by it.
    EXPECT_EQ(rows[i].parquet_column, "name");
  }

  // Delta: the logical name changes, the physical name and the column-mapping id stay.
  delta::DeltaLog log(h_->memory_io.get(), md->location);
  auto snap = log.ReadSnapshot();
  ASSERT_TRUE(snap.ok()) << snap.status().ToString();
  ASSERT_TRUE(snap->metadata.has_value());
  const std::string& delta_schema = snap->metadata->schema_string;
  EXPECT_NE(delta_schema.find(R"("name":"title")"), std::string::npos) << delta_schema;
  auto physical = delta::PhysicalNamesFromSchemaString(delta_schema);
  ASSERT_TRUE(physical.ok());
  EXPECT_EQ(physical->at(title->id), "name");

  // A restart (a new pipeline over the same catalog): an old-version record still maps
  // to `title`, and nothing is added.
  ASSERT_TRUE(h_->Restart().ok());
  ProduceRaw(0, testing::FramedAvro(v1, 6, "n6"));
  ProduceRaw(0, testing::FramedAvro(v2, 7, "t7"));
  ASSERT_TRUE(h_->Start().ok());
  ASSERT_TRUE(Committed(2));
  ASSERT_FALSE(h_->Topic("orders").suspended) << h_->Topic("orders").reason;
  md = h_->Metadata("orders");
  ASSERT_TRUE(md.ok());
  EXPECT_EQ(md->schemas.size(), 2u);
  rows = RowsById(title->id);
  ASSERT_EQ(rows.size(), 8u);
  EXPECT_EQ(rows[6].text, "n6");
  EXPECT_EQ(rows[7].text, "t7");
  EXPECT_EQ(Recorded(), (table::Positions{{"orders", {{0, 8}}}}));
}

TEST_F(PipelineRenameTest, ANewNameWithoutAnAliasIsANewColumn) {
  Make(kOneTopic);
  const int v2 = h_->registry.Register(
      "orders-value",
      R"({"type":"record","name":"order","fields":[{"name":"id","type":"long"},)"
      R"({"name":"title","type":"string","default":""}]})");
  ProduceRaw(0, testing::FramedAvro(schema_id_, 0, "n0"));
  ProduceRaw(0, testing::FramedAvro(v2, 1, "t1"));
  ASSERT_TRUE(h_->Start().ok());
  ASSERT_TRUE(Committed(2));
  auto md = h_->Metadata("orders");
  ASSERT_TRUE(md.ok());
  const auto* name = Field(*md, "name");
  const auto* title = Field(*md, "title");
  ASSERT_NE(name, nullptr);
  ASSERT_NE(title, nullptr);
  EXPECT_NE(name->id, title->id);
  auto by_name = RowsById(name->id);
  auto by_title = RowsById(title->id);
  ASSERT_EQ(by_name.size(), 2u);
  EXPECT_EQ(by_name[0].text, "n0");
  EXPECT_EQ(by_name[1].text, "<null>");
  EXPECT_EQ(by_title[1].text, "t1");
  EXPECT_EQ(md->properties.count(schema::kNameMappingProperty), 0u);
}

// {id, name, s: {<field>: int}} with `s.<field>` renamed from `a` by alias in v2.
std::string NestedSchema(const std::string& field, const std::string& aliases) {
  return R"({"type":"record","name":"order","fields":[{"name":"id","type":"long"},)"
         R"({"name":"name","type":"string"},{"name":"s","type":{"type":"record",)"
         R"("name":"S","fields":[{"name":")" +
         field + R"(",)" + aliases + R"("type":"int"}]}}]})";
}

std::string FramedNested(int schema_id, int64_t id, int32_t v) {
  decode::testing::AvroEncoder e;
  e.Long(id).String("n").Int(v);
  std::string out(1, '\0');
  for (int shift = 24; shift >= 0; shift -= 8) {
    out.push_back(static_cast<char>((schema_id >> shift) & 0xff));
  }
  return out + e.str();
}

TEST_F(PipelineRenameTest, ANestedRenameKeepsItsParquetColumnName) {
  Make(kOneTopic);
  const int v1 = h_->registry.Register("orders-value", NestedSchema("a", ""));
  const int v2 =
      h_->registry.Register("orders-value", NestedSchema("b", R"("aliases":["a"],)"));
  ProduceRaw(0, FramedNested(v1, 0, 10));
  ProduceRaw(0, FramedNested(v2, 1, 11));
  ProduceRaw(0, FramedNested(v1, 2, 12));
  ASSERT_TRUE(h_->Start().ok());
  ASSERT_TRUE(Committed(3));
  ASSERT_FALSE(h_->Topic("orders").suspended) << h_->Topic("orders").reason;
  auto md = h_->Metadata("orders");
  ASSERT_TRUE(md.ok());
  ASSERT_EQ(md->schemas.size(), 2u);
  const auto& s_type = *Field(*md, "s")->type;
  ASSERT_EQ(s_type.fields.size(), 1u);
  EXPECT_EQ(s_type.fields[0].name, "b");
  const int b_id = s_type.fields[0].id;
  EXPECT_EQ(md->schemas[0].FindTopLevel("s")->type->fields[0].id, b_id);
  // Every file holds s.<column named a> with field id b_id, whatever schema wrote it.
  std::map<int64_t, int32_t> values;
  auto& io = *h_->memory_io;
  auto manifests = iceberg::ReadManifestList(io, md->CurrentSnapshot()->manifest_list);
  ASSERT_TRUE(manifests.ok());
  for (const auto& m : *manifests) {
    auto entries = iceberg::ReadManifestEntries(io, m);
    ASSERT_TRUE(entries.ok());
    for (const auto& e : *entries) {
      auto reader = ::parquet::arrow::OpenFile(*io.OpenInputFile(e.data_file.file_path),
                                               ::arrow::default_memory_pool());
      ASSERT_TRUE(reader.ok());
      auto t = (*reader)->ReadTable();
      ASSERT_TRUE(t.ok());
      auto batch = *(*t)->CombineChunksToBatch();
      auto s =
          std::static_pointer_cast<::arrow::StructArray>(batch->GetColumnByName("s"));
      ASSERT_NE(s, nullptr);
      const auto& child = s->type()->field(0);
      EXPECT_EQ(child->name(), "a");
      EXPECT_EQ(*child->metadata()->Get("PARQUET:field_id"), std::to_string(b_id));
      auto ids =
          std::static_pointer_cast<::arrow::Int64Array>(batch->GetColumnByName("id"));
      auto v = std::static_pointer_cast<::arrow::Int32Array>(s->field(0));
      for (int64_t i = 0; i < batch->num_rows(); ++i) values[ids->Value(i)] = v->Value(i);
    }
  }
  EXPECT_EQ(values, (std::map<int64_t, int32_t>{{0, 10}, {1, 11}, {2, 12}}));
  EXPECT_EQ(md->properties.at(schema::kColumnNamesProperty),
            R"({")" + std::to_string(b_id) + R"(":"a"})");
}

// --- Protobuf: a field renamed under the same number

// message Order { int64 id = 1; string <name> = 2; }
std::string OrderProto(const std::string& name) {
  return "syntax = \"proto3\";\nmessage Order {\n  int64 id = 1;\n  string " + name +
         " = 2;\n}\n";
}

// Confluent framing with message indexes [0], then the message's bytes.
std::string FramedProto(int schema_id, int64_t id, const std::string& text) {
  std::string out(1, '\0');
  for (int shift = 24; shift >= 0; shift -= 8) {
    out.push_back(static_cast<char>((schema_id >> shift) & 0xff));
  }
  out.push_back('\0');  // message indexes: [0]
  auto varint = [&](uint64_t v) {
    while (v >= 0x80) {
      out.push_back(static_cast<char>((v & 0x7f) | 0x80));
      v >>= 7;
    }
    out.push_back(static_cast<char>(v));
  };
  out.push_back(0x08);  // field 1, varint
  varint(static_cast<uint64_t>(id));
  out.push_back(0x12);  // field 2, length-delimited
  varint(text.size());
  out += text;
  return out;
}

TEST_F(PipelineRenameTest, ProtobufFieldRenamedUnderItsNumberKeepsTheColumn) {
  h_ = std::make_unique<testing::Harness>(kOneTopic);
  h_->kafka.AddTopic("orders", 1);
  const int v1 = h_->registry.Register("orders-value", OrderProto("name"),
                                       registry::SchemaType::kProtobuf);
  const int v2 = h_->registry.Register("orders-value", OrderProto("title"),
                                       registry::SchemaType::kProtobuf);
  ProduceRaw(0, FramedProto(v1, 0, "n0"));
  ProduceRaw(0, FramedProto(v2, 1, "t1"));  // renames name → title (field 2)
  ProduceRaw(0, FramedProto(v1, 2, "n2"));  // an old producer
  ProduceRaw(0, FramedProto(v2, 3, "t3"));
  ASSERT_TRUE(h_->Start().ok());
  ASSERT_TRUE(Committed(4));
  ASSERT_FALSE(h_->Topic("orders").suspended) << h_->Topic("orders").reason;
  auto md = h_->Metadata("orders");
  ASSERT_TRUE(md.ok());
  ASSERT_EQ(md->schemas.size(), 2u);
  const auto* before = md->schemas[0].FindTopLevel("name");
  const auto* title = Field(*md, "title");
  ASSERT_NE(before, nullptr);
  ASSERT_NE(title, nullptr);
  EXPECT_EQ(title->id, before->id);
  EXPECT_EQ(md->properties.at(schema::kFieldNumbersProperty),
            R"({"1":1,")" + std::to_string(title->id) + R"(":2})");
  auto rows = RowsById(title->id);
  ASSERT_EQ(rows.size(), 4u);
  const std::vector<std::string> want = {"n0", "t1", "n2", "t3"};
  for (size_t i = 0; i < rows.size(); ++i) EXPECT_EQ(rows[i].text, want[i]);

  // After a restart the number and the former name are known from the table.
  ASSERT_TRUE(h_->Restart().ok());
  ProduceRaw(0, FramedProto(v1, 4, "n4"));
  ASSERT_TRUE(h_->Start().ok());
  ASSERT_TRUE(Committed(1));
  md = h_->Metadata("orders");
  ASSERT_TRUE(md.ok());
  EXPECT_EQ(md->schemas.size(), 2u);
  rows = RowsById(title->id);
  ASSERT_EQ(rows.size(), 5u);
  EXPECT_EQ(rows[4].text, "n4");
}

}  // namespace
}  // namespace floe::pipeline
