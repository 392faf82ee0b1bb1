#include "floe/pipeline/table_writer.h"

#include <arrow/api.h>
#include <arrow/io/interfaces.h>

#include <algorithm>
#include <string_view>

#include "floe/common/crash.h"
#include "floe/common/log.h"
#include "floe/common/memory_pool.h"
#include "floe/common/util.h"
#include "floe/iceberg/schema_json.h"
#include "floe/kafka/consumer.h"
#include "floe/parquet/writer.h"
#include "floe/schema/arrow.h"
#include "floe/schema/rename_hints.h"
#include "floe/schema/table_schema.h"
#include "floe/storage/file_io.h"

namespace floe::pipeline {
namespace {

// Every this many files of a table, one tries a dictionary on every column again.
constexpr int kDictionaryProbeFiles = 16;

// The same array data under `type` (the same layout, other field names): no copy of
// the buffers.
std::shared_ptr<::arrow::ArrayData> Relabel(
    const std::shared_ptr<::arrow::ArrayData>& data,
    const std::shared_ptr<::arrow::DataType>& type) {
  auto out = std::make_shared<::arrow::ArrayData>(*data);
  out->type = type;
  for (size_t i = 0; i < out->child_data.size(); ++i) {
    out->child_data[i] =
        Relabel(data->child_data[i], type->field(static_cast<int>(i))->type());
  }
  return out;
}

}  // namespace

TableWriter::TableWriter(TableWriterOptions options, iceberg::Schema schema)
    : options_(std::move(options)), schema_(std::move(schema)), attempt_(NewUuid()) {}

TableWriter::~TableWriter() = default;

Result<std::unique_ptr<TableWriter>> TableWriter::Make(TableWriterOptions options,
                                                       iceberg::Schema schema) {
  std::unique_ptr<TableWriter> w(new TableWriter(std::move(options), std::move(schema)));
  FLOE_RETURN_NOT_OK(w->Init());
  return w;
}

Status TableWriter::Init() {
  // `_kafka` is found by name: other writers may add columns after it (pyiceberg's
  // add_column appends), and Floe's decoders leave such columns null.
  kafka_index_ = -1;
  for (size_t i = 0; i < schema_.fields.size(); ++i) {
    if (schema_.fields[i].name == schema::kKafkaColumn)
      kafka_index_ = static_cast<int>(i);
  }
  if (kafka_index_ < 0) {
    return Suspend("table schema has no _kafka column, so Floe cannot write it");
  }
  const iceberg::NestedField& kafka = schema_.fields[kafka_index_];
  const iceberg::NestedField expected = schema::KafkaMetadataField();
  bool same = kafka.type->id == iceberg::TypeId::kStruct &&
              kafka.type->fields.size() == expected.type->fields.size();
  for (size_t i = 0; same && i < kafka.type->fields.size(); ++i) {
    same = kafka.type->fields[i].name == expected.type->fields[i].name &&
           kafka.type->fields[i].type->id == expected.type->fields[i].type->id;
  }
  if (!same) {
    return Suspend(
        "the table's _kafka column was changed by another writer; Floe "
        "writes it as struct<partition, offset, timestamp, key, headers>");
  }
  FLOE_ASSIGN_OR_RAISE(arrow_schema_, schema::ToArrowSchema(schema_));
  file_schema_ = arrow_schema_;
  if (!options_.column_names.empty()) {
    iceberg::Schema named = schema_;
    named.fields =
        schema::WithColumnNames(std::move(named.fields), options_.column_names);
    FLOE_ASSIGN_OR_RAISE(file_schema_, schema::ToArrowSchema(named));
  }
  schema_json_ = iceberg::SchemaToJsonString(schema_);
  FLOE_ASSIGN_OR_RAISE(
      builder_, ::arrow::RecordBatchBuilder::Make(arrow_schema_, common::DataPool(),
                                                  options_.batch_rows));
  columns_.clear();
  for (int i = 0; i < builder_->num_fields(); ++i)
    columns_.push_back(builder_->GetField(i));
  // Every builder of the tree, pre-order; Flush() finishes them but keeps the objects.
  all_builders_.clear();
  auto walk = [&](auto&& self, ::arrow::ArrayBuilder* b, std::string path) -> void {
    const std::shared_ptr<::arrow::DataType> type = b->type();  // returned by value
    const bool binary =
        type->id() == ::arrow::Type::STRING || type->id() == ::arrow::Type::BINARY;
    all_builders_.push_back({b, path, binary, 0, 0});
    for (int c = 0; c < b->num_children(); ++c) {
      self(self, b->child_builder(c).get(),
           path + "." +
               (c < type->num_fields() ? type->field(c)->name() : std::to_string(c)));
    }
  };
  for (size_t i = 0; i < columns_.size(); ++i)
    walk(walk, columns_[i], arrow_schema_->field(static_cast<int>(i))->name());
  return TakeHints();
}

// The previous writer's hints: its sizes for the builders of the same paths are
// reserved now, as after a flush.
Status TableWriter::TakeHints() {
  WriterHints& h = options_.hints;
  overflowed_columns_ = std::move(h.overflowed_columns);
  files_since_probe_ = h.files_since_probe;
  compression_ratio_ = h.compression_ratio;
  if (h.builder_sizes.empty()) return Status::OK();
  std::map<std::string_view, const WriterHints::BuilderSize*> sizes;
  for (const auto& s : h.builder_sizes) sizes.emplace(s.path, &s);
  for (auto& b : all_builders_) {
    auto it = sizes.find(b.path);
    if (it == sizes.end()) continue;
    b.length = it->second->length;
    b.data_bytes = b.binary ? it->second->data_bytes : 0;
  }
  h.builder_sizes.clear();
  return ReserveLikeLastBatch();
}

WriterHints TableWriter::hints() const {
  WriterHints h;
  h.overflowed_columns = overflowed_columns_;
  h.files_since_probe = files_since_probe_;
  h.compression_ratio = compression_ratio_;
  for (const auto& b : all_builders_) {
    if (b.length > 0) h.builder_sizes.push_back({b.path, b.length, b.data_bytes});
  }
  return h;
}

void TableWriter::RememberBuilderSizes() {
  for (auto& s : all_builders_) {
    s.length = s.builder->length();
    s.data_bytes =
        s.binary ? static_cast<::arrow::BinaryBuilder*>(s.builder)->value_data_length()
                 : 0;
  }
}

Status TableWriter::ReserveLikeLastBatch() {
  // The next batch is most likely shaped like the last one: reserving its sizes up front
  // spares the builders' regrowth (each a reallocation and copy) while they fill.
  for (const auto& s : all_builders_) {
    FLOE_RETURN_NOT_OK(s.builder->Reserve(s.length));
    if (s.binary) {
      FLOE_RETURN_NOT_OK(
          static_cast<::arrow::BinaryBuilder*>(s.builder)->ReserveData(s.data_bytes));
    }
  }
  return Status::OK();
}

Status TableWriter::FinishRow(const kafka::Record& record) {
  FLOE_RETURN_NOT_OK(AppendKafka(record));
  if (++rows_in_builders_ >= options_.batch_rows) FLOE_RETURN_NOT_OK(FlushBuilders());
  return Status::OK();
}

Status TableWriter::AppendKafka(const kafka::Record& r) {
  auto* kafka = static_cast<::arrow::StructBuilder*>(columns_[kafka_index_]);
  auto* partition = static_cast<::arrow::Int32Builder*>(kafka->field_builder(0));
  auto* offset = static_cast<::arrow::Int64Builder*>(kafka->field_builder(1));
  auto* timestamp = static_cast<::arrow::TimestampBuilder*>(kafka->field_builder(2));
  auto* key = static_cast<::arrow::BinaryBuilder*>(kafka->field_builder(3));
  auto* headers = static_cast<::arrow::ListBuilder*>(kafka->field_builder(4));
  FLOE_RETURN_NOT_OK(kafka->Append());
  FLOE_RETURN_NOT_OK(partition->Append(r.partition));
  FLOE_RETURN_NOT_OK(offset->Append(r.offset));
  if (r.timestamp_ms >= 0) {
    newest_timestamp_ms_ = std::max(newest_timestamp_ms_, r.timestamp_ms);
    FLOE_RETURN_NOT_OK(timestamp->Append(r.timestamp_ms * 1000));
  } else {
    FLOE_RETURN_NOT_OK(timestamp->AppendNull());
  }
  if (r.key != nullptr) {
    FLOE_RETURN_NOT_OK(key->Append(r.key, static_cast<int32_t>(r.key_len)));
  } else {
    FLOE_RETURN_NOT_OK(key->AppendNull());
  }
  size_t n = r.HeaderCount();
  FLOE_RETURN_NOT_OK(headers->Append());
  if (n > 0) {
    auto* entry = static_cast<::arrow::StructBuilder*>(headers->value_builder());
    auto* hkey = static_cast<::arrow::StringBuilder*>(entry->field_builder(0));
    auto* hval = static_cast<::arrow::BinaryBuilder*>(entry->field_builder(1));
    for (size_t i = 0; i < n; ++i) {
      kafka::Header h = r.GetHeader(i);
      FLOE_RETURN_NOT_OK(entry->Append());
      FLOE_RETURN_NOT_OK(hkey->Append(h.key.data(), static_cast<int32_t>(h.key.size())));
      if (h.value != nullptr) {
        FLOE_RETURN_NOT_OK(hval->Append(h.value, static_cast<int32_t>(h.value_len)));
      } else {
        FLOE_RETURN_NOT_OK(hval->AppendNull());
      }
    }
  }
  return Status::OK();
}

Status TableWriter::FlushBuilders() {
  if (rows_in_builders_ == 0) return Status::OK();
  RememberBuilderSizes();
  FLOE_ASSIGN_OR_RAISE(auto batch, builder_->Flush());
  FLOE_RETURN_NOT_OK(ReserveLikeLastBatch());
  if (!file_) {
    std::string name = attempt_ + "-" + std::to_string(file_counter_++) + ".parquet";
    file_uri_ = options_.table_location + "/data/" + name;
    auto opened = options_.io->OpenOutputStream(file_uri_);
    if (!opened.ok()) {
      return WithContext(opened.status(), "creating data file " + file_uri_);
    }
    auto out = std::move(*opened);
    open_uri_ = file_uri_;  // from here on the file exists, whatever happens next
    parquet::DataFileWriter::Options opts;
    opts.max_row_group_bytes =
        std::min<int64_t>(options_.target_file_size_bytes, 32 << 20);
    opts.initial_compression_ratio = compression_ratio_;
    opts.zstd_level = options_.zstd_level;
    opts.dictionary_page_bytes = options_.dictionary_page_bytes;
    // Offsets never repeat within a partition: a dictionary would only cost memory.
    opts.plain_columns = {"_kafka.offset"};
    // Nor, for the columns whose dictionary overflowed lately, would building one that
    // is dropped part way (W1: 9 of 15 columns; ~1% of a drain's instructions).
    probing_ = files_since_probe_ == 0;
    if (!probing_) {
      opts.plain_columns.insert(opts.plain_columns.end(), overflowed_columns_.begin(),
                                overflowed_columns_.end());
    }
    files_since_probe_ = (files_since_probe_ + 1) % kDictionaryProbeFiles;
    max_row_group_bytes_ = opts.max_row_group_bytes;
    auto writer = parquet::DataFileWriter::Open(out, file_uri_, file_schema_, schema_,
                                                schema_json_, opts);
    if (!writer.ok())
      return WithContext(writer.status(), "writing data file " + file_uri_);
    file_ = std::move(*writer);
  }
  if (file_schema_ != arrow_schema_) {
    std::vector<std::shared_ptr<::arrow::ArrayData>> columns;
    for (int i = 0; i < batch->num_columns(); ++i) {
      columns.push_back(Relabel(batch->column_data(i), file_schema_->field(i)->type()));
    }
    batch =
        ::arrow::RecordBatch::Make(file_schema_, batch->num_rows(), std::move(columns));
  }
  Status written = file_->Write(*batch);
  if (!written.ok()) return WithContext(written, "writing data file " + file_uri_);
  rows_in_file_ += rows_in_builders_;
  rows_in_builders_ = 0;
  if (file_->EstimatedBytes() >= options_.target_file_size_bytes)
    FLOE_RETURN_NOT_OK(CloseFile());
  return Status::OK();
}

Status TableWriter::CloseFile() {
  if (!file_) return Status::OK();
  int64_t raw = file_->RawBytesWritten();
  auto closed = file_->Close();
  if (!closed.ok()) return WithContext(closed.status(), "closing data file " + file_uri_);
  auto data_file = std::move(*closed);
  if (probing_) overflowed_columns_.clear();
  for (const std::string& path : file_->dictionary_overflows()) {
    if (std::find(overflowed_columns_.begin(), overflowed_columns_.end(), path) ==
        overflowed_columns_.end()) {
      overflowed_columns_.push_back(path);
    }
  }
  if (raw > 0 && data_file.file_size_in_bytes > 0) {
    compression_ratio_ =
        std::min(1.0, static_cast<double>(data_file.file_size_in_bytes) / raw);
  }
  file_.reset();
  open_uri_.clear();
  rows_in_file_ = 0;
  CrashPoint("after-parquet-write");
  done_.push_back(std::move(data_file));
  return Status::OK();
}

Result<std::vector<iceberg::DataFile>> TableWriter::TakeFiles() {
  FLOE_RETURN_NOT_OK(FlushBuilders());
  FLOE_RETURN_NOT_OK(CloseFile());
  std::vector<iceberg::DataFile> out;
  out.swap(done_);
  return out;
}

std::vector<std::string> TableWriter::Abort() {
  std::vector<std::string> paths;
  file_.reset();                                       // closes the stream
  if (!open_uri_.empty()) paths.push_back(open_uri_);  // a partial file
  open_uri_.clear();
  for (const auto& f : done_) paths.push_back(f.file_path);
  done_.clear();
  return paths;
}

int64_t TableWriter::MemoryBytes() const {
  int64_t bytes = 0;
  for (auto* b : columns_) {
    // Builders do not expose their byte size uniformly; capacity × a width estimate is a
    // sufficient signal for the memory budget.
    bytes += b->capacity() * 16;
  }
  // The Parquet writer holds at most the open row group's pages in memory.
  if (file_) bytes += std::min(file_->EstimatedBytes(), max_row_group_bytes_);
  // What the store's stream holds before it reaches the store (S3: up to one part).
  if (file_)
    bytes += std::min(file_->EstimatedBytes(), options_.io->MaxStreamBufferBytes());
  return bytes;
}

}  // namespace floe::pipeline
