#include "floe/decode/decoder_test_util.h"

#include <arrow/api.h>
#include <arrow/json/from_string.h>
#include <gtest/gtest.h>

#include "floe/schema/arrow.h"
#include "floe/schema/field_ids.h"
#include "floe/schema/table_schema.h"

namespace floe::decode::testing {

iceberg::Schema TableFromFields(const Result<std::vector<iceberg::NestedField>>& fields,
                                bool with_kafka) {
  EXPECT_TRUE(fields.ok()) << fields.status().ToString();
  int last = 0;
  if (with_kafka) {
    auto s = schema::BuildTableSchema(*fields, nullptr, &last);
    EXPECT_TRUE(s.ok()) << s.status().ToString();
    return *s;
  }
  auto ids = schema::AssignFieldIds(*fields, nullptr, &last);
  EXPECT_TRUE(ids.ok()) << ids.status().ToString();
  iceberg::Schema s;
  s.fields = *ids;
  return s;
}

TableBuilders::TableBuilders(const iceberg::Schema& table, ::arrow::MemoryPool* pool) {
  auto arrow_schema = schema::ToArrowSchema(table);
  EXPECT_TRUE(arrow_schema.ok()) << arrow_schema.status().ToString();
  auto rbb = ::arrow::RecordBatchBuilder::Make(*arrow_schema, pool);
  EXPECT_TRUE(rbb.ok()) << rbb.status().ToString();
  builder_ = std::move(*rbb);
  for (int i = 0; i < builder_->num_fields(); ++i)
    columns_.push_back(builder_->GetField(i));
}

TableBuilders::~TableBuilders() = default;

std::shared_ptr<::arrow::RecordBatch> TableBuilders::Flush() {
  auto b = builder_->Flush();
  EXPECT_TRUE(b.ok()) << b.status().ToString();
  auto st = (*b)->ValidateFull();
  EXPECT_TRUE(st.ok()) << st.ToString();
  return *b;
}

namespace {

void Snap(::arrow::ArrayBuilder* b, std::vector<int64_t>* out) {
  out->push_back(b->length());
  out->push_back(b->null_count());
  if (auto* bin = dynamic_cast<::arrow::BinaryBuilder*>(b)) {
    out->push_back(bin->value_data_length());
  } else if (auto* st = dynamic_cast<::arrow::StructBuilder*>(b)) {
    for (int i = 0; i < st->num_fields(); ++i) Snap(st->field_builder(i), out);
  } else if (auto* map = dynamic_cast<::arrow::MapBuilder*>(b)) {
    Snap(map->key_builder(), out);
    Snap(map->item_builder(), out);
  } else if (auto* list = dynamic_cast<::arrow::ListBuilder*>(b)) {
    Snap(list->value_builder(), out);
  }
}

}  // namespace

std::vector<int64_t> TableBuilders::Snapshot() const {
  std::vector<int64_t> out;
  for (auto* c : columns_) Snap(c, &out);
  return out;
}

void ExpectColumn(const ::arrow::RecordBatch& batch, const std::string& name,
                  const std::string& json) {
  auto col = batch.GetColumnByName(name);
  ASSERT_NE(col, nullptr) << name;
  auto expected = ::arrow::json::ArrayFromJSONString(col->type(), json);
  ASSERT_TRUE(expected.ok()) << name << ": " << expected.status().ToString();
  EXPECT_TRUE(col->Equals(**expected)) << name << "\nactual:   " << col->ToString()
                                       << "\nexpected: " << (*expected)->ToString();
}

void ExpectInvalid(const Status& st, const std::string& fragment) {
  ASSERT_FALSE(st.ok()) << "expected an error containing: " << fragment;
  EXPECT_EQ(KindOf(st), ErrorKind::kInvalidRecord) << st.ToString();
  EXPECT_NE(st.message().find(fragment), std::string::npos) << st.message();
}

std::vector<std::string> GoodPrefixesAndMutations(const std::vector<std::string>& good,
                                                  int mutations) {
  std::vector<std::string> out;
  size_t k = 0;
  auto next_good = [&] { out.push_back(good[k++ % good.size()]); };
  uint64_t state = 0x9e3779b97f4a7c15ULL;
  for (const std::string& g : good) {
    out.push_back(g);
    for (size_t n = 0; n < g.size(); ++n) {
      out.push_back(g.substr(0, n));
      next_good();
    }
    for (int m = 0; m < mutations; ++m) {
      state ^= state << 13;
      state ^= state >> 7;
      state ^= state << 17;
      std::string x = g;
      x[state % x.size()] = static_cast<char>(state >> 32);
      out.push_back(x);
      next_good();
    }
  }
  return out;
}

}  // namespace floe::decode::testing
