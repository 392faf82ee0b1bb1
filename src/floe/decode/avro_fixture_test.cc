// Decodes records written by fastavro (an independent encoder; see
// tests/data/avro/make_fixtures.py) and compares every column with the values the
// generator put in.
#include <arrow/api.h>
#include <arrow/json/from_string.h>
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "floe/decode/avro_decoder.h"
#include "floe/schema/arrow.h"
#include "floe/schema/avro_to_iceberg.h"
#include "floe/schema/field_ids.h"

namespace floe::decode {
namespace {

std::string ReadFile(const std::string& name) {
  std::ifstream in(std::string(FLOE_TEST_DATA_DIR) + "/avro/" + name, std::ios::binary);
  EXPECT_TRUE(in.good()) << name;
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// Decodes <name>.records.bin with the schema <name>.avsc into the table a new topic with
// that schema gets, and compares every column with <name>.expected.json.
void CheckFixture(const std::string& name, int expected_records) {
  auto writer = avro::Schema::Parse(ReadFile(name + ".avsc"));
  ASSERT_TRUE(writer.ok()) << writer.status().ToString();
  auto fields = schema::AvroToIcebergFields(*writer);
  ASSERT_TRUE(fields.ok()) << fields.status().ToString();
  int last = 0;
  iceberg::Schema table;
  auto ids = schema::AssignFieldIds(*fields, nullptr, &last);
  ASSERT_TRUE(ids.ok());
  table.fields = *ids;
  auto arrow_schema = schema::ToArrowSchema(table);
  ASSERT_TRUE(arrow_schema.ok());
  auto builder =
      ::arrow::RecordBatchBuilder::Make(*arrow_schema, ::arrow::default_memory_pool());
  ASSERT_TRUE(builder.ok());
  std::vector<::arrow::ArrayBuilder*> columns;
  for (int i = 0; i < (*builder)->num_fields(); ++i)
    columns.push_back((*builder)->GetField(i));
  auto decoder = AvroDecoder::Make(*writer, table);
  ASSERT_TRUE(decoder.ok()) << decoder.status().ToString();

  const std::string records = ReadFile(name + ".records.bin");
  const auto* p = reinterpret_cast<const uint8_t*>(records.data());
  const auto* end = p + records.size();
  int n = 0;
  while (p < end) {
    ASSERT_GE(end - p, 4);
    const size_t len =
        (size_t{p[0]} << 24) | (size_t{p[1]} << 16) | (size_t{p[2]} << 8) | p[3];
    p += 4;
    ASSERT_LE(len, static_cast<size_t>(end - p));
    auto st = (*decoder)->Decode(p, len, columns.data());
    ASSERT_TRUE(st.ok()) << "record " << n << ": " << st.ToString();
    p += len;
    ++n;
  }
  EXPECT_EQ(n, expected_records);
  auto batch = (*builder)->Flush();
  ASSERT_TRUE(batch.ok());
  ASSERT_TRUE((*batch)->ValidateFull().ok());

  auto expected = nlohmann::json::parse(ReadFile(name + ".expected.json"));
  ASSERT_EQ(static_cast<int>(expected.size()), (*batch)->num_columns());
  ASSERT_EQ((*batch)->num_rows(), expected_records);
  for (const auto& [column, values] : expected.items()) {
    auto col = (*batch)->GetColumnByName(column);
    ASSERT_NE(col, nullptr) << column;
    auto want = ::arrow::json::ArrayFromJSONString(col->type(), values.dump());
    ASSERT_TRUE(want.ok()) << column << ": " << want.status().ToString();
    if (!col->Equals(**want)) {
      for (int64_t r = 0; r < col->length(); ++r) {
        auto a = col->GetScalar(r);
        auto b = (*want)->GetScalar(r);
        if (!(*a)->Equals(**b)) {
          ADD_FAILURE() << name << ": column " << column << " row " << r << ": got "
                        << (*a)->ToString() << ", want " << (*b)->ToString();
          break;
        }
      }
    }
  }
}

TEST(AvroFixtureTest, FastavroAllTypes) { CheckFixture("all_types", 300); }

// General unions (with and without null, null in the middle, in arrays, maps and nested
// records) and named types referenced by short and full name.
TEST(AvroFixtureTest, FastavroUnions) { CheckFixture("unions", 200); }

}  // namespace
}  // namespace floe::decode
