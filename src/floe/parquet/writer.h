// DataFileWriter: writes one Iceberg data file (Parquet, zstd) from Arrow record batches
// through Arrow C++'s `parquet::arrow` writer, and on Close() returns the Iceberg
// `data_file` metrics for the manifest (ARCHITECTURE.md §1 "Parquet", REFERENCE.md
// "Column metrics and bounds", "Parquet for Iceberg").
//
// Ownership and threading: a writer owns its output stream and is used by one thread at a
// time (the table writer that feeds it); distinct writers are independent.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "floe/common/status.h"
#include "floe/iceberg/data_file.h"
#include "floe/iceberg/schema.h"

namespace arrow {
class RecordBatch;
class Schema;
namespace io {
class OutputStream;
}  // namespace io
}  // namespace arrow
namespace parquet {
class SchemaDescriptor;
}  // namespace parquet

namespace floe::parquet {

struct DataFileWriterOptions {
  int zstd_level = 3;
  // A row group is closed (written to the stream) once its estimated compressed size
  // reaches max_row_group_bytes or it holds max_row_group_rows rows. Arrow's writer keeps
  // the open row group's compressed pages in memory, so this also bounds the writer's
  // memory beyond the caller's Arrow batches.
  int64_t max_row_group_bytes = int64_t{128} << 20;
  int64_t max_row_group_rows = int64_t{1} << 20;
  int64_t data_page_bytes = int64_t{1} << 20;
  // A column chunk is dictionary-encoded until its dictionary reaches this size, then
  // falls back to plain encoding. The encoder's hash table is about 6× the dictionary
  // (48 bytes per int64 entry at its load factor), held until the row group closes.
  int64_t dictionary_page_bytes = int64_t{1} << 20;
  // Dotted column paths ("_kafka.offset") written without a dictionary: columns whose
  // values rarely repeat within a row group.
  std::vector<std::string> plain_columns;
  // Compressed / in-memory Arrow size ratio assumed for buffered rows until this writer
  // has closed a row group and measured the real ratio. 1.0 never underestimates the file
  // (zstd and dictionaries only shrink); a caller may pass the ratio its previous file
  // achieved (file_size_in_bytes / RawBytesWritten()) to size files closer to a target.
  double initial_compression_ratio = 1.0;
};

class DataFileWriter {
 public:
  using Options = DataFileWriterOptions;

  // `arrow_schema`: every field, including list elements and map keys/values, carries
  // `PARQUET:field_id` naming a field of `schema`, with a matching type and nullability
  // (nullable == !required). `iceberg_schema_json` is stored verbatim in the footer under
  // `iceberg.schema`. `file_uri` becomes DataFile::file_path. The writer takes `out` and
  // closes it in Close(). Errors: kInvalidConfig for a schema mismatch, else Arrow's.
  static Result<std::unique_ptr<DataFileWriter>> Open(
      std::shared_ptr<::arrow::io::OutputStream> out, std::string file_uri,
      std::shared_ptr<::arrow::Schema> arrow_schema, const iceberg::Schema& schema,
      std::string iceberg_schema_json, Options options = {});

  ~DataFileWriter();
  DataFileWriter(const DataFileWriter&) = delete;
  DataFileWriter& operator=(const DataFileWriter&) = delete;

  // Appends rows; the batch's schema must equal the writer's (field metadata ignored).
  Status Write(const ::arrow::RecordBatch& batch);

  // Bytes already written to the stream plus an estimate of the buffered row group's
  // compressed size (see Options::initial_compression_ratio). For the flush policy.
  int64_t EstimatedBytes() const;
  // Rows accepted so far.
  int64_t num_rows() const;
  // In-memory Arrow size of all rows accepted so far (for compression-ratio hints).
  int64_t RawBytesWritten() const;

  // Writes the footer, closes the stream and returns the data file with its metrics.
  // The writer is unusable afterwards.
  Result<iceberg::DataFile> Close();

  // After a successful Close(): the dotted paths of the columns whose dictionary outgrew
  // Options::dictionary_page_bytes in some row group (they went on in plain pages), in
  // column order. A caller writing more files of the same data can list them in
  // Options::plain_columns and save building a dictionary that is dropped part way.
  const std::vector<std::string>& dictionary_overflows() const;

 private:
  struct Impl;
  explicit DataFileWriter(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// The Parquet schema a DataFileWriter with `options` writes for `arrow_schema` (its
// field ids included): what a file must have for its row groups to be copied into one of
// Floe's files unchanged (row_group_copy.h).
Result<std::shared_ptr<::parquet::SchemaDescriptor>> ParquetSchemaOf(
    const ::arrow::Schema& arrow_schema, const DataFileWriterOptions& options);

// Footer key-value key holding the Iceberg schema JSON (ARCHITECTURE.md §3).
inline constexpr const char* kIcebergSchemaKey = "iceberg.schema";

}  // namespace floe::parquet
