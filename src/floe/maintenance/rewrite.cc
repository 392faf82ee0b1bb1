#include "floe/maintenance/rewrite.h"

#include <arrow/array.h>
#include <arrow/array/concatenate.h>
#include <arrow/builder.h>
#include <arrow/compute/api_vector.h>
#include <arrow/compute/initialize.h>
#include <arrow/datum.h>
#include <arrow/record_batch.h>
#include <arrow/table.h>
#include <arrow/type.h>
#include <arrow/util/byte_size.h>
#include <arrow/util/key_value_metadata.h>
#include <parquet/arrow/reader.h>
#include <parquet/file_reader.h>
#include <parquet/metadata.h>

#include <cmath>
#include <limits>
#include <mutex>
#include <set>

#include "floe/common/util.h"
#include "floe/iceberg/schema_json.h"
#include "floe/parquet/row_group_copy.h"
#include "floe/parquet/writer.h"
#include "floe/schema/arrow.h"
#include "floe/schema/rename_hints.h"
#include "floe/schema/table_schema.h"
#include "floe/storage/file_io.h"
#include "floe/table/table_properties.h"

namespace floe::maintenance {
namespace {

using ::arrow::Array;
using ::arrow::ArrayData;
using ::arrow::DataType;
using ::arrow::Field;

int FieldId(const Field& f) {
  if (!f.metadata()) return -1;
  auto v = f.metadata()->Get(schema::kParquetFieldIdKey);
  if (!v.ok()) return -1;
  try {
    return std::stoi(*v);
  } catch (...) {
    return -1;
  }
}

// The child of `fields` whose field id is `id`, or -1.
int ChildById(const ::arrow::FieldVector& fields, int id) {
  for (size_t i = 0; i < fields.size(); ++i) {
    if (FieldId(*fields[i]) == id) return static_cast<int>(i);
  }
  return -1;
}

// The path of child indices to the field whose id is `id`, through structs; empty when
// there is none.
std::vector<int> PathById(const ::arrow::FieldVector& fields, int id) {
  for (size_t i = 0; i < fields.size(); ++i) {
    if (FieldId(*fields[i]) == id) return {static_cast<int>(i)};
    if (fields[i]->type()->id() != ::arrow::Type::STRUCT) continue;
    std::vector<int> below = PathById(fields[i]->type()->fields(), id);
    if (!below.empty()) {
      below.insert(below.begin(), static_cast<int>(i));
      return below;
    }
  }
  return {};
}

// A float or double sort key as Iceberg orders it (spec "Sorting": -Infinity < values <
// Infinity < NaN): Arrow places NaN beside the nulls, so the key becomes the value with
// NaN as +Infinity, then whether it was NaN. (Iceberg puts a negative NaN first; Floe
// treats every NaN alike.)
template <typename ArrowType>
Status NanAboveInfinity(const Array& column, std::shared_ptr<Array>* value,
                        std::shared_ptr<Array>* is_nan) {
  using C = typename ArrowType::c_type;
  const auto& in = static_cast<const ::arrow::NumericArray<ArrowType>&>(column);
  ::arrow::NumericBuilder<ArrowType> values;
  ::arrow::BooleanBuilder nans;
  FLOE_RETURN_NOT_OK(values.Reserve(in.length()));
  FLOE_RETURN_NOT_OK(nans.Reserve(in.length()));
  for (int64_t i = 0; i < in.length(); ++i) {
    if (in.IsNull(i)) {
      values.UnsafeAppendNull();
      nans.UnsafeAppend(false);
      continue;
    }
    const C v = in.Value(i);
    const bool nan = std::isnan(v);
    values.UnsafeAppend(nan ? std::numeric_limits<C>::infinity() : v);
    nans.UnsafeAppend(nan);
  }
  FLOE_RETURN_NOT_OK(values.Finish(value));
  return nans.Finish(is_nan);
}

// Arrow's compute functions are registered once per process (Arrow 21 and later keep
// them in libarrow_compute).
Status InitCompute() {
  static std::once_flag once;
  static ::arrow::Status status;
  std::call_once(once, [] { status = ::arrow::compute::Initialize(); });
  return status;
}

template <typename From, typename To>
Result<std::shared_ptr<Array>> Widen(const Array& array,
                                     const std::shared_ptr<DataType>& type) {
  const auto& in = static_cast<const ::arrow::NumericArray<From>&>(array);
  typename ::arrow::TypeTraits<To>::BuilderType builder(type,
                                                        ::arrow::default_memory_pool());
  FLOE_RETURN_NOT_OK(builder.Reserve(in.length()));
  for (int64_t i = 0; i < in.length(); ++i) {
    if (in.IsNull(i)) {
      builder.UnsafeAppendNull();
    } else {
      builder.UnsafeAppend(static_cast<typename To::c_type>(in.Value(i)));
    }
  }
  std::shared_ptr<Array> out;
  FLOE_RETURN_NOT_OK(builder.Finish(&out));
  return out;
}

// `array` (offset 0) as `target`'s type: children matched by field id.
Result<std::shared_ptr<Array>> Project(const std::shared_ptr<Array>& in,
                                       const Field& target, const std::string& what);

Result<std::shared_ptr<Array>> ProjectChild(const std::shared_ptr<Array>& in,
                                            const Field& target,
                                            const std::string& what) {
  std::shared_ptr<Array> array = in;
  if (array->offset() != 0) {
    FLOE_ASSIGN_OR_RAISE(array, ::arrow::Concatenate({array}));
  }
  return Project(array, target, what + "." + target.name());
}

Result<std::shared_ptr<Array>> Project(const std::shared_ptr<Array>& array,
                                       const Field& target, const std::string& what) {
  const auto& type = target.type();
  const auto& from = array->type();
  if (from->Equals(*type, /*check_metadata=*/false) && type->num_fields() == 0) {
    return array;
  }
  switch (type->id()) {
    case ::arrow::Type::STRUCT: {
      if (from->id() != ::arrow::Type::STRUCT) break;
      const auto& in = static_cast<const ::arrow::StructArray&>(*array);
      std::vector<std::shared_ptr<Array>> children;
      for (const auto& child : type->fields()) {
        const int i = ChildById(from->fields(), FieldId(*child));
        if (i < 0) {
          FLOE_ASSIGN_OR_RAISE(auto nulls,
                               ::arrow::MakeArrayOfNull(child->type(), in.length()));
          children.push_back(std::move(nulls));
        } else {
          FLOE_ASSIGN_OR_RAISE(auto c, ProjectChild(in.field(i), *child, what));
          children.push_back(std::move(c));
        }
      }
      return std::make_shared<::arrow::StructArray>(
          type, in.length(), children,
          in.null_bitmap_data() ? in.data()->buffers[0] : nullptr, in.null_count());
    }
    case ::arrow::Type::LIST: {
      if (from->id() != ::arrow::Type::LIST) break;
      const auto& in = static_cast<const ::arrow::ListArray&>(*array);
      const auto& element = *static_cast<const ::arrow::ListType&>(*type).value_field();
      FLOE_ASSIGN_OR_RAISE(auto values, ProjectChild(in.values(), element, what));
      return std::make_shared<::arrow::ListArray>(type, in.length(),
                                                  in.data()->buffers[1], values,
                                                  in.data()->buffers[0], in.null_count());
    }
    case ::arrow::Type::MAP: {
      if (from->id() != ::arrow::Type::MAP) break;
      const auto& in = static_cast<const ::arrow::MapArray&>(*array);
      const auto& map_type = static_cast<const ::arrow::MapType&>(*type);
      // Through the entries struct, so that its own offset is honoured.
      const auto& entries = static_cast<const ::arrow::StructArray&>(*in.values());
      FLOE_ASSIGN_OR_RAISE(auto keys,
                           ProjectChild(entries.field(0), *map_type.key_field(), what));
      FLOE_ASSIGN_OR_RAISE(auto items,
                           ProjectChild(entries.field(1), *map_type.item_field(), what));
      return std::make_shared<::arrow::MapArray>(type, in.length(), in.data()->buffers[1],
                                                 keys, items, in.data()->buffers[0],
                                                 in.null_count());
    }
    case ::arrow::Type::INT64:
      if (from->id() == ::arrow::Type::INT32) {
        return Widen<::arrow::Int32Type, ::arrow::Int64Type>(*array, type);
      }
      break;
    case ::arrow::Type::DOUBLE:
      if (from->id() == ::arrow::Type::FLOAT) {
        return Widen<::arrow::FloatType, ::arrow::DoubleType>(*array, type);
      }
      break;
    case ::arrow::Type::DECIMAL128: {
      if (from->id() != ::arrow::Type::DECIMAL128) break;
      const auto& a = static_cast<const ::arrow::Decimal128Type&>(*from);
      const auto& b = static_cast<const ::arrow::Decimal128Type&>(*type);
      if (a.scale() != b.scale() || a.precision() > b.precision()) break;
      // The same 16-byte values under a wider precision.
      auto data = array->data()->Copy();
      data->type = type;
      return ::arrow::MakeArray(data);
    }
    case ::arrow::Type::TIMESTAMP: {
      if (from->id() != ::arrow::Type::TIMESTAMP) break;
      // The same unit, the time zone spelled otherwise ("+00:00" / "UTC"): the same
      // values. Another unit is not relabelled (ns as us would be off by 1000).
      const auto& a = static_cast<const ::arrow::TimestampType&>(*from);
      const auto& b = static_cast<const ::arrow::TimestampType&>(*type);
      if (a.unit() != b.unit() || a.timezone().empty() != b.timezone().empty()) break;
      auto data = array->data()->Copy();
      data->type = type;
      return ::arrow::MakeArray(data);
    }
    default:
      if (from->Equals(*type, /*check_metadata=*/false)) return array;
  }
  return InvalidInput(what + ": a column of type " + from->ToString() +
                      " cannot be rewritten as " + type->ToString());
}

// Re-encoded row groups close near this compressed size. Arrow's writer holds the open
// row group's pages in memory (and the dictionaries' hash tables), so this bounds most of
// a rewrite's memory.
constexpr int64_t kRowGroupBytes = int64_t{16} << 20;
constexpr int64_t kReadBatchRows = 16 * 1024;

class Rewriter {
 public:
  Rewriter(storage::FileIO& io, const iceberg::Schema& schema, std::string location,
           const RewriteOptions& options)
      : io_(io), schema_(schema), location_(std::move(location)), options_(options) {}

  ~Rewriter() {
    if (!done_) Abandon();
  }

  Status Prepare() {
    iceberg::Schema named = schema_;
    named.fields =
        schema::WithColumnNames(std::move(named.fields), options_.column_names);
    FLOE_ASSIGN_OR_RAISE(file_schema_, schema::ToArrowSchema(named));
    schema_json_ = iceberg::SchemaToJsonString(schema_);
    for (const auto& field : options_.sort_order.fields) {
      SortKey key;
      key.path = PathById(file_schema_->fields(), field.source_id);
      if (key.path.empty() || field.transform != "identity") {
        return InvalidInput("sort order " + std::to_string(options_.sort_order.order_id) +
                            ": field " + std::to_string(field.source_id) + " (" +
                            field.transform +
                            ") is not an identity sort on a column outside lists and "
                            "maps of the current schema; rewrites cannot sort by it");
      }
      key.descending = field.direction == "desc";
      key.nulls_first = field.null_order == "nulls-first";
      sort_keys_.push_back(std::move(key));
    }
    if (!sort_keys_.empty()) FLOE_RETURN_NOT_OK(InitCompute());
    FLOE_ASSIGN_OR_RAISE(copy_schema_,
                         parquet::ParquetSchemaOf(*file_schema_, WriterOptions()));
    return Status::OK();
  }

  Status Add(const iceberg::DataFile& input) {
    if (options_.cancel != nullptr && options_.cancel->load()) {
      return Status::Cancelled("rewrite stopped (floe is stopping)");
    }
    const std::string& uri = input.file_path;
    FLOE_ASSIGN_OR_RAISE(auto file, io_.OpenInputFile(uri));
    FLOE_ASSIGN_OR_RAISE(auto footer, ReadFooter(file, uri));
    result_.bytes_read += input.file_size_in_bytes;
    if (Copyable(input, *footer)) return Copy(*file, *footer, input);
    std::unique_ptr<::parquet::ParquetFileReader> parquet_reader;
    try {
      parquet_reader = ::parquet::ParquetFileReader::Open(
          file, ::parquet::default_reader_properties(), footer);
    } catch (const std::exception& e) {  // ::parquet::ParquetException
      return InvalidInput("reading data file " + uri + ": " + e.what());
    }
    // Batches of kReadBatchRows: the decoded rows in memory at once stay a few MiB.
    ::parquet::ArrowReaderProperties read_props;
    read_props.set_batch_size(kReadBatchRows);
    auto reader = ::parquet::arrow::FileReader::Make(
        ::arrow::default_memory_pool(), std::move(parquet_reader), read_props);
    if (!reader.ok()) return WithContext(reader.status(), "reading data file " + uri);
    auto batches = (*reader)->GetRecordBatchReader();
    if (!batches.ok()) return WithContext(batches.status(), "reading data file " + uri);
    for (;;) {
      std::shared_ptr<::arrow::RecordBatch> batch;
      Status st = (*batches)->ReadNext(&batch);
      if (!st.ok()) return WithContext(st, "reading data file " + uri);
      if (!batch) break;
      if (options_.cancel != nullptr && options_.cancel->load()) {
        return Status::Cancelled("rewrite stopped (floe is stopping)");
      }
      FLOE_RETURN_NOT_OK(Write(*batch, uri));
    }
    return Status::OK();
  }

  Result<RewriteResult> Finish() {
    FLOE_RETURN_NOT_OK(FlushSorted());
    FLOE_RETURN_NOT_OK(CloseFile());
    FLOE_RETURN_NOT_OK(FoldSmallEncodedFiles());
    FLOE_RETURN_NOT_OK(CloseCopy());
    done_ = true;
    return std::move(result_);
  }

 private:
  static Result<std::shared_ptr<::parquet::FileMetaData>> ReadFooter(
      const std::shared_ptr<::arrow::io::RandomAccessFile>& file,
      const std::string& uri) {
    try {
      return ::parquet::ReadMetaData(file);
    } catch (const std::exception& e) {  // ::parquet::ParquetException
      return InvalidInput("reading data file " + uri + ": " + e.what());
    }
  }

  // A re-encoded file whose row groups are below copy_row_group_bytes would be decoded
  // again by every later compaction (it stays small when little needed re-encoding, such
  // as a topic's first, partial commit): it joins the open copied file instead, its row
  // groups copied, and is deleted (nothing references it yet).
  Status FoldSmallEncodedFiles() {
    if (!copier_) return Status::OK();
    for (auto it = result_.files.begin(); it != result_.files.end();) {
      const iceberg::DataFile& f = *it;
      if (!encoded_.count(f.file_path) || f.record_count == 0 ||
          copier_->bytes_written() + f.file_size_in_bytes > options_.target_file_bytes) {
        ++it;
        continue;
      }
      FLOE_ASSIGN_OR_RAISE(auto file, io_.OpenInputFile(f.file_path));
      FLOE_ASSIGN_OR_RAISE(auto footer, ReadFooter(file, f.file_path));
      const bool small_row_groups =
          footer->num_row_groups() > 0 &&
          f.file_size_in_bytes / footer->num_row_groups() < options_.copy_row_group_bytes;
      if (!small_row_groups ||
          !parquet::CopyRefusal(*copy_schema_, *footer, f.file_size_in_bytes).empty()) {
        ++it;
        continue;
      }
      FLOE_RETURN_NOT_OK(copier_->Append(*file, *footer, f, f.file_path));
      (void)io_.Delete(f.file_path);
      it = result_.files.erase(it);
    }
    return Status::OK();
  }

  // Whether `input`'s row groups go into the new files as they are: it needs no sorting,
  // filtering or conversion (its Parquet schema is the current one) and its row groups
  // are large enough to keep.
  bool Copyable(const iceberg::DataFile& input, const ::parquet::FileMetaData& footer) {
    if (options_.copy_row_group_bytes <= 0 || !sort_keys_.empty() ||
        options_.keep_from_timestamp_us || footer.num_row_groups() == 0) {
      return false;
    }
    if (input.file_size_in_bytes / footer.num_row_groups() <
        options_.copy_row_group_bytes)
      return false;
    return parquet::CopyRefusal(*copy_schema_, footer, input.file_size_in_bytes).empty();
  }

  Status Copy(::arrow::io::RandomAccessFile& file, const ::parquet::FileMetaData& footer,
              const iceberg::DataFile& input) {
    if (copier_ && copier_->num_rows() > 0 &&
        copier_->bytes_written() + input.file_size_in_bytes >
            options_.target_file_bytes) {
      FLOE_RETURN_NOT_OK(CloseCopy());
    }
    if (!copier_) {
      copy_uri_ = NextUri();
      FLOE_ASSIGN_OR_RAISE(auto out, io_.OpenOutputStream(copy_uri_));
      written_.push_back(copy_uri_);
      FLOE_ASSIGN_OR_RAISE(
          copier_, parquet::RowGroupCopier::Open(out, copy_uri_, *file_schema_, schema_,
                                                 schema_json_, WriterOptions()));
    }
    FLOE_RETURN_NOT_OK(copier_->Append(file, footer, input, input.file_path));
    result_.rows += input.record_count;
    ++result_.files_copied;
    return Status::OK();
  }

  Status CloseCopy() {
    if (!copier_) return Status::OK();
    auto closed = copier_->Close();
    copier_.reset();
    if (!closed.ok())
      return WithContext(closed.status(), "closing data file " + copy_uri_);
    result_.files.push_back(std::move(*closed));
    return Status::OK();
  }

  std::string NextUri() {
    return location_ + "/data/" + options_.name_prefix + "-" +
           std::to_string(next_file_++) + ".parquet";
  }

  parquet::DataFileWriter::Options WriterOptions() const {
    parquet::DataFileWriter::Options opts;
    opts.zstd_level = options_.zstd_level;
    opts.max_row_group_bytes = std::min(options_.target_file_bytes, kRowGroupBytes);
    opts.plain_columns = {"_kafka.offset"};
    return opts;
  }

  Status Write(const ::arrow::RecordBatch& batch, const std::string& uri) {
    // Matching is by field id: a file without them (added by another tool) would come
    // out as nulls.
    for (const auto& field : batch.schema()->fields()) {
      if (FieldId(*field) < 0) {
        return InvalidInput(uri + ": column " + field->name() +
                            " has no Iceberg field id; the file is not rewritten");
      }
    }
    std::vector<std::shared_ptr<Array>> columns;
    for (const auto& field : file_schema_->fields()) {
      const int i = ChildById(batch.schema()->fields(), FieldId(*field));
      if (i < 0) {
        FLOE_ASSIGN_OR_RAISE(auto nulls,
                             ::arrow::MakeArrayOfNull(field->type(), batch.num_rows()));
        columns.push_back(std::move(nulls));
      } else {
        FLOE_ASSIGN_OR_RAISE(auto c, ProjectChild(batch.column(i), *field, uri));
        columns.push_back(std::move(c));
      }
    }
    auto out = ::arrow::RecordBatch::Make(file_schema_, batch.num_rows(), columns);
    if (!options_.keep_from_timestamp_us) return Emit(out);
    // Row retention: the runs of rows at or past the cutoff, put together again into
    // arrays of their own (the writer reads arrays from offset 0).
    FLOE_ASSIGN_OR_RAISE(auto ts, KafkaTimestamps(*out, uri));
    const int64_t cutoff = *options_.keep_from_timestamp_us;
    auto keep = [&](int64_t i) { return ts->IsNull(i) || ts->Value(i) >= cutoff; };
    const int64_t n = out->num_rows();
    std::vector<std::pair<int64_t, int64_t>> runs;  // offset, length
    int64_t kept = 0;
    for (int64_t i = 0; i < n;) {
      int64_t j = i;
      while (j < n && keep(j) == keep(i)) ++j;
      if (keep(i)) {
        runs.emplace_back(i, j - i);
        kept += j - i;
      }
      i = j;
    }
    result_.rows_dropped += n - kept;
    if (kept == n) return Emit(out);
    if (kept == 0) return Status::OK();
    std::vector<std::shared_ptr<Array>> kept_columns;
    for (int c = 0; c < out->num_columns(); ++c) {
      std::vector<std::shared_ptr<Array>> pieces;
      for (const auto& [offset, length] : runs) {
        pieces.push_back(out->column(c)->Slice(offset, length));
      }
      auto joined = ::arrow::Concatenate(pieces);
      if (!joined.ok()) return WithContext(joined.status(), "filtering rows of " + uri);
      kept_columns.push_back(std::move(*joined));
    }
    return Emit(::arrow::RecordBatch::Make(file_schema_, kept, kept_columns));
  }

  // Rows in the current schema: written, or kept for the next sorted run.
  Status Emit(const std::shared_ptr<::arrow::RecordBatch>& rows) {
    if (sort_keys_.empty()) return WriteRows(*rows);
    buffered_bytes_ += ::arrow::util::TotalBufferSize(*rows);
    buffered_.push_back(rows);
    const int64_t limit =
        std::min(options_.sort_buffer_bytes, options_.target_file_bytes);
    return buffered_bytes_ >= limit ? FlushSorted() : Status::OK();
  }

  // The buffered rows, sorted, as one file.
  Status FlushSorted() {
    if (buffered_.empty()) return Status::OK();
    auto table = ::arrow::Table::FromRecordBatches(file_schema_, buffered_);
    if (!table.ok()) return WithContext(table.status(), "sorting rows");
    buffered_.clear();
    buffered_bytes_ = 0;
    auto combined = (*table)->CombineChunksToBatch();
    if (!combined.ok()) return WithContext(combined.status(), "sorting rows");
    table->reset();
    const auto& rows = *combined;
    ::arrow::FieldVector key_fields;
    ::arrow::ArrayVector key_columns;
    std::vector<::arrow::compute::SortKey> keys;
    for (const SortKey& key : sort_keys_) {
      std::shared_ptr<Array> column = rows->column(key.path[0]);
      for (size_t i = 1; i < key.path.size(); ++i) {
        // Flattened: a null struct makes its fields null too.
        auto field = static_cast<const ::arrow::StructArray&>(*column).GetFlattenedField(
            key.path[i]);
        if (!field.ok()) return WithContext(field.status(), "sorting rows");
        column = std::move(*field);
      }
      std::vector<std::shared_ptr<Array>> parts = {column};
      const auto type_id = column->type_id();
      if (type_id == ::arrow::Type::DOUBLE || type_id == ::arrow::Type::FLOAT) {
        parts.resize(2);
        Status st =
            type_id == ::arrow::Type::DOUBLE
                ? NanAboveInfinity<::arrow::DoubleType>(*column, &parts[0], &parts[1])
                : NanAboveInfinity<::arrow::FloatType>(*column, &parts[0], &parts[1]);
        FLOE_RETURN_NOT_OK(st);
      }
      for (auto& part : parts) {
        const int index = static_cast<int>(key_columns.size());
        key_fields.push_back(::arrow::field("k" + std::to_string(index), part->type()));
        key_columns.push_back(std::move(part));
        keys.emplace_back(::arrow::FieldRef(index),
                          key.descending ? ::arrow::compute::SortOrder::Descending
                                         : ::arrow::compute::SortOrder::Ascending,
                          key.nulls_first ? ::arrow::compute::NullPlacement::AtStart
                                          : ::arrow::compute::NullPlacement::AtEnd);
      }
    }
    auto key_batch = ::arrow::RecordBatch::Make(::arrow::schema(key_fields),
                                                rows->num_rows(), key_columns);
    auto indices = ::arrow::compute::SortIndices(::arrow::Datum(key_batch),
                                                 ::arrow::compute::SortOptions(keys));
    if (!indices.ok()) return WithContext(indices.status(), "sorting rows");
    auto sorted = ::arrow::compute::Take(::arrow::Datum(rows), ::arrow::Datum(*indices));
    if (!sorted.ok()) return WithContext(sorted.status(), "sorting rows");
    FLOE_RETURN_NOT_OK(WriteRows(*sorted->record_batch()));
    return CloseFile();  // one sorted run per file
  }

  // `_kafka.timestamp` of a batch in the current schema.
  Result<std::shared_ptr<::arrow::TimestampArray>> KafkaTimestamps(
      const ::arrow::RecordBatch& batch, const std::string& uri) {
    auto kafka = std::dynamic_pointer_cast<::arrow::StructArray>(
        batch.GetColumnByName(schema::kKafkaColumn));
    auto ts = kafka ? std::dynamic_pointer_cast<::arrow::TimestampArray>(
                          kafka->GetFieldByName("timestamp"))
                    : nullptr;
    if (!ts) {
      return InvalidInput(uri +
                          ": the table has no _kafka.timestamp column; row retention " +
                          "cannot judge its rows' age");
    }
    return ts;
  }

  Status WriteRows(const ::arrow::RecordBatch& rows) {
    FLOE_RETURN_NOT_OK(Open());
    Status st = writer_->Write(rows);
    if (!st.ok()) return WithContext(st, "writing data file " + open_uri_);
    result_.rows += rows.num_rows();
    if (writer_->EstimatedBytes() >= options_.target_file_bytes) {
      FLOE_RETURN_NOT_OK(CloseFile());
    }
    return Status::OK();
  }

  Status Open() {
    if (writer_) return Status::OK();
    open_uri_ = NextUri();
    FLOE_ASSIGN_OR_RAISE(auto out, io_.OpenOutputStream(open_uri_));
    written_.push_back(open_uri_);
    FLOE_ASSIGN_OR_RAISE(
        writer_, parquet::DataFileWriter::Open(out, open_uri_, file_schema_, schema_,
                                               schema_json_, WriterOptions()));
    return Status::OK();
  }

  Status CloseFile() {
    if (!writer_) return Status::OK();
    auto closed = writer_->Close();
    writer_.reset();
    if (!closed.ok())
      return WithContext(closed.status(), "closing data file " + open_uri_);
    if (!sort_keys_.empty()) closed->sort_order_id = options_.sort_order.order_id;
    encoded_.insert(open_uri_);
    result_.files.push_back(std::move(*closed));
    return Status::OK();
  }

  void Abandon() {
    writer_.reset();
    copier_.reset();
    for (const auto& uri : written_) (void)io_.Delete(uri);
  }

  storage::FileIO& io_;
  const iceberg::Schema& schema_;
  std::string location_;
  const RewriteOptions& options_;
  std::shared_ptr<::arrow::Schema> file_schema_;
  std::string schema_json_;
  struct SortKey {
    std::vector<int> path;  // child indices from the top-level column down
    bool descending = false;
    bool nulls_first = true;
  };
  std::vector<SortKey> sort_keys_;
  std::vector<std::shared_ptr<::arrow::RecordBatch>> buffered_;  // the next sorted run
  int64_t buffered_bytes_ = 0;
  std::unique_ptr<parquet::DataFileWriter> writer_;
  std::string open_uri_;
  std::set<std::string> encoded_;  // the files written by writer_, closed
  std::shared_ptr<::parquet::SchemaDescriptor> copy_schema_;  // a copyable file's
  std::unique_ptr<parquet::RowGroupCopier> copier_;
  std::string copy_uri_;
  int next_file_ = 0;
  std::vector<std::string> written_;
  RewriteResult result_;
  bool done_ = false;
};

}  // namespace

Result<RewriteOptions> RewriteOptionsFor(const iceberg::TableMetadata& md,
                                         const std::string& prefix,
                                         const std::atomic<bool>* cancel) {
  RewriteOptions options;
  options.target_file_bytes = table::TargetFileSizeOf(md);
  options.zstd_level = table::ZstdLevelOf(md);
  FLOE_ASSIGN_OR_RAISE(options.column_names, schema::ParseColumnNames(md.properties));
  options.name_prefix = prefix + "-" + NewUuid();
  options.cancel = cancel;
  return options;
}

Result<RewriteResult> RewriteFiles(storage::FileIO& io,
                                   const std::vector<iceberg::DataFile>& inputs,
                                   const iceberg::Schema& schema,
                                   const std::string& table_location,
                                   const RewriteOptions& options) {
  Rewriter rewriter(io, schema, table_location, options);
  FLOE_RETURN_NOT_OK(rewriter.Prepare());
  for (const auto& input : inputs) FLOE_RETURN_NOT_OK(rewriter.Add(input));
  return rewriter.Finish();
}

Result<RewriteResult> CheckedRewrite(storage::FileIO& io,
                                     const std::vector<iceberg::DataFile>& inputs,
                                     const iceberg::Schema& schema,
                                     const std::string& table_location,
                                     const RewriteOptions& options,
                                     const std::string& what, int64_t max_duration_ms) {
  const int64_t started_ms = NowMs();
  FLOE_ASSIGN_OR_RAISE(auto result,
                       RewriteFiles(io, inputs, schema, table_location, options));
  auto discard = [&] {
    for (const auto& f : result.files) (void)io.Delete(f.file_path);
    result.files.clear();
  };
  int64_t expected = 0;
  for (const auto& f : inputs) expected += f.record_count;
  if (result.rows + result.rows_dropped != expected) {
    discard();
    return Internal(what + " read " + std::to_string(result.rows + result.rows_dropped) +
                    " rows from files whose manifests say " + std::to_string(expected) +
                    "; nothing committed");
  }
  if (NowMs() - started_ms > max_duration_ms) {
    discard();
    result.gave_up = "the rewrite took longer than half of maintenance.orphan.min.age.ms";
  }
  return result;
}

}  // namespace floe::maintenance
