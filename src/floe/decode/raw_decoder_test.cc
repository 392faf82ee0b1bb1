// value.format: binary and key.format: string (raw_decoder.h).
#include "floe/decode/raw_decoder.h"

#include <arrow/api.h>
#include <gtest/gtest.h>

#include <string>

#include "floe/schema/arrow.h"

namespace floe::decode {
namespace {

using iceberg::NestedField;
using iceberg::Type;
using iceberg::TypeId;

struct Builders {
  explicit Builders(const iceberg::Schema& table) {
    auto schema = *schema::ToArrowSchema(table);
    rbb = *::arrow::RecordBatchBuilder::Make(schema, ::arrow::default_memory_pool());
    for (int i = 0; i < rbb->num_fields(); ++i) columns.push_back(rbb->GetField(i));
  }
  std::shared_ptr<::arrow::Array> Finish(int i) {
    std::shared_ptr<::arrow::Array> out;
    EXPECT_TRUE(columns[i]->Finish(&out).ok());
    return out;
  }
  std::unique_ptr<::arrow::RecordBatchBuilder> rbb;
  std::vector<::arrow::ArrayBuilder*> columns;
};

iceberg::Schema Table() {
  iceberg::Schema s;
  s.fields = {NestedField{1, "value", false, Type::Primitive(TypeId::kBinary), {}},
              NestedField{2, "key", false, Type::Primitive(TypeId::kString), {}}};
  return s;
}

TEST(RawValueDecoderTest, WholeValueOrNullForATombstone) {
  auto table = Table();
  Builders b(table);
  auto d = *RawValueDecoder::Make(table);
  const std::string bytes("\x00\xff{not json", 11);
  ASSERT_TRUE(d.Decode(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size(),
                       b.columns.data())
                  .ok());
  ASSERT_TRUE(d.Decode(nullptr, 0, b.columns.data()).ok());
  ASSERT_TRUE(d.Decode(reinterpret_cast<const uint8_t*>(""), 0, b.columns.data()).ok());
  auto arr = std::static_pointer_cast<::arrow::BinaryArray>(b.Finish(0));
  ASSERT_EQ(arr->length(), 3);
  EXPECT_EQ(arr->GetString(0), bytes);
  EXPECT_TRUE(arr->IsNull(1));
  EXPECT_TRUE(arr->IsValid(2));
  EXPECT_EQ(arr->GetString(2), "");
}

TEST(KeyColumnAppenderTest, Utf8KeysOnly) {
  auto table = Table();
  Builders b(table);
  auto k = *KeyColumnAppender::Make(table);
  EXPECT_EQ(k.column(), 1);
  const std::string good = "ключ-🙂";
  const std::string bad("\xc3\x28", 2);
  EXPECT_TRUE(
      k.Validate(reinterpret_cast<const uint8_t*>(good.data()), good.size()).ok());
  EXPECT_EQ(KindOf(k.Validate(reinterpret_cast<const uint8_t*>(bad.data()), bad.size())),
            ErrorKind::kInvalidRecord);
  EXPECT_TRUE(k.Validate(nullptr, 0).ok());
  ASSERT_TRUE(k.Append(reinterpret_cast<const uint8_t*>(good.data()), good.size(),
                       b.columns.data())
                  .ok());
  ASSERT_TRUE(k.Append(nullptr, 0, b.columns.data()).ok());
  auto arr = std::static_pointer_cast<::arrow::StringArray>(b.Finish(1));
  EXPECT_EQ(arr->GetString(0), good);
  EXPECT_TRUE(arr->IsNull(1));
}

TEST(RawDecodersTest, RefuseTablesWithoutTheColumn) {
  iceberg::Schema s;
  s.fields = {NestedField{1, "value", true, Type::Primitive(TypeId::kBinary), {}}};
  EXPECT_FALSE(
      RawValueDecoder::Make(s).ok());  // required: a tombstone could not be stored
  EXPECT_FALSE(KeyColumnAppender::Make(s).ok());
}

}  // namespace
}  // namespace floe::decode
