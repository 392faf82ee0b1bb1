#include "floe/parquet/writer.h"

#include <arrow/api.h>
#include <arrow/io/interfaces.h>
#include <arrow/util/byte_size.h>
#include <arrow/util/checked_cast.h>
#include <parquet/arrow/schema.h>
#include <parquet/arrow/writer.h>
#include <parquet/file_writer.h>
#include <parquet/metadata.h>
#include <parquet/properties.h>
#include <parquet/schema.h>
#include <parquet/statistics.h>

#include <algorithm>
#include <bit>
#include <charconv>
#include <cmath>
#include <cstring>
#include <optional>
#include <vector>

#include "floe/common/memory_pool.h"
#include "floe/parquet/bounds.h"

namespace floe::parquet {

namespace {

using iceberg::NestedField;
using iceberg::TypeId;

// Counts the bytes that reach the caller's stream: the exact file size Iceberg needs
// (Trino rejects a wrong file_size_in_bytes) and the "written" part of EstimatedBytes().
// Tell() is the same count, so Parquet offsets are relative to the file start.
class CountingOutputStream : public ::arrow::io::OutputStream {
 public:
  explicit CountingOutputStream(std::shared_ptr<::arrow::io::OutputStream> inner)
      : inner_(std::move(inner)) {}

  ::arrow::Status Close() override {
    return inner_->closed() ? ::arrow::Status::OK() : inner_->Close();
  }
  ::arrow::Status Abort() override {
    return inner_->closed() ? ::arrow::Status::OK() : inner_->Abort();
  }
  bool closed() const override { return inner_->closed(); }
  ::arrow::Result<int64_t> Tell() const override { return bytes_; }
  ::arrow::Status Write(const void* data, int64_t nbytes) override {
    ARROW_RETURN_NOT_OK(inner_->Write(data, nbytes));
    bytes_ += nbytes;
    return ::arrow::Status::OK();
  }
  ::arrow::Status Write(const std::shared_ptr<::arrow::Buffer>& data) override {
    ARROW_RETURN_NOT_OK(inner_->Write(data));
    bytes_ += data->size();
    return ::arrow::Status::OK();
  }
  ::arrow::Status Flush() override { return inner_->Flush(); }

  int64_t bytes_written() const { return bytes_; }

 private:
  std::shared_ptr<::arrow::io::OutputStream> inner_;
  int64_t bytes_ = 0;
};

// One Parquet leaf column, in Parquet column order.
struct Leaf {
  int field_id = -1;
  TypeId type = TypeId::kBoolean;
  std::string name;  // dotted Arrow path, for messages
  // Values inside lists and maps are omitted from every metric but column_sizes: Parquet
  // counts repeated leaf values, Iceberg readers expect per-row semantics there, and a
  // wrong metric is worse than none (REFERENCE.md "Column metrics and bounds").
  bool metrics = false;
  // Top-level column index, then struct child indices (only for metrics leaves).
  std::vector<int> arrow_path;
};

// Exact min/max and NaN count of a float/double leaf, scanned from the Arrow arrays:
// Parquet statistics carry no NaN count and widen a ±0.0 bound to -0.0/+0.0, so the
// writer computes these itself (as Iceberg's Java Parquet writer does for floating-point
// columns).
struct FloatScan {
  int64_t nan_count = 0;
  bool has_bounds = false;
  double min = 0;
  double max = 0;
};

Status SchemaError(const std::string& field, const std::string& what) {
  return InvalidConfig("Parquet writer: Arrow field '" + field + "' " + what +
                       "; the Arrow schema must be derived from the Iceberg schema "
                       "(floe/schema/arrow.h)");
}

std::optional<int> ArrowFieldId(const ::arrow::Field& f) {
  if (!f.HasMetadata()) return std::nullopt;
  auto v = f.metadata()->Get("PARQUET:field_id");
  if (!v.ok()) return std::nullopt;
  int id = 0;
  auto [end, ec] = std::from_chars(v->data(), v->data() + v->size(), id);
  if (ec != std::errc() || end != v->data() + v->size() || id < 0) return std::nullopt;
  return id;
}

bool TypeMatches(const ::arrow::DataType& a, const iceberg::Type& t) {
  using ::arrow::Type;
  auto timestamp_ok = [&](bool with_zone) {
    if (a.id() != Type::TIMESTAMP) return false;
    const auto& ts = ::arrow::internal::checked_cast<const ::arrow::TimestampType&>(a);
    // Nanoseconds do not exist in Iceberg v2; coarser units are coerced to micros.
    return ts.unit() != ::arrow::TimeUnit::NANO && ts.timezone().empty() != with_zone;
  };
  switch (t.id) {
    case TypeId::kBoolean:
      return a.id() == Type::BOOL;
    case TypeId::kInt:
      return a.id() == Type::INT32 || a.id() == Type::INT16 || a.id() == Type::INT8;
    case TypeId::kLong:
      return a.id() == Type::INT64;
    case TypeId::kFloat:
      return a.id() == Type::FLOAT;
    case TypeId::kDouble:
      return a.id() == Type::DOUBLE;
    case TypeId::kDecimal: {
      if (a.id() != Type::DECIMAL128) return false;
      const auto& d = ::arrow::internal::checked_cast<const ::arrow::Decimal128Type&>(a);
      return d.precision() == t.precision && d.scale() == t.scale;
    }
    case TypeId::kDate:
      return a.id() == Type::DATE32;
    case TypeId::kTime:
      return a.id() == Type::TIME64 &&
             ::arrow::internal::checked_cast<const ::arrow::Time64Type&>(a).unit() ==
                 ::arrow::TimeUnit::MICRO;
    case TypeId::kTimestamp:
      return timestamp_ok(false);
    case TypeId::kTimestampTz:
      return timestamp_ok(true);
    case TypeId::kString:
      return a.id() == Type::STRING || a.id() == Type::LARGE_STRING ||
             a.id() == Type::STRING_VIEW;
    case TypeId::kBinary:
      return a.id() == Type::BINARY || a.id() == Type::LARGE_BINARY ||
             a.id() == Type::BINARY_VIEW;
    case TypeId::kUuid:
      return a.id() == Type::FIXED_SIZE_BINARY &&
             ::arrow::internal::checked_cast<const ::arrow::FixedSizeBinaryType&>(a)
                     .byte_width() == 16;
    case TypeId::kFixed:
      return a.id() == Type::FIXED_SIZE_BINARY &&
             ::arrow::internal::checked_cast<const ::arrow::FixedSizeBinaryType&>(a)
                     .byte_width() == t.length;
    case TypeId::kStruct:
      return a.id() == Type::STRUCT;
    case TypeId::kList:
      return a.id() == Type::LIST || a.id() == Type::LARGE_LIST;
    case TypeId::kMap:
      return a.id() == Type::MAP;
  }
  return false;
}

const NestedField* FindById(const std::vector<NestedField>& fields, int id) {
  for (const auto& f : fields) {
    if (f.id == id) return &f;
  }
  return nullptr;
}

// Walks one Arrow field against the Iceberg field it names, appending its leaves in
// Parquet column order (depth first; list element; map key then value).
Status PlanField(const ::arrow::Field& f, const std::vector<NestedField>& candidates,
                 const std::string& parent, bool repeated, std::vector<int> path,
                 std::vector<Leaf>* leaves) {
  std::string name = parent.empty() ? f.name() : parent + "." + f.name();
  auto id = ArrowFieldId(f);
  if (!id) return SchemaError(name, "has no PARQUET:field_id metadata");
  const NestedField* ice = FindById(candidates, *id);
  if (ice == nullptr) {
    return SchemaError(name, "has field id " + std::to_string(*id) +
                                 ", which is not a field at this position of the Iceberg "
                                 "schema");
  }
  if (f.nullable() == ice->required) {
    return SchemaError(name, std::string("is ") +
                                 (f.nullable() ? "nullable" : "non-nullable") +
                                 " but Iceberg field " + std::to_string(*id) + " is " +
                                 (ice->required ? "required" : "optional"));
  }
  if (!TypeMatches(*f.type(), *ice->type)) {
    return SchemaError(
        name, "has Arrow type " + f.type()->ToString() +
                  ", which does not store Iceberg field " + std::to_string(*id) +
                  " of type " +
                  (ice->type->is_primitive() ? iceberg::PrimitiveTypeString(*ice->type)
                                             : std::string("struct/list/map")));
  }
  const auto& type = *f.type();
  switch (ice->type->id) {
    case TypeId::kStruct:
      for (int k = 0; k < type.num_fields(); ++k) {
        auto child_path = path;
        child_path.push_back(k);
        FLOE_RETURN_NOT_OK(PlanField(*type.field(k), ice->type->fields, name, repeated,
                                     std::move(child_path), leaves));
      }
      return Status::OK();
    case TypeId::kList:
      return PlanField(*type.field(0), ice->type->children, name, true, {}, leaves);
    case TypeId::kMap: {
      const auto& map = ::arrow::internal::checked_cast<const ::arrow::MapType&>(type);
      FLOE_RETURN_NOT_OK(
          PlanField(*map.key_field(), {ice->type->key()}, name, true, {}, leaves));
      return PlanField(*map.item_field(), {ice->type->value()}, name, true, {}, leaves);
    }
    default:
      leaves->push_back(Leaf{*id, ice->type->id, name, !repeated, std::move(path)});
      return Status::OK();
  }
}

bool IsFloating(TypeId t) { return t == TypeId::kFloat || t == TypeId::kDouble; }
bool IsStringOrBinary(TypeId t) {
  return t == TypeId::kString || t == TypeId::kBinary || t == TypeId::kFixed;
}

// Iceberg order for doubles: -0.0 before +0.0 (NaN never reaches here).
bool FloatLess(double a, double b) {
  return a < b || (a == b && std::signbit(a) && !std::signbit(b));
}

template <typename ArrayT>
void ScanFloating(const ArrayT& values,
                  const std::vector<const ::arrow::Array*>& ancestors, FloatScan* scan) {
  bool ancestors_valid =
      std::all_of(ancestors.begin(), ancestors.end(),
                  [](const ::arrow::Array* a) { return a->null_count() == 0; });
  const auto* raw = values.raw_values();
  const int64_t n = values.length();
  for (int64_t i = 0; i < n; ++i) {
    if (values.IsNull(i)) continue;
    if (!ancestors_valid) {
      bool parent_null = false;
      for (const auto* a : ancestors) parent_null = parent_null || a->IsNull(i);
      if (parent_null) continue;
    }
    double v = static_cast<double>(raw[i]);
    if (std::isnan(v)) {
      ++scan->nan_count;
      continue;
    }
    if (!scan->has_bounds) {
      scan->min = scan->max = v;
      scan->has_bounds = true;
    } else {
      if (FloatLess(v, scan->min)) scan->min = v;
      if (FloatLess(scan->max, v)) scan->max = v;
    }
  }
}

// Parquet's plain encoding is little-endian; the decimal conversion below reads it in
// place.
static_assert(std::endian::native == std::endian::little, "little-endian hosts only");

// Converts a plain-encoded Parquet statistics value of `descr` to Iceberg's single-value
// encoding for `type`; nullopt if the shape is unexpected (the bound is then omitted).
std::optional<std::string> ToIcebergBound(TypeId type,
                                          const ::parquet::ColumnDescriptor& descr,
                                          const std::string& v) {
  using PT = ::parquet::Type;
  const auto physical = descr.physical_type();
  switch (type) {
    case TypeId::kBoolean:
      if (physical != PT::BOOLEAN || v.empty()) return std::nullopt;
      return EncodeBoolean((static_cast<uint8_t>(v[0]) & 1) != 0);
    case TypeId::kInt:
    case TypeId::kDate:
      if (physical != PT::INT32 || v.size() != 4) return std::nullopt;
      return v;  // plain INT32 is 4 bytes little-endian, as Iceberg's int
    case TypeId::kLong:
    case TypeId::kTime:
    case TypeId::kTimestamp:
    case TypeId::kTimestampTz:
      // Timestamps are coerced to micros at write time (ArrowWriterProperties).
      if (physical != PT::INT64 || v.size() != 8) return std::nullopt;
      return v;
    case TypeId::kDecimal:
      if (physical == PT::INT32 && v.size() == 4) {
        int32_t x;
        std::memcpy(&x, v.data(), 4);
        return EncodeDecimal(x);
      }
      if (physical == PT::INT64 && v.size() == 8) {
        int64_t x;
        std::memcpy(&x, v.data(), 8);
        return EncodeDecimal(x);
      }
      if (physical == PT::FIXED_LEN_BYTE_ARRAY && !v.empty()) {
        return MinimalTwosComplement(v);  // already big-endian two's complement
      }
      return std::nullopt;
    case TypeId::kString:
    case TypeId::kBinary:
      if (physical != PT::BYTE_ARRAY) return std::nullopt;
      return v;
    case TypeId::kFixed:
    case TypeId::kUuid:
      if (physical != PT::FIXED_LEN_BYTE_ARRAY) return std::nullopt;
      return v;
    default:
      return std::nullopt;
  }
}

// Running file-level bound of one leaf across row groups.
struct BoundAcc {
  bool lower_ok = true;
  bool upper_ok = true;
  std::optional<std::string> lower;
  std::optional<std::string> upper;
};

}  // namespace

struct DataFileWriter::Impl {
  std::shared_ptr<CountingOutputStream> sink;
  std::string file_uri;
  std::shared_ptr<::arrow::Schema> arrow_schema;
  Options options;
  std::unique_ptr<::parquet::arrow::FileWriter> writer;
  std::vector<Leaf> leaves;
  std::vector<std::optional<FloatScan>> float_scans;  // per leaf; set for float/double
  std::vector<std::string> dictionary_overflows;      // set by CloseImpl

  int64_t rows = 0;
  int64_t raw_bytes = 0;
  // Open row group: rows and in-memory Arrow bytes handed to Arrow, not yet on the
  // stream.
  int64_t rg_rows = 0;
  double rg_raw = 0;
  // Closed row groups: Arrow bytes in, compressed bytes out (the measured ratio).
  double flushed_raw = 0;
  int64_t flushed_bytes = 0;
  bool closed = false;
  Status broken;  // first Write() failure: the file is unusable afterwards

  ~Impl() {
    if (!closed) {
      // An abandoned file must not look complete: abort the stream (S3 drops the upload),
      // then let Arrow's destructor fail quietly against the closed sink.
      (void)sink->Abort();
      writer.reset();
    }
  }

  double Ratio() const {
    return flushed_raw > 0 ? static_cast<double>(flushed_bytes) / flushed_raw
                           : options.initial_compression_ratio;
  }
  double RowGroupEstimate() const { return rg_raw * Ratio(); }

  Status FlushRowGroup() {
    int64_t before = sink->bytes_written();
    FLOE_RETURN_NOT_OK(writer->NewBufferedRowGroup());
    flushed_bytes += sink->bytes_written() - before;
    flushed_raw += rg_raw;
    rg_raw = 0;
    rg_rows = 0;
    return Status::OK();
  }

  void ScanFloats(const ::arrow::RecordBatch& batch) {
    for (size_t i = 0; i < leaves.size(); ++i) {
      if (!float_scans[i]) continue;
      const auto& path = leaves[i].arrow_path;
      // chain owns every level: StructArray::field() may return a fresh slice (it applies
      // the struct's own offset and length).
      std::vector<std::shared_ptr<::arrow::Array>> chain{batch.column(path[0])};
      for (size_t k = 1; k < path.size(); ++k) {
        chain.push_back(
            ::arrow::internal::checked_cast<const ::arrow::StructArray&>(*chain.back())
                .field(path[k]));
      }
      std::vector<const ::arrow::Array*> ancestors;
      for (size_t k = 0; k + 1 < chain.size(); ++k) ancestors.push_back(chain[k].get());
      const std::shared_ptr<::arrow::Array>& arr = chain.back();
      if (arr->type_id() == ::arrow::Type::FLOAT) {
        ScanFloating(::arrow::internal::checked_cast<const ::arrow::FloatArray&>(*arr),
                     ancestors, &*float_scans[i]);
      } else {
        ScanFloating(::arrow::internal::checked_cast<const ::arrow::DoubleArray&>(*arr),
                     ancestors, &*float_scans[i]);
      }
    }
  }

  Status WriteImpl(const ::arrow::RecordBatch& batch) {
    const int64_t n = batch.num_rows();
    if (n == 0) return Status::OK();
    FLOE_ASSIGN_OR_RAISE(int64_t batch_raw, ::arrow::util::ReferencedBufferSize(batch));
    ScanFloats(batch);
    const double raw_per_row = static_cast<double>(batch_raw) / static_cast<double>(n);
    int64_t offset = 0;
    while (offset < n) {
      if (rg_rows > 0 &&
          (rg_rows >= options.max_row_group_rows ||
           RowGroupEstimate() >= static_cast<double>(options.max_row_group_bytes))) {
        FLOE_RETURN_NOT_OK(FlushRowGroup());
      }
      int64_t take = std::min(n - offset, options.max_row_group_rows - rg_rows);
      double per_row = raw_per_row * Ratio();
      if (per_row > 0) {
        double room =
            (static_cast<double>(options.max_row_group_bytes) - RowGroupEstimate()) /
            per_row;
        take =
            std::min(take, std::max<int64_t>(1, static_cast<int64_t>(std::ceil(room))));
      }
      // The slice never crosses Arrow's own max_row_group_length (set to the same limit),
      // so row-group boundaries are decided here only.
      FLOE_RETURN_NOT_OK(writer->WriteRecordBatch(*batch.Slice(offset, take)));
      rg_rows += take;
      rg_raw += raw_per_row * static_cast<double>(take);
      offset += take;
    }
    rows += n;
    raw_bytes += batch_raw;
    return Status::OK();
  }

  Result<iceberg::DataFile> CloseImpl();
};

namespace {

// The Parquet and Arrow writer properties every data file of Floe is written with.
std::pair<std::shared_ptr<::parquet::WriterProperties>,
          std::shared_ptr<::parquet::ArrowWriterProperties>>
WriterPropertiesFor(const DataFileWriterOptions& options) {
  ::parquet::WriterProperties::Builder props_builder;
  props_builder.memory_pool(common::DataPool())
      ->compression(::parquet::Compression::ZSTD)
      ->compression_level(options.zstd_level)
      ->max_row_group_length(options.max_row_group_rows)
      ->data_pagesize(options.data_page_bytes)
      ->dictionary_pagesize_limit(options.dictionary_page_bytes)
      // Iceberg spec "Parquet": decimal(P<=9) INT32, (P<=18) INT64.
      ->enable_store_decimal_as_integer();
  for (const std::string& path : options.plain_columns)
    props_builder.disable_dictionary(path);
  // Field ids need no option: the schema conversion copies each Arrow field's
  // PARQUET:field_id to the Thrift SchemaElement.field_id. No store_schema(): Iceberg
  // readers use the Parquet schema and the ids, and ARROW:schema would duplicate it.
  auto arrow_props = ::parquet::ArrowWriterProperties::Builder()
                         .coerce_timestamps(::arrow::TimeUnit::MICRO)
                         ->build();
  return {props_builder.build(), std::move(arrow_props)};
}

}  // namespace

Result<std::shared_ptr<::parquet::SchemaDescriptor>> ParquetSchemaOf(
    const ::arrow::Schema& arrow_schema, const DataFileWriterOptions& options) {
  auto [props, arrow_props] = WriterPropertiesFor(options);
  std::shared_ptr<::parquet::SchemaDescriptor> descr;
  FLOE_RETURN_NOT_OK(
      ::parquet::arrow::ToParquetSchema(&arrow_schema, *props, *arrow_props, &descr));
  return descr;
}

DataFileWriter::DataFileWriter(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
DataFileWriter::~DataFileWriter() = default;

Result<std::unique_ptr<DataFileWriter>> DataFileWriter::Open(
    std::shared_ptr<::arrow::io::OutputStream> out, std::string file_uri,
    std::shared_ptr<::arrow::Schema> arrow_schema, const iceberg::Schema& schema,
    std::string iceberg_schema_json, Options options) {
  if (options.max_row_group_rows <= 0 || options.max_row_group_bytes <= 0 ||
      options.data_page_bytes <= 0 || options.dictionary_page_bytes <= 0 ||
      !(options.initial_compression_ratio > 0)) {
    return InvalidConfig(
        "Parquet writer for " + file_uri +
        ": row-group limits, page sizes and compression ratio must be > 0");
  }
  auto impl = std::make_unique<Impl>();
  impl->sink = std::make_shared<CountingOutputStream>(std::move(out));
  impl->file_uri = std::move(file_uri);
  impl->arrow_schema = arrow_schema;
  impl->options = options;

  for (int i = 0; i < arrow_schema->num_fields(); ++i) {
    FLOE_RETURN_NOT_OK(
        PlanField(*arrow_schema->field(i), schema.fields, "", false, {i}, &impl->leaves));
  }

  auto [props, arrow_props] = WriterPropertiesFor(options);

  // The Parquet schema Arrow will write: map every leaf column to its field id from the
  // schema descriptor, the authority for what lands in the file.
  std::shared_ptr<::parquet::SchemaDescriptor> descr;
  FLOE_RETURN_NOT_OK(::parquet::arrow::ToParquetSchema(arrow_schema.get(), *props,
                                                       *arrow_props, &descr));
  if (descr->num_columns() != static_cast<int>(impl->leaves.size())) {
    return MakeError(ErrorKind::kInternal,
                     "Parquet writer for " + impl->file_uri + ": " +
                         std::to_string(descr->num_columns()) + " Parquet columns but " +
                         std::to_string(impl->leaves.size()) + " Arrow leaves");
  }
  for (int i = 0; i < descr->num_columns(); ++i) {
    const auto* col = descr->Column(i);
    auto& leaf = impl->leaves[i];
    if (col->schema_node()->field_id() != leaf.field_id) {
      return MakeError(ErrorKind::kInternal,
                       "Parquet writer for " + impl->file_uri + ": column " +
                           col->path()->ToDotString() + " has field id " +
                           std::to_string(col->schema_node()->field_id()) +
                           ", expected " + std::to_string(leaf.field_id));
    }
    leaf.metrics = col->max_repetition_level() == 0;
  }
  impl->float_scans.resize(impl->leaves.size());
  for (size_t i = 0; i < impl->leaves.size(); ++i) {
    if (impl->leaves[i].metrics && IsFloating(impl->leaves[i].type)) {
      impl->float_scans[i].emplace();
    }
  }

  FLOE_ASSIGN_OR_RAISE(
      impl->writer, ::parquet::arrow::FileWriter::Open(*arrow_schema, common::DataPool(),
                                                       impl->sink, props, arrow_props));
  FLOE_RETURN_NOT_OK(impl->writer->AddKeyValueMetadata(::arrow::key_value_metadata(
      {kIcebergSchemaKey}, {std::move(iceberg_schema_json)})));
  return std::unique_ptr<DataFileWriter>(new DataFileWriter(std::move(impl)));
}

Status DataFileWriter::Write(const ::arrow::RecordBatch& batch) {
  if (impl_->closed) {
    return MakeError(ErrorKind::kInternal,
                     "Parquet writer for " + impl_->file_uri + ": closed");
  }
  FLOE_RETURN_NOT_OK(impl_->broken);
  if (!batch.schema()->Equals(*impl_->arrow_schema, /*check_metadata=*/false)) {
    // Rejected before anything reaches Arrow: the writer stays usable.
    return MakeError(ErrorKind::kInternal,
                     "Parquet writer for " + impl_->file_uri + ": batch schema " +
                         batch.schema()->ToString() + " differs from the file's schema");
  }
  Status st = impl_->WriteImpl(batch);
  if (!st.ok()) impl_->broken = st;
  return st;
}

int64_t DataFileWriter::EstimatedBytes() const {
  return impl_->sink->bytes_written() + std::llround(impl_->RowGroupEstimate());
}

int64_t DataFileWriter::num_rows() const { return impl_->rows; }
int64_t DataFileWriter::RawBytesWritten() const { return impl_->raw_bytes; }

const std::vector<std::string>& DataFileWriter::dictionary_overflows() const {
  return impl_->dictionary_overflows;
}

Result<iceberg::DataFile> DataFileWriter::Close() {
  if (impl_->closed) {
    return MakeError(ErrorKind::kInternal,
                     "Parquet writer for " + impl_->file_uri + ": closed");
  }
  FLOE_RETURN_NOT_OK(impl_->broken);
  impl_->closed = true;
  try {
    return impl_->CloseImpl();
  } catch (const std::exception& e) {  // ::parquet::ParquetException from metadata access
    return MakeError(ErrorKind::kInternal,
                     "Parquet writer for " + impl_->file_uri + ": " + e.what());
  }
}

namespace {

// Whether some data page of the chunk is plain-encoded (its dictionary page is always
// PLAIN): a chunk that began with a dictionary has fallen back.
bool HasPlainDataPage(const ::parquet::ColumnChunkMetaData& cc) {
  for (const auto& st : cc.encoding_stats()) {
    if ((st.page_type == ::parquet::PageType::DATA_PAGE ||
         st.page_type == ::parquet::PageType::DATA_PAGE_V2) &&
        st.encoding == ::parquet::Encoding::PLAIN) {
      return true;
    }
  }
  return false;
}

}  // namespace

Result<iceberg::DataFile> DataFileWriter::Impl::CloseImpl() {
  Status st = writer->Close();
  if (!st.ok()) {
    (void)sink->Abort();
    return st;
  }
  FLOE_RETURN_NOT_OK(sink->Close());
  std::shared_ptr<::parquet::FileMetaData> md = writer->metadata();

  iceberg::DataFile df;
  df.file_path = file_uri;
  df.file_format = "PARQUET";
  df.record_count = md->num_rows();
  df.file_size_in_bytes = sink->bytes_written();

  const ::parquet::SchemaDescriptor* descr = md->schema();
  if (descr->num_columns() != static_cast<int>(leaves.size())) {
    return MakeError(ErrorKind::kInternal,
                     "Parquet writer for " + file_uri + ": footer column count changed");
  }
  std::vector<int64_t> nulls(leaves.size(), 0);
  std::vector<bool> nulls_ok(leaves.size(), true);
  std::vector<BoundAcc> bounds(leaves.size());

  for (int r = 0; r < md->num_row_groups(); ++r) {
    auto rg = md->RowGroup(r);
    if (rg->num_columns() > 0) {
      // A row group starts at its first column chunk's first page (dictionary if any).
      auto first = rg->ColumnChunk(0);
      int64_t start = first->data_page_offset();
      if (first->has_dictionary_page())
        start = std::min(start, first->dictionary_page_offset());
      df.split_offsets.push_back(start);
    }
    for (int c = 0; c < rg->num_columns(); ++c) {
      const Leaf& leaf = leaves[c];
      const ::parquet::ColumnDescriptor& col = *descr->Column(c);
      if (col.schema_node()->field_id() != leaf.field_id) {
        return MakeError(
            ErrorKind::kInternal,
            "Parquet writer for " + file_uri + ": footer field ids differ from the plan");
      }
      auto cc = rg->ColumnChunk(c);
      df.column_sizes[leaf.field_id] += cc->total_compressed_size();
      if (cc->has_dictionary_page() && HasPlainDataPage(*cc)) {
        std::string path = col.path()->ToDotString();
        auto& out = dictionary_overflows;
        if (std::find(out.begin(), out.end(), path) == out.end())
          out.push_back(std::move(path));
      }
      if (!leaf.metrics) continue;
      df.value_counts[leaf.field_id] += cc->num_values();

      std::shared_ptr<::parquet::EncodedStatistics> stats =
          cc->is_stats_set() ? cc->encoded_statistics() : nullptr;
      if (stats == nullptr || !stats->has_null_count) {
        nulls_ok[c] = false;
        bounds[c].lower_ok = bounds[c].upper_ok = false;
        continue;
      }
      nulls[c] += stats->null_count;
      if (IsFloating(leaf.type)) continue;  // bounds come from the Arrow scan
      const bool has_values = cc->num_values() > stats->null_count;
      auto merge = [&](bool has, std::optional<bool> exact, const std::string& raw,
                       bool* ok, std::optional<std::string>* acc, int sign) {
        if (!has || (exact.has_value() && !*exact)) {
          // Absent (all null, or dropped by Arrow above max_statistics_size) or inexact.
          if (has_values) *ok = false;
          return;
        }
        auto v = ToIcebergBound(leaf.type, col, raw);
        if (!v) {
          *ok = false;
          return;
        }
        if (!*acc || sign * CompareBounds(leaf.type, *v, **acc) < 0) *acc = std::move(*v);
      };
      merge(stats->has_min, stats->is_min_value_exact, stats->min(), &bounds[c].lower_ok,
            &bounds[c].lower, +1);
      merge(stats->has_max, stats->is_max_value_exact, stats->max(), &bounds[c].upper_ok,
            &bounds[c].upper, -1);
    }
  }

  for (size_t c = 0; c < leaves.size(); ++c) {
    const Leaf& leaf = leaves[c];
    if (!leaf.metrics) continue;
    const int id = leaf.field_id;
    if (nulls_ok[c]) df.null_value_counts[id] = nulls[c];
    if (float_scans[c]) {
      const FloatScan& s = *float_scans[c];
      df.nan_value_counts[id] = s.nan_count;
      if (s.has_bounds) {
        bool is_float = leaf.type == TypeId::kFloat;
        df.lower_bounds[id] =
            is_float ? EncodeFloat(static_cast<float>(s.min)) : EncodeDouble(s.min);
        df.upper_bounds[id] =
            is_float ? EncodeFloat(static_cast<float>(s.max)) : EncodeDouble(s.max);
      }
      continue;
    }
    BoundAcc& b = bounds[c];
    if (b.lower_ok && b.lower) {
      if (leaf.type == TypeId::kString) {
        df.lower_bounds[id] = TruncateStringLower(*b.lower);
      } else if (IsStringOrBinary(leaf.type)) {
        df.lower_bounds[id] = TruncateBinaryLower(*b.lower);
      } else {
        df.lower_bounds[id] = *b.lower;
      }
    }
    if (b.upper_ok && b.upper) {
      std::optional<std::string> u = *b.upper;
      if (leaf.type == TypeId::kString) {
        u = TruncateStringUpper(*b.upper);
      } else if (IsStringOrBinary(leaf.type)) {
        u = TruncateBinaryUpper(*b.upper);
      }
      if (u) df.upper_bounds[id] = std::move(*u);
    }
  }
  return df;
}

}  // namespace floe::parquet
