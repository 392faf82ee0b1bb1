// Avro object container files (Avro 1.11 spec "Object Container Files"), the one place
// Floe encodes and decodes them: Iceberg manifests and manifest lists. The schema model,
// its parser and the binary encoding are floe/avro's; this adds generic values (Datum),
// the container format and its codecs.
//
// - Writer: takes the writer-schema JSON and header metadata; records are encoded through
//   the low-level avro::Encoder (the manifest writers) or from a generic Datum. Codec
//   "null".
// - Reader: parses the header, exposes metadata, and decodes records into a generic Datum
//   tree driven by the file's own schema, which may use anything the Avro specification
//   allows (avro::ParseOptions::AnyValid). Codecs null, deflate and zstandard (Java and
//   pyiceberg write deflate by default). Every length, count and index read from the file
//   is checked against the bytes that remain before anything is allocated: truncated or
//   hostile input is an InvalidInput error, never a crash or a huge allocation.
//
// Not the hot path (payload decoding is floe/decode's compiled decoders); a reader may
// allocate per value. Writer and Reader are single-threaded objects.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "floe/avro/encoding.h"
#include "floe/avro/schema.h"
#include "floe/common/status.h"

namespace floe::iceberg::avro_file {

// A decoded value. `kind` is the value's own type: a value read through a union has the
// chosen branch's kind and `branch` set to its index. Records keep their fields in schema
// order in `items`; arrays their elements; maps their values (with `keys` alongside).
struct Datum {
  avro::Type kind = avro::Type::kNull;
  int32_t branch = -1;
  bool boolean = false;
  int64_t integer = 0;  // int, long, enum symbol index
  double real = 0;      // float, double
  std::string bytes;    // bytes, string, fixed
  std::vector<Datum> items;
  std::vector<std::string> keys;

  bool is_null() const { return kind == avro::Type::kNull; }

  static Datum Null() { return Datum{}; }
  static Datum Boolean(bool v);
  static Datum Int(int32_t v);
  static Datum Long(int64_t v);
  static Datum Float(float v);
  static Datum Double(double v);
  static Datum Bytes(std::string v);
  static Datum String(std::string v);
  static Datum Fixed(std::string v);
  static Datum Enum(int index);
  static Datum Record(std::vector<Datum> fields);
  static Datum Array(std::vector<Datum> items);
  static Datum Map(std::vector<std::pair<std::string, Datum>> entries);
};

// Generic value coding against a schema node. Encoding checks the datum's shape against
// the schema (a union picks `branch` when set, else the first branch of the datum's
// kind).
Status EncodeDatum(const avro::Node& schema, const Datum& datum, avro::Encoder* encoder);
// `max_values` bounds the number of values decoded (zero-byte values such as nulls or
// empty records in a hostile array would otherwise be unbounded); it is decremented.
Status DecodeDatum(const avro::Node& schema, avro::Decoder* decoder, Datum* out,
                   int64_t* max_values);

struct WriterOptions {
  // A data block is flushed once it holds at least this many bytes.
  size_t block_bytes = 64 * 1024;
};

class Writer {
 public:
  // `metadata` is written after avro.schema and avro.codec, in the given order.
  static Result<std::unique_ptr<Writer>> Make(
      std::string_view schema_json,
      const std::vector<std::pair<std::string, std::string>>& metadata,
      WriterOptions options = {});

  const avro::Schema& schema() const { return schema_; }

  // Low-level path: encode exactly one record of the writer schema into encoder(), then
  // call EndRecord(). Not validated: the caller's encoding must follow the schema it
  // gave.
  avro::Encoder& encoder() { return block_; }
  void EndRecord();

  // Generic path, validated against the schema.
  Status Append(const Datum& record);

  int64_t records() const { return records_; }

  // Flushes the last block and returns the whole file. The writer is spent afterwards.
  std::string Finish();

 private:
  explicit Writer(avro::Schema schema) : schema_(std::move(schema)) {}
  void FlushBlock();

  avro::Schema schema_;
  WriterOptions options_;
  std::string out_;
  std::string sync_;
  avro::Encoder block_;
  int64_t block_records_ = 0;
  int64_t records_ = 0;
};

struct ReaderOptions {
  size_t max_block_bytes = 64 << 20;  // after decompression
  int64_t max_records = 1 << 24;      // ReadAll bound
};

class Reader {
 public:
  // Parses the header (magic, metadata, sync marker) of a whole file held in memory.
  static Result<std::unique_ptr<Reader>> Open(std::string data,
                                              ReaderOptions options = {});

  const avro::Schema& schema() const { return schema_; }
  const std::map<std::string, std::string>& metadata() const { return metadata_; }
  // nullptr if the key is absent.
  const std::string* FindMetadata(const std::string& key) const;
  const std::string& codec() const { return codec_; }

  // Decodes the next record into `out`; false at the end of the file.
  Result<bool> Next(Datum* out);
  Result<std::vector<Datum>> ReadAll();

 private:
  Reader(std::string data, avro::Schema schema, ReaderOptions options)
      : options_(options), data_(std::move(data)), schema_(std::move(schema)) {}
  Status LoadBlock();

  ReaderOptions options_;
  std::string data_;
  size_t pos_ = 0;  // next unread byte of data_ (block boundary)
  avro::Schema schema_;
  std::map<std::string, std::string> metadata_;
  std::string codec_ = "null";
  std::string sync_;
  std::string block_storage_;  // decompressed block
  std::string_view block_;
  std::unique_ptr<avro::Decoder> block_decoder_;
  int64_t block_remaining_ = 0;
  int64_t block_value_budget_ = 0;
  int block_index_ = 0;
};

}  // namespace floe::iceberg::avro_file
