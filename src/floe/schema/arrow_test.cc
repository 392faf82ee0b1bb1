#include "floe/schema/arrow.h"

#include <arrow/api.h>
#include <arrow/io/memory.h>
#include <gtest/gtest.h>
#include <parquet/arrow/reader.h>
#include <parquet/arrow/writer.h>
#include <parquet/file_reader.h>
#include <parquet/schema.h>

#include "floe/schema/table_schema.h"

namespace floe::schema {
namespace {

using iceberg::NestedField;
using iceberg::Type;
using iceberg::TypeId;

int FieldId(const ::arrow::Field& f) {
  auto md = f.metadata();
  if (!md) return -1;
  auto v = md->Get(kParquetFieldIdKey);
  return v.ok() ? std::stoi(*v) : -1;
}

NestedField F(int id, const char* name, bool required, iceberg::TypePtr t) {
  return NestedField{id, name, required, std::move(t), {}};
}

iceberg::Schema AllTypes() {
  iceberg::Schema s;
  auto P = [](TypeId id) { return Type::Primitive(id); };
  s.fields = {
      F(1, "b", true, P(TypeId::kBoolean)),
      F(2, "i", false, P(TypeId::kInt)),
      F(3, "l", true, P(TypeId::kLong)),
      F(4, "f", true, P(TypeId::kFloat)),
      F(5, "d", true, P(TypeId::kDouble)),
      F(6, "dec", true, Type::Decimal(38, 9)),
      F(7, "date", true, P(TypeId::kDate)),
      F(8, "time", true, P(TypeId::kTime)),
      F(9, "ts", true, P(TypeId::kTimestamp)),
      F(10, "tstz", true, P(TypeId::kTimestampTz)),
      F(11, "s", true, P(TypeId::kString)),
      F(12, "u", true, P(TypeId::kUuid)),
      F(13, "fx", true, Type::Fixed(7)),
      F(14, "bin", false, P(TypeId::kBinary)),
      F(15, "st", false,
        Type::Struct(
            {F(16, "x", true, P(TypeId::kInt)), F(17, "y", false, P(TypeId::kString))})),
      F(18, "lst", true, Type::List(19, false, P(TypeId::kLong))),
      F(20, "mp", false, Type::Map(21, P(TypeId::kString), 22, true, P(TypeId::kDouble))),
      F(23, "nested", true,
        Type::List(24, true,
                   Type::Map(25, P(TypeId::kString), 26, false,
                             Type::Struct({F(27, "z", true, P(TypeId::kDate))})))),
  };
  return s;
}

TEST(ArrowSchemaTest, TypesNullabilityAndIds) {
  auto r = ToArrowSchema(AllTypes());
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  const auto& s = **r;
  std::vector<std::string> expected = {
      "bool",
      "int32",
      "int64",
      "float",
      "double",
      "decimal128(38, 9)",
      "date32[day]",
      "time64[us]",
      "timestamp[us]",
      "timestamp[us, tz=UTC]",
      "string",
      "fixed_size_binary[16]",
      "fixed_size_binary[7]",
      "binary",
  };
  for (size_t i = 0; i < expected.size(); ++i) {
    EXPECT_EQ(s.field(static_cast<int>(i))->type()->ToString(), expected[i]) << i;
    EXPECT_EQ(FieldId(*s.field(static_cast<int>(i))), static_cast<int>(i) + 1);
  }
  EXPECT_FALSE(s.field(0)->nullable());
  EXPECT_TRUE(s.field(1)->nullable());

  const auto& st = *s.GetFieldByName("st");
  EXPECT_TRUE(st.nullable());
  EXPECT_EQ(FieldId(*st.type()->field(0)), 16);
  EXPECT_FALSE(st.type()->field(0)->nullable());
  EXPECT_EQ(FieldId(*st.type()->field(1)), 17);

  const auto& lst = *s.GetFieldByName("lst");
  ASSERT_EQ(lst.type()->id(), ::arrow::Type::LIST);
  auto elem = static_cast<const ::arrow::ListType&>(*lst.type()).value_field();
  EXPECT_EQ(elem->name(), "element");
  EXPECT_EQ(FieldId(*elem), 19);
  EXPECT_TRUE(elem->nullable());

  const auto& mp = *s.GetFieldByName("mp");
  ASSERT_EQ(mp.type()->id(), ::arrow::Type::MAP);
  const auto& mt = static_cast<const ::arrow::MapType&>(*mp.type());
  EXPECT_EQ(mt.value_field()->name(), "key_value");
  EXPECT_FALSE(mt.value_field()->nullable());
  EXPECT_EQ(mt.key_field()->name(), "key");
  EXPECT_FALSE(mt.key_field()->nullable());
  EXPECT_EQ(FieldId(*mt.key_field()), 21);
  EXPECT_EQ(mt.item_field()->name(), "value");
  EXPECT_FALSE(mt.item_field()->nullable());
  EXPECT_EQ(FieldId(*mt.item_field()), 22);
}

TEST(ArrowSchemaTest, Errors) {
  iceberg::Schema s;
  s.fields = {F(0, "noid", true, Type::Primitive(TypeId::kInt))};
  EXPECT_FALSE(ToArrowSchema(s).ok());
  s.fields = {F(1, "dec", true, Type::Decimal(39, 0))};
  EXPECT_FALSE(ToArrowSchema(s).ok());
  s.fields = {F(1, "l", true, Type::List(0, true, Type::Primitive(TypeId::kInt)))};
  auto r = ToArrowSchema(s);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("'element'"), std::string::npos);
}

// Follows a Parquet schema path of names from the root.
const ::parquet::schema::Node* Find(const ::parquet::schema::GroupNode& root,
                                    const std::vector<std::string>& path) {
  const ::parquet::schema::Node* node = &root;
  for (const auto& name : path) {
    if (!node->is_group()) return nullptr;
    const auto& g = static_cast<const ::parquet::schema::GroupNode&>(*node);
    int i = g.FieldIndex(name);
    if (i < 0) return nullptr;
    node = g.field(i).get();
  }
  return node;
}

// What the Parquet writer makes of it (REFERENCE.md "Parquet for Iceberg"): ids on every
// node, 3-level lists and maps, repetition matching `required`.
TEST(ArrowSchemaTest, ParquetWriterKeepsIdsAndRepetition) {
  iceberg::Schema schema = AllTypes();
  int last = schema.HighestFieldId();
  // Add _kafka with its real shape too.
  auto with_kafka = BuildTableSchema({}, nullptr, &last);
  ASSERT_TRUE(with_kafka.ok());
  NestedField kafka = with_kafka->fields[0];
  schema.fields.push_back(kafka);
  auto arrow_schema = ToArrowSchema(schema);
  ASSERT_TRUE(arrow_schema.ok()) << arrow_schema.status().ToString();

  auto builder =
      ::arrow::RecordBatchBuilder::Make(*arrow_schema, ::arrow::default_memory_pool());
  ASSERT_TRUE(builder.ok()) << builder.status().ToString();
  // One row of empty/null values is enough to exercise the writer.
  for (int i = 0; i < (*builder)->num_fields(); ++i) {
    ASSERT_TRUE((*builder)->GetField(i)->AppendEmptyValue().ok());
  }
  auto batch = (*builder)->Flush();
  ASSERT_TRUE(batch.ok()) << batch.status().ToString();
  ASSERT_TRUE((*batch)->ValidateFull().ok());
  auto table = ::arrow::Table::FromRecordBatches({*batch});
  ASSERT_TRUE(table.ok());
  auto sink = ::arrow::io::BufferOutputStream::Create();
  ASSERT_TRUE(sink.ok());
  ASSERT_TRUE(
      ::parquet::arrow::WriteTable(**table, ::arrow::default_memory_pool(), *sink, 1024)
          .ok());
  auto buffer = (*sink)->Finish();
  ASSERT_TRUE(buffer.ok());
  auto reader = ::parquet::ParquetFileReader::Open(
      std::make_shared<::arrow::io::BufferReader>(*buffer));
  const auto& root = *reader->metadata()->schema()->group_node();

  using ::parquet::Repetition;
  struct Expect {
    std::vector<std::string> path;
    int field_id;
    Repetition::type repetition;
  } cases[] = {
      {{"b"}, 1, Repetition::REQUIRED},
      {{"i"}, 2, Repetition::OPTIONAL},
      {{"st"}, 15, Repetition::OPTIONAL},
      {{"st", "x"}, 16, Repetition::REQUIRED},
      {{"st", "y"}, 17, Repetition::OPTIONAL},
      {{"lst"}, 18, Repetition::REQUIRED},
      {{"lst", "list"}, -1, Repetition::REPEATED},
      {{"lst", "list", "element"}, 19, Repetition::OPTIONAL},
      {{"mp"}, 20, Repetition::OPTIONAL},
      {{"mp", "key_value"}, -1, Repetition::REPEATED},
      {{"mp", "key_value", "key"}, 21, Repetition::REQUIRED},
      {{"mp", "key_value", "value"}, 22, Repetition::REQUIRED},
      {{"nested", "list", "element"}, 24, Repetition::REQUIRED},
      {{"nested", "list", "element", "key_value", "key"}, 25, Repetition::REQUIRED},
      {{"nested", "list", "element", "key_value", "value"}, 26, Repetition::OPTIONAL},
      {{"nested", "list", "element", "key_value", "value", "z"},
       27,
       Repetition::REQUIRED},
      {{"_kafka"}, kafka.id, Repetition::REQUIRED},
      {{"_kafka", "headers", "list", "element", "key"}, -2, Repetition::REQUIRED},
      {{"_kafka", "headers", "list", "element", "value"}, -2, Repetition::OPTIONAL},
  };
  for (const auto& c : cases) {
    const auto* node = Find(root, c.path);
    ASSERT_NE(node, nullptr) << c.path.back();
    if (c.field_id != -2) {
      EXPECT_EQ(node->field_id(), c.field_id) << c.path.back();
    } else {
      EXPECT_GT(node->field_id(), 0) << c.path.back();
    }
    EXPECT_EQ(node->repetition(), c.repetition) << c.path.back();
  }
  EXPECT_TRUE(Find(root, {"lst"})->logical_type()->is_list());
  EXPECT_TRUE(Find(root, {"mp"})->logical_type()->is_map());
  EXPECT_TRUE(Find(root, {"s"})->logical_type()->is_string());
  const auto* tstz = Find(root, {"tstz"});
  ASSERT_TRUE(tstz->logical_type()->is_timestamp());
  EXPECT_TRUE(static_cast<const ::parquet::TimestampLogicalType&>(*tstz->logical_type())
                  .is_adjusted_to_utc());
  const auto* ts = Find(root, {"ts"});
  EXPECT_FALSE(static_cast<const ::parquet::TimestampLogicalType&>(*ts->logical_type())
                   .is_adjusted_to_utc());
}

}  // namespace
}  // namespace floe::schema
