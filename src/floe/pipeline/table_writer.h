// TableWriter: one columnar buffer per table (ARCHITECTURE.md §1). Decoded values go
// straight into Arrow builders; full batches go into the open Parquet file; a file is
// closed when it reaches the target size or when the committer takes the files.
//
// Threading: owned and used by the pipeline thread only.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "floe/common/status.h"
#include "floe/iceberg/data_file.h"
#include "floe/iceberg/schema.h"

namespace arrow {
class ArrayBuilder;
class RecordBatchBuilder;
class Schema;
}  // namespace arrow

namespace floe::parquet {
class DataFileWriter;
}
namespace floe::kafka {
struct Record;
}
namespace floe::storage {
class FileIO;
}

namespace floe::pipeline {

// What a table's writer learned from the data it wrote, for the next writer of the same
// table (a schema change replaces the writer): without it, each new writer would learn
// it again from its first file (measured: ~0.8% of the instructions of a W1 drain with a
// schema change every 500,000 records went into dictionaries built and dropped again).
struct WriterHints {
  // Parquet column paths whose dictionary overflowed in a recent file, and the files
  // written since every column last tried a dictionary.
  std::vector<std::string> overflowed_columns;
  int files_since_probe = 0;
  // Compressed / in-memory ratio of the last file (1: none written yet).
  double compression_ratio = 1.0;
  // Values and data bytes per builder at the last flush, by builder path ("a.b.element").
  struct BuilderSize {
    std::string path;
    int64_t length = 0;
    int64_t data_bytes = 0;
  };
  std::vector<BuilderSize> builder_sizes;
};

struct TableWriterOptions {
  std::string table_location;  // <warehouse>/<namespace>/<table>-<uuid>
  storage::FileIO* io =
      nullptr;  // data files are written through it (outlives the writer)
  int64_t target_file_size_bytes = 128 << 20;
  // Parquet data files (parquet::DataFileWriterOptions)
  int zstd_level = 1;
  int64_t dictionary_page_bytes = 256 << 10;
  int64_t batch_rows = 16384;  // rows buffered in builders before they go to the file
  // Field id → Parquet column name for fields whose column is not named like the field
  // (renamed fields keep their first name: Delta's column mapping reads by it;
  // schema/rename_hints.h). Builders and decoders use the field names; only the file
  // sees these.
  std::map<int, std::string> column_names;
  // From the table's previous writer, if any (hints(): a hint that no longer fits the
  // schema is ignored).
  WriterHints hints;
};

class TableWriter {
 public:
  static Result<std::unique_ptr<TableWriter>> Make(TableWriterOptions options,
                                                   iceberg::Schema schema);
  ~TableWriter();

  // Appends one row: `fill(columns)` appends exactly one value to every top-level value
  // column (and nothing when it fails), then the row gets its _kafka metadata.
  template <class Fill>
  Status AppendRow(Fill&& fill, const kafka::Record& record) {
    FLOE_RETURN_NOT_OK(fill(columns_.data()));
    return FinishRow(record);
  }
  // Moves buffered rows into the open Parquet file (opening one if needed).
  Status FlushBuilders();
  // Closes the open file and returns every file completed since the last call.
  Result<std::vector<iceberg::DataFile>> TakeFiles();

  // After a failure the writer must not be used again: lists every file it wrote that
  // was not taken (the open one, partial, included) for the caller to delete.
  std::vector<std::string> Abort();

  const iceberg::Schema& schema() const { return schema_; }
  // What this writer learned, for the table's next writer (TableWriterOptions::hints).
  WriterHints hints() const;
  int64_t buffered_rows() const { return rows_in_builders_ + rows_in_file_; }
  // The newest Kafka timestamp of any row appended so far (-1: none had one).
  int64_t newest_timestamp_ms() const { return newest_timestamp_ms_; }
  // Approximate memory held: builder contents plus the open file's buffered row group.
  int64_t MemoryBytes() const;

 private:
  TableWriter(TableWriterOptions options, iceberg::Schema schema);
  Status Init();
  Status AppendKafka(const kafka::Record& record);
  Status FinishRow(const kafka::Record& record);
  Status CloseFile();
  Status TakeHints();
  void RememberBuilderSizes();
  Status ReserveLikeLastBatch();

  TableWriterOptions options_;
  iceberg::Schema schema_;
  std::string schema_json_;
  std::shared_ptr<::arrow::Schema> arrow_schema_;
  // The Parquet file's schema: arrow_schema_ with options_.column_names (the same
  // object when there are none).
  std::shared_ptr<::arrow::Schema> file_schema_;
  std::unique_ptr<::arrow::RecordBatchBuilder> builder_;
  std::vector<::arrow::ArrayBuilder*> columns_;
  int kafka_index_ = -1;  // the _kafka column among columns_
  struct BuilderSize {
    ::arrow::ArrayBuilder* builder;
    std::string path;    // the field names from the column down, '.'-joined
    bool binary;         // a BinaryBuilder (or StringBuilder): data_bytes applies
    int64_t length;      // values at the last flush
    int64_t data_bytes;  // value bytes at the last flush
  };
  std::vector<BuilderSize> all_builders_;
  std::unique_ptr<parquet::DataFileWriter> file_;
  std::string file_uri_;
  std::string open_uri_;  // the file being written (not closed yet), empty if none
  std::string attempt_ = "";
  int file_counter_ = 0;
  int64_t rows_in_builders_ = 0;
  int64_t newest_timestamp_ms_ = -1;
  int64_t rows_in_file_ = 0;
  int64_t max_row_group_bytes_ = 0;
  // Compressed / in-memory ratio of the previous file, so the next file's size estimate
  // is right from its first row group.
  double compression_ratio_ = 1.0;
  // Columns whose dictionary overflowed in a recent file: the next files write them
  // plain from the start. Every kDictionaryProbeFiles-th file tries a dictionary on every
  // column again, so a column whose values begin to repeat gets it back.
  std::vector<std::string> overflowed_columns_;
  int files_since_probe_ = 0;
  bool probing_ = true;  // the open file tries a dictionary on every column
  std::vector<iceberg::DataFile> done_;
};

}  // namespace floe::pipeline
