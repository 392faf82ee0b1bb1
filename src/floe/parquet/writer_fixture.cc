// Test fixture for tests/integration/test_parquet_writer.py (not shipped):
//
//   floe_parquet_writer_fixture OUT.parquet OUT.arrow [ROWS [ROW_GROUP_ROWS]]
//
// Writes ROWS rows of a schema with every Iceberg primitive type, a struct, a list, a
// map, a struct holding a list, nulls, NaN, ±0.0, ±inf, long and non-ASCII strings
// through DataFileWriter to OUT.parquet, the same rows as an Arrow IPC file to OUT.arrow
// (what an independent reader must read back), and prints the DataFile as JSON on stdout
// (binary values hex-encoded).
#include <arrow/api.h>
#include <arrow/io/file.h>
#include <arrow/ipc/writer.h>
#include <arrow/util/decimal.h>

#include <cmath>
#include <iostream>
#include <limits>
#include <nlohmann/json.hpp>
#include <string>

#include "floe/common/util.h"
#include "floe/parquet/writer.h"

namespace {

using floe::iceberg::NestedField;
using floe::iceberg::Type;
using floe::iceberg::TypeId;
using json = nlohmann::json;

#define CHECK_OK(expr)                                      \
  do {                                                      \
    ::arrow::Status _st = (expr);                           \
    if (!_st.ok()) {                                        \
      std::cerr << #expr << ": " << _st.ToString() << "\n"; \
      std::exit(1);                                         \
    }                                                       \
  } while (false)

std::shared_ptr<::arrow::Field> F(const std::string& name,
                                  std::shared_ptr<::arrow::DataType> type, bool nullable,
                                  int id) {
  return ::arrow::field(
      name, std::move(type), nullable,
      ::arrow::key_value_metadata({"PARQUET:field_id"}, {std::to_string(id)}));
}

// Iceberg schema JSON (spec "Schemas"), enough for the footer of this fixture.
json TypeJson(const Type& t) {
  switch (t.id) {
    case TypeId::kStruct: {
      json fields = json::array();
      for (const auto& f : t.fields) {
        fields.push_back({{"id", f.id},
                          {"name", f.name},
                          {"required", f.required},
                          {"type", TypeJson(*f.type)}});
      }
      return {{"type", "struct"}, {"fields", fields}};
    }
    case TypeId::kList:
      return {{"type", "list"},
              {"element-id", t.element().id},
              {"element-required", t.element().required},
              {"element", TypeJson(*t.element().type)}};
    case TypeId::kMap:
      return {{"type", "map"},
              {"key-id", t.key().id},
              {"key", TypeJson(*t.key().type)},
              {"value-id", t.value().id},
              {"value-required", t.value().required},
              {"value", TypeJson(*t.value().type)}};
    default:
      return floe::iceberg::PrimitiveTypeString(t);
  }
}

floe::iceberg::Schema IcebergSchema() {
  auto P = [](TypeId id) { return Type::Primitive(id); };
  floe::iceberg::Schema s;
  s.fields = {
      {1, "id", true, P(TypeId::kLong), {}},
      {2, "b", false, P(TypeId::kBoolean), {}},
      {3, "i", false, P(TypeId::kInt), {}},
      {4, "l", false, P(TypeId::kLong), {}},
      {5, "f", false, P(TypeId::kFloat), {}},
      {6, "d", false, P(TypeId::kDouble), {}},
      {7, "dec9", false, Type::Decimal(9, 2), {}},
      {8, "dec18", false, Type::Decimal(18, 4), {}},
      {9, "dec38", false, Type::Decimal(38, 10), {}},
      {10, "day", false, P(TypeId::kDate), {}},
      {11, "tod", false, P(TypeId::kTime), {}},
      {12, "ts", false, P(TypeId::kTimestamp), {}},
      {13, "tstz", false, P(TypeId::kTimestampTz), {}},
      {14, "s", false, P(TypeId::kString), {}},
      {15, "bin", false, P(TypeId::kBinary), {}},
      {16, "fx", false, Type::Fixed(20), {}},
      {17, "u", false, P(TypeId::kUuid), {}},
      {18,
       "st",
       false,
       Type::Struct({{19, "a", false, P(TypeId::kInt), {}},
                     {20, "b", false, P(TypeId::kString), {}},
                     {21, "c", false, P(TypeId::kDouble), {}}}),
       {}},
      {22, "lst", false, Type::List(23, false, P(TypeId::kLong)), {}},
      {24,
       "m",
       false,
       Type::Map(25, P(TypeId::kString), 26, false, P(TypeId::kDouble)),
       {}},
      {27,
       "st2",
       true,
       Type::Struct({{28, "x", true, P(TypeId::kLong), {}},
                     {29, "tags", false, Type::List(30, true, P(TypeId::kString)), {}}}),
       {}},
      {31, "nothing", false, P(TypeId::kString), {}},
      {32, "allnan", false, P(TypeId::kDouble), {}},
      {33, "bigstr", false, P(TypeId::kString), {}},
      {34, "zeros", false, P(TypeId::kDouble), {}},
  };
  return s;
}

std::shared_ptr<::arrow::Schema> ArrowSchema() {
  using namespace ::arrow;  // NOLINT: local to this builder
  auto st = struct_(
      {F("a", int32(), true, 19), F("b", utf8(), true, 20), F("c", float64(), true, 21)});
  auto lst = list(F("element", int64(), true, 23));
  auto m = std::make_shared<MapType>(F("key", utf8(), false, 25),
                                     F("value", float64(), true, 26));
  auto st2 = struct_({F("x", int64(), false, 28),
                      F("tags", list(F("element", utf8(), false, 30)), true, 29)});
  return ::arrow::schema({
      F("id", int64(), false, 1),
      F("b", boolean(), true, 2),
      F("i", int32(), true, 3),
      F("l", int64(), true, 4),
      F("f", float32(), true, 5),
      F("d", float64(), true, 6),
      F("dec9", decimal128(9, 2), true, 7),
      F("dec18", decimal128(18, 4), true, 8),
      F("dec38", decimal128(38, 10), true, 9),
      F("day", date32(), true, 10),
      F("tod", time64(TimeUnit::MICRO), true, 11),
      F("ts", timestamp(TimeUnit::MICRO), true, 12),
      F("tstz", timestamp(TimeUnit::MICRO, "UTC"), true, 13),
      F("s", utf8(), true, 14),
      F("bin", binary(), true, 15),
      F("fx", fixed_size_binary(20), true, 16),
      F("u", fixed_size_binary(16), true, 17),
      F("st", st, true, 18),
      F("lst", lst, true, 22),
      F("m", m, true, 24),
      F("st2", st2, false, 27),
      F("nothing", utf8(), true, 31),
      F("allnan", float64(), true, 32),
      F("bigstr", utf8(), true, 33),
      F("zeros", float64(), true, 34),
  });
}

std::string Repeat(const std::string& s, int n) {
  std::string out;
  for (int i = 0; i < n; ++i) out += s;
  return out;
}

std::shared_ptr<::arrow::RecordBatch> MakeBatch(
    const std::shared_ptr<::arrow::Schema>& schema, int64_t n) {
  std::unique_ptr<::arrow::RecordBatchBuilder> rb =
      *::arrow::RecordBatchBuilder::Make(schema, ::arrow::default_memory_pool(), n);
  auto* id = rb->GetFieldAs<::arrow::Int64Builder>(0);
  auto* b = rb->GetFieldAs<::arrow::BooleanBuilder>(1);
  auto* i32 = rb->GetFieldAs<::arrow::Int32Builder>(2);
  auto* i64 = rb->GetFieldAs<::arrow::Int64Builder>(3);
  auto* f = rb->GetFieldAs<::arrow::FloatBuilder>(4);
  auto* d = rb->GetFieldAs<::arrow::DoubleBuilder>(5);
  auto* dec9 = rb->GetFieldAs<::arrow::Decimal128Builder>(6);
  auto* dec18 = rb->GetFieldAs<::arrow::Decimal128Builder>(7);
  auto* dec38 = rb->GetFieldAs<::arrow::Decimal128Builder>(8);
  auto* day = rb->GetFieldAs<::arrow::Date32Builder>(9);
  auto* tod = rb->GetFieldAs<::arrow::Time64Builder>(10);
  auto* ts = rb->GetFieldAs<::arrow::TimestampBuilder>(11);
  auto* tstz = rb->GetFieldAs<::arrow::TimestampBuilder>(12);
  auto* s = rb->GetFieldAs<::arrow::StringBuilder>(13);
  auto* bin = rb->GetFieldAs<::arrow::BinaryBuilder>(14);
  auto* fx = rb->GetFieldAs<::arrow::FixedSizeBinaryBuilder>(15);
  auto* u = rb->GetFieldAs<::arrow::FixedSizeBinaryBuilder>(16);
  auto* st = rb->GetFieldAs<::arrow::StructBuilder>(17);
  auto* st_a = static_cast<::arrow::Int32Builder*>(st->field_builder(0));
  auto* st_b = static_cast<::arrow::StringBuilder*>(st->field_builder(1));
  auto* st_c = static_cast<::arrow::DoubleBuilder*>(st->field_builder(2));
  auto* lst = rb->GetFieldAs<::arrow::ListBuilder>(18);
  auto* lst_v = static_cast<::arrow::Int64Builder*>(lst->value_builder());
  auto* m = rb->GetFieldAs<::arrow::MapBuilder>(19);
  auto* m_k = static_cast<::arrow::StringBuilder*>(m->key_builder());
  auto* m_v = static_cast<::arrow::DoubleBuilder*>(m->item_builder());
  auto* st2 = rb->GetFieldAs<::arrow::StructBuilder>(20);
  auto* st2_x = static_cast<::arrow::Int64Builder*>(st2->field_builder(0));
  auto* st2_tags = static_cast<::arrow::ListBuilder*>(st2->field_builder(1));
  auto* st2_tag = static_cast<::arrow::StringBuilder*>(st2_tags->value_builder());
  auto* nothing = rb->GetFieldAs<::arrow::StringBuilder>(21);
  auto* allnan = rb->GetFieldAs<::arrow::DoubleBuilder>(22);
  auto* bigstr = rb->GetFieldAs<::arrow::StringBuilder>(23);
  auto* zeros = rb->GetFieldAs<::arrow::DoubleBuilder>(24);

  const double kNaN = std::numeric_limits<double>::quiet_NaN();
  const std::string specials[] = {
      "",
      "a",
      "zzzz",
      Repeat("\xc3\xa9", 20),                 // é x 20: 20 code points, 40 bytes
      Repeat("\xf0\x9f\x98\x80", 20),         // U+1F600 x 20: the max, truncated upwards
      Repeat("\xe6\x97\xa5\xe6\x9c\xac", 9),  // 日本 x 9
      std::string("nul\0inside", 10),
      Repeat("ab", 30),
  };
  const auto kE27 = *::arrow::Decimal128::FromString("1000000000000000000000000000");

  for (int64_t r = 0; r < n; ++r) {
    const int i = static_cast<int>(r);
    CHECK_OK(id->Append(r));
    CHECK_OK(i % 7 == 0 ? b->AppendNull() : b->Append(i % 3 == 0));
    int32_t iv = (i * 37 % 2001) - 1000;
    if (i == 5) iv = std::numeric_limits<int32_t>::min();
    if (i == 6) iv = std::numeric_limits<int32_t>::max();
    CHECK_OK(i % 11 == 0 ? i32->AppendNull() : i32->Append(iv));
    int64_t lv = static_cast<int64_t>(i) * 1000003 * 1000003 * (i % 2 ? -1 : 1);
    if (i == 8) lv = std::numeric_limits<int64_t>::min();
    CHECK_OK(i % 13 == 0 ? i64->AppendNull() : i64->Append(lv));
    float fv = static_cast<float>(i - 500) * 0.25f;
    if (i % 17 == 1) fv = std::numeric_limits<float>::quiet_NaN();
    if (i == 3) fv = -0.0f;
    CHECK_OK(i % 10 == 0 ? f->AppendNull() : f->Append(fv));
    double dv = std::sin(static_cast<double>(i)) * 1000;
    if (i % 19 == 2) dv = kNaN;
    if (i == 10) dv = std::numeric_limits<double>::infinity();
    if (i == 12) dv = -1e300;
    CHECK_OK(i % 9 == 0 ? d->AppendNull() : d->Append(dv));
    int64_t d9 = (static_cast<int64_t>(i) * 7919 % 2000001) - 1000000;
    if (i == 1) d9 = 999999999;
    if (i == 2) d9 = -999999999;
    CHECK_OK(i % 8 == 0 ? dec9->AppendNull() : dec9->Append(::arrow::Decimal128(d9)));
    CHECK_OK(i % 6 == 0 ? dec18->AppendNull()
                        : dec18->Append(::arrow::Decimal128((i - 500) * 123456789012LL)));
    CHECK_OK(i % 7 == 3 ? dec38->AppendNull()
                        : dec38->Append(::arrow::Decimal128(i - 500) * kE27 +
                                        ::arrow::Decimal128(i)));
    CHECK_OK(i % 5 == 0 ? day->AppendNull() : day->Append((i * 53) % 40000 - 10000));
    CHECK_OK(i % 4 == 0 ? tod->AppendNull() : tod->Append(i * 86399999999LL / 1000));
    CHECK_OK(i % 12 == 0 ? ts->AppendNull()
                         : ts->Append(-1000000000000000LL + i * 1000000000000LL));
    CHECK_OK(i % 14 == 0 ? tstz->AppendNull()
                         : tstz->Append(1700000000000000LL + i * 3600000000LL));
    if (i % 10 == 9) {
      CHECK_OK(s->AppendNull());
    } else if (i % 3 == 0) {
      CHECK_OK(s->Append(specials[(i / 3) % 8]));
    } else {
      std::string v = "row-" + std::to_string(100000 + i).substr(1);
      CHECK_OK(s->Append(v));
    }
    if (i % 15 == 0) {
      CHECK_OK(bin->AppendNull());
    } else if (i == 10) {
      CHECK_OK(bin->Append(std::string(20, '\xff')));  // max: no upper bound possible
    } else {
      uint32_t h = static_cast<uint32_t>(i) * 2654435761u;
      std::string v(1 + i % 24, '\0');
      for (size_t k = 0; k < v.size(); ++k)
        v[k] = static_cast<char>((h >> (8 * (k % 4))) + k);
      CHECK_OK(bin->Append(v));
    }
    if (i % 10 == 5) {
      CHECK_OK(fx->AppendNull());
    } else {
      std::string v(20, '\0');
      for (int k = 0; k < 20; ++k) v[k] = static_cast<char>((i * 31 + k * 7) % 200);
      CHECK_OK(fx->Append(v));
    }
    if (i % 16 == 0) {
      CHECK_OK(u->AppendNull());
    } else {
      std::string v(16, '\0');
      for (int k = 0; k < 16; ++k) v[k] = static_cast<char>((i * 131 + k * 17) % 256);
      CHECK_OK(u->Append(v));
    }
    // st: a null struct still holds child values underneath, including NaN, that must
    // count for nothing.
    bool st_null = i % 10 == 3;
    CHECK_OK(st_null ? st->AppendNull() : st->Append());
    CHECK_OK(!st_null && i % 4 == 1 ? st_a->AppendNull() : st_a->Append(i - 300));
    CHECK_OK(!st_null && i % 6 == 2 ? st_b->AppendNull()
                                    : st_b->Append("s" + std::to_string(i % 50)));
    double cv = i % 20 == 7 || st_null ? kNaN : i * 0.5 - 100;
    CHECK_OK(!st_null && i % 9 == 4 ? st_c->AppendNull() : st_c->Append(cv));
    if (i % 9 == 0) {
      CHECK_OK(lst->AppendNull());
    } else {
      CHECK_OK(lst->Append());
      for (int j = 0; j < i % 4; ++j) {
        CHECK_OK((i + j) % 5 == 0 ? lst_v->AppendNull()
                                  : lst_v->Append(static_cast<int64_t>(i) * j));
      }
    }
    if (i % 11 == 0) {
      CHECK_OK(m->AppendNull());
    } else {
      CHECK_OK(m->Append());
      for (int j = 0; j < i % 3; ++j) {
        CHECK_OK(m_k->Append("k" + std::to_string(j)));
        CHECK_OK(j == 1 && i % 2 ? m_v->Append(kNaN) : m_v->Append(i + j));
      }
    }
    CHECK_OK(st2->Append());
    CHECK_OK(st2_x->Append(2 * r));
    if (i % 3 == 0) {
      CHECK_OK(st2_tags->AppendNull());
    } else {
      CHECK_OK(st2_tags->Append());
      CHECK_OK(st2_tag->Append("t" + std::to_string(i)));
      CHECK_OK(st2_tag->Append("x"));
    }
    CHECK_OK(nothing->AppendNull());
    CHECK_OK(i % 2 == 0 ? allnan->AppendNull() : allnan->Append(kNaN));
    if (i % 3 == 0) {
      CHECK_OK(bigstr->AppendNull());
    } else {
      CHECK_OK(
          bigstr->Append(i == 7 ? std::string(5000, 'z') : "big" + std::to_string(i)));
    }
    switch (i % 4) {
      case 0:
        CHECK_OK(zeros->Append(-0.0));
        break;
      case 1:
        CHECK_OK(zeros->Append(0.0));
        break;
      case 2:
        CHECK_OK(zeros->Append(kNaN));
        break;
      default:
        CHECK_OK(zeros->AppendNull());
        break;
    }
  }
  return *rb->Flush();
}

json IntMap(const std::map<int, int64_t>& m) {
  json out = json::object();
  for (const auto& [k, v] : m) out[std::to_string(k)] = v;
  return out;
}

json HexMap(const std::map<int, std::string>& m) {
  json out = json::object();
  for (const auto& [k, v] : m) out[std::to_string(k)] = floe::HexEncode(v);
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    std::cerr
        << "usage: floe_parquet_writer_fixture OUT.parquet OUT.arrow [ROWS [RG_ROWS]]\n";
    return 2;
  }
  const int64_t rows = argc > 3 ? std::stoll(argv[3]) : 1000;
  floe::parquet::DataFileWriter::Options options;
  if (argc > 4) options.max_row_group_rows = std::stoll(argv[4]);

  auto schema = ArrowSchema();
  auto ice = IcebergSchema();
  json schema_json = TypeJson(*Type::Struct(ice.fields));
  schema_json["schema-id"] = ice.schema_id;
  auto batch = MakeBatch(schema, rows);
  CHECK_OK(batch->ValidateFull());

  auto out = *::arrow::io::FileOutputStream::Open(argv[1]);
  auto writer = floe::parquet::DataFileWriter::Open(
      out, std::string("file://") + argv[1], schema, ice, schema_json.dump(), options);
  CHECK_OK(writer.status());
  // Several slices, so row groups span Write() calls and arrays carry offsets.
  const int64_t step = 250;
  for (int64_t off = 0; off < rows; off += step) {
    CHECK_OK((*writer)->Write(*batch->Slice(off, std::min(step, rows - off))));
  }
  auto df = (*writer)->Close();
  CHECK_OK(df.status());

  auto ipc_out = *::arrow::io::FileOutputStream::Open(argv[2]);
  auto ipc = *::arrow::ipc::MakeFileWriter(ipc_out, schema);
  CHECK_OK(ipc->WriteRecordBatch(*batch));
  CHECK_OK(ipc->Close());
  CHECK_OK(ipc_out->Close());

  json j = {
      {"file_path", df->file_path},
      {"file_format", df->file_format},
      {"record_count", df->record_count},
      {"file_size_in_bytes", df->file_size_in_bytes},
      {"split_offsets", df->split_offsets},
      {"column_sizes", IntMap(df->column_sizes)},
      {"value_counts", IntMap(df->value_counts)},
      {"null_value_counts", IntMap(df->null_value_counts)},
      {"nan_value_counts", IntMap(df->nan_value_counts)},
      {"lower_bounds", HexMap(df->lower_bounds)},
      {"upper_bounds", HexMap(df->upper_bounds)},
  };
  std::cout << j.dump(2) << "\n";
  return 0;
}
