// Writes a zstd Parquet file whose struct, list and map columns (and their children)
// carry PARQUET:field_id, so tests/integration/test_toolchain.py can assert the ids with
// pyarrow.
#include <arrow/api.h>
#include <arrow/io/file.h>
#include <parquet/arrow/writer.h>
#include <parquet/properties.h>

#include <iostream>
#include <memory>

namespace {

std::shared_ptr<::arrow::Field> WithId(std::shared_ptr<::arrow::Field> f, int id) {
  return f->WithMetadata(
      ::arrow::key_value_metadata({"PARQUET:field_id"}, {std::to_string(id)}));
}

::arrow::Status Run(const std::string& path) {
  auto id_f = WithId(::arrow::field("id", ::arrow::int64(), false), 1);
  auto inner_a = WithId(::arrow::field("a", ::arrow::int32(), true), 5);
  auto inner_b = WithId(::arrow::field("b", ::arrow::utf8(), true), 6);
  auto st_f = WithId(::arrow::field("s", ::arrow::struct_({inner_a, inner_b}), true), 2);
  auto elem = WithId(::arrow::field("element", ::arrow::float64(), true), 7);
  auto list_f = WithId(::arrow::field("l", ::arrow::list(elem), true), 3);
  auto key = WithId(::arrow::field("key", ::arrow::utf8(), false), 8);
  auto value = WithId(::arrow::field("value", ::arrow::int64(), true), 9);
  auto map_type = std::make_shared<::arrow::MapType>(key, value);
  auto map_f = WithId(::arrow::field("m", map_type, true), 4);
  auto schema = ::arrow::schema({id_f, st_f, list_f, map_f});

  std::unique_ptr<::arrow::RecordBatchBuilder> builder;
  ARROW_ASSIGN_OR_RAISE(builder, ::arrow::RecordBatchBuilder::Make(
                                     schema, ::arrow::default_memory_pool(), 3));
  auto* ids = builder->GetFieldAs<::arrow::Int64Builder>(0);
  auto* st = builder->GetFieldAs<::arrow::StructBuilder>(1);
  auto* sa = static_cast<::arrow::Int32Builder*>(st->field_builder(0));
  auto* sb = static_cast<::arrow::StringBuilder*>(st->field_builder(1));
  auto* lb = builder->GetFieldAs<::arrow::ListBuilder>(2);
  auto* lv = static_cast<::arrow::DoubleBuilder*>(lb->value_builder());
  auto* mb = builder->GetFieldAs<::arrow::MapBuilder>(3);
  auto* mk = static_cast<::arrow::StringBuilder*>(mb->key_builder());
  auto* mv = static_cast<::arrow::Int64Builder*>(mb->item_builder());
  for (int i = 0; i < 3; ++i) {
    ARROW_RETURN_NOT_OK(ids->Append(i));
    ARROW_RETURN_NOT_OK(st->Append());
    ARROW_RETURN_NOT_OK(sa->Append(i * 10));
    ARROW_RETURN_NOT_OK(sb->Append("row" + std::to_string(i)));
    ARROW_RETURN_NOT_OK(lb->Append());
    for (int j = 0; j < i; ++j) ARROW_RETURN_NOT_OK(lv->Append(j + 0.5));
    ARROW_RETURN_NOT_OK(mb->Append());
    ARROW_RETURN_NOT_OK(mk->Append("k" + std::to_string(i)));
    ARROW_RETURN_NOT_OK(mv->Append(i));
  }
  std::shared_ptr<::arrow::RecordBatch> batch;
  ARROW_ASSIGN_OR_RAISE(batch, builder->Flush());
  ARROW_ASSIGN_OR_RAISE(auto table, ::arrow::Table::FromRecordBatches({batch}));
  ARROW_ASSIGN_OR_RAISE(auto out, ::arrow::io::FileOutputStream::Open(path));
  auto props = ::parquet::WriterProperties::Builder()
                   .compression(::parquet::Compression::ZSTD)
                   ->build();
  return ::parquet::arrow::WriteTable(*table, ::arrow::default_memory_pool(), out, 1024,
                                      props);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::cerr << "usage: toolchain_check OUT.parquet\n";
    return 2;
  }
  auto st = Run(argv[1]);
  if (!st.ok()) {
    std::cerr << "toolchain_check: " << st.ToString() << "\n";
    return 1;
  }
  std::cout << "wrote " << argv[1] << " with Arrow " << ARROW_VERSION_STRING << "\n";
  return 0;
}
