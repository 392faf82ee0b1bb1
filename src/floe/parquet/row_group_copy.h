// RowGroupCopier: one Iceberg data file assembled from whole row groups of other Parquet
// files, copied byte for byte (pages stay encoded and compressed) under a footer of its
// own. Compaction uses it for files whose row groups are already large: it joins them
// without decoding or recompressing a value, at the cost of reading and writing bytes.
//
// A source qualifies when Arrow's writer wrote it (as Floe does) and its Parquet schema
// is exactly the one a DataFileWriter would write for the same Arrow schema (names,
// types, repetition, field ids: ParquetSchemaOf); CopyRefusal lists the rest. The new
// footer keeps each column chunk's statistics, size statistics and encodings, with
// offsets moved to the chunk's new place, and its page index: the column index as it was,
// the offset index with every page location moved, both after the row groups as Arrow's
// writer places them (a chunk whose index cannot be read goes without). Bloom filters are
// not carried (Floe writes none). The Iceberg metrics come from the sources' own
// (manifest) metrics: counts add up, a lower bound is the least and an upper bound the
// greatest of the sources' bounds, and a metric some source lacks is left out, except a
// bound of a column that source holds only nulls (or NaN) in.
//
// Ownership and threading: a copier owns its output stream and is used by one thread.
#pragma once

#include <parquet/index_location.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "floe/common/status.h"
#include "floe/iceberg/data_file.h"
#include "floe/iceberg/schema.h"
#include "floe/parquet/writer.h"

namespace arrow {
class Schema;
namespace io {
class OutputStream;
class RandomAccessFile;
}  // namespace io
}  // namespace arrow
namespace parquet {
class ColumnChunkMetaData;
class FileMetaData;
class FileMetaDataBuilder;
class OffsetIndexBuilder;
class SchemaDescriptor;
}  // namespace parquet

namespace floe::parquet {

// Empty when the row groups of the file whose footer is `footer` and whose size is
// `file_size` can be copied into a file whose Parquet schema is `target`
// (ParquetSchemaOf); otherwise why not: another schema, another writer than Arrow's, not
// zstd, encrypted, v2 data pages, no page encoding statistics, column chunks not back to
// back inside the file.
std::string CopyRefusal(const ::parquet::SchemaDescriptor& target,
                        const ::parquet::FileMetaData& footer, int64_t file_size);

class RowGroupCopier {
 public:
  // As DataFileWriter::Open: `arrow_schema` carries the field ids of `schema`; the file's
  // footer stores `iceberg_schema_json`; `options` decide the expected Parquet schema.
  static Result<std::unique_ptr<RowGroupCopier>> Open(
      std::shared_ptr<::arrow::io::OutputStream> out, std::string file_uri,
      const ::arrow::Schema& arrow_schema, const iceberg::Schema& schema,
      std::string iceberg_schema_json, const DataFileWriterOptions& options);

  ~RowGroupCopier();  // an unclosed file's stream is aborted
  RowGroupCopier(const RowGroupCopier&) = delete;
  RowGroupCopier& operator=(const RowGroupCopier&) = delete;

  // CopyRefusal for this file's schema.
  std::string Refusal(const ::parquet::FileMetaData& footer, int64_t file_size) const;

  // Appends every row group of `in` (footer `footer`, manifest metrics `metrics`, named
  // `uri` in errors). Reads and writes 4 MiB at a time through one buffer. Errors: a
  // refused or malformed source (kInvalidInput), I/O (Arrow's); the file is unusable
  // after one.
  Status Append(::arrow::io::RandomAccessFile& in, const ::parquet::FileMetaData& footer,
                const iceberg::DataFile& metrics, const std::string& uri);

  int64_t bytes_written() const { return position_; }
  int64_t num_rows() const { return rows_; }

  // Writes the footer, closes the stream and returns the data file with its metrics.
  Result<iceberg::DataFile> Close();

 private:
  RowGroupCopier() = default;
  Status AppendRowGroups(::arrow::io::RandomAccessFile& in,
                         const ::parquet::FileMetaData& footer,
                         const iceberg::DataFile& metrics, const std::string& uri);
  Status CopyBytes(::arrow::io::RandomAccessFile& in, int64_t from, int64_t length,
                   const std::string& uri);
  void MergeMetrics(const iceberg::DataFile& in);
  // Keeps the page index of a chunk copied from [start, end) of `in`, moved by `shift`.
  void CarryPageIndex(::arrow::io::RandomAccessFile& in,
                      const ::parquet::ColumnChunkMetaData& cc, int64_t start,
                      int64_t end, int64_t shift, int column);
  Status WritePageIndexes();  // after the row groups, before the footer

  std::shared_ptr<::arrow::io::OutputStream> out_;
  std::string file_uri_;
  iceberg::Schema schema_;
  std::shared_ptr<::parquet::SchemaDescriptor> descr_;
  std::unique_ptr<::parquet::FileMetaDataBuilder> builder_;
  std::string schema_json_;
  int64_t position_ = 0;  // bytes written to out_
  int64_t rows_ = 0;
  int32_t row_groups_ = 0;
  struct PageIndex {
    ::parquet::ColumnChunkId chunk;
    std::string column_index;  // serialized, as the source had it
    std::unique_ptr<::parquet::OffsetIndexBuilder> offset_index;
  };
  std::vector<PageIndex> page_indexes_;
  std::vector<uint8_t> buffer_;  // CopyBytes' chunk, allocated once
  std::vector<int64_t> split_offsets_;
  iceberg::DataFile metrics_;  // the merged metrics of the sources so far
  bool merged_any_ = false;
  bool closed_ = false;
  Status broken_;
};

}  // namespace floe::parquet
