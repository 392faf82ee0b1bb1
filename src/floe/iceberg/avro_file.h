// Avro object container files (Avro 1.11 spec "Object Container Files"), the one place
// Floe encodes and decodes them: Iceberg manifests and manifest lists.
//
// - Writer: takes the writer-schema JSON and header metadata; records are encoded through
//   the low-level Encoder (the manifest writers) or from a generic Datum. Codec "null".
// - Reader: parses the header, exposes metadata, and decodes records into a generic Datum
//   tree driven by the file's own schema. Codecs null, deflate and zstandard (Java and
//   pyiceberg write deflate by default). Every length, count and index read from the file
//   is checked against the bytes that remain before anything is allocated: truncated or
//   hostile input is an InvalidInput error, never a crash or a huge allocation.
//
// Not the hot path (payload decoding is floe/decode's compiled decoders); a reader may
// allocate per value. Writer and Reader are single-threaded objects; AvroSchema is
// immutable and shareable.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "floe/common/status.h"

namespace floe::iceberg::avro {

enum class Kind : uint8_t {
  kNull,
  kBoolean,
  kInt,
  kLong,
  kFloat,
  kDouble,
  kBytes,
  kString,
  kRecord,
  kEnum,
  kArray,
  kMap,
  kUnion,
  kFixed,
};

const char* KindName(Kind kind);

struct Node;

struct Field {
  std::string name;
  const Node* type = nullptr;
  int field_id = -1;  // Iceberg "field-id" property; -1 when absent
};

// One node of a parsed schema. Nodes are owned by their AvroSchema; named types
// referenced again by name point at the same node (so recursive schemas are graphs, not
// trees).
struct Node {
  Kind kind = Kind::kNull;
  std::string name;                   // full name of a record, enum or fixed
  std::string logical_type;           // "logicalType" property, if any
  std::vector<Field> fields;          // record
  std::vector<std::string> symbols;   // enum
  std::vector<const Node*> branches;  // union
  const Node* items = nullptr;        // array items; map values
  int64_t size = 0;                   // fixed
  int element_id = -1;                // array: Iceberg "element-id"
  int key_id = -1;                    // map: Iceberg "key-id"
  int value_id = -1;                  // map: Iceberg "value-id"
  int64_t min_bytes = 0;              // lower bound of the encoded size of one value

  int FieldIndex(std::string_view field_name) const;  // -1 if absent
  int FieldIndexById(int id) const;                   // -1 if absent
};

class AvroSchema {
 public:
  // Parses Avro schema JSON (primitives, records, enums, arrays, maps, unions, fixed,
  // named references with namespaces). Nesting is bounded (64 levels).
  static Result<std::shared_ptr<const AvroSchema>> Parse(std::string_view json);

  const Node& root() const { return *root_; }
  const std::string& json() const { return json_; }

 private:
  friend class SchemaParser;
  std::vector<std::unique_ptr<Node>> nodes_;
  const Node* root_ = nullptr;
  std::string json_;
};

// A decoded value. `kind` is the value's own type: a value read through a union has the
// chosen branch's kind and `branch` set to its index. Records keep their fields in schema
// order in `items`; arrays their elements; maps their values (with `keys` alongside).
struct Datum {
  Kind kind = Kind::kNull;
  int32_t branch = -1;
  bool boolean = false;
  int64_t integer = 0;  // int, long, enum symbol index
  double real = 0;      // float, double
  std::string bytes;    // bytes, string, fixed
  std::vector<Datum> items;
  std::vector<std::string> keys;

  bool is_null() const { return kind == Kind::kNull; }

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

// Avro binary encoding into a growing buffer (spec "Binary Encoding").
class Encoder {
 public:
  void WriteNull() {}
  void WriteBoolean(bool v) { buf_.push_back(v ? 1 : 0); }
  void WriteInt(int32_t v) { WriteLong(v); }
  void WriteLong(int64_t v);  // zig-zag varint
  void WriteFloat(float v);   // IEEE 754 little-endian
  void WriteDouble(double v);
  void WriteBytes(std::string_view v);  // long length + bytes
  void WriteString(std::string_view v) { WriteBytes(v); }
  void WriteFixed(std::string_view v) { buf_.append(v.data(), v.size()); }
  void WriteUnionIndex(int index) { WriteLong(index); }
  void WriteEnum(int index) { WriteLong(index); }
  // Arrays and maps: StartBlock(n) before n items (nothing is written when n == 0), then
  // EndBlocks() once after all blocks.
  void StartBlock(int64_t count) {
    if (count > 0) WriteLong(count);
  }
  void EndBlocks() { buf_.push_back(0); }

  std::string& buffer() { return buf_; }
  size_t size() const { return buf_.size(); }

 private:
  std::string buf_;
};

// Avro binary decoding over a byte range it does not own; every read is bounds-checked.
class Decoder {
 public:
  explicit Decoder(std::string_view data) : data_(data) {}

  Result<int64_t> ReadLong();
  Result<int32_t> ReadInt();
  Result<bool> ReadBoolean();
  Result<float> ReadFloat();
  Result<double> ReadDouble();
  Result<std::string_view> ReadBytes();  // long length + bytes (also strings)
  Result<std::string_view> ReadFixed(int64_t size);

  size_t position() const { return pos_; }
  size_t remaining() const { return data_.size() - pos_; }

 private:
  std::string_view data_;
  size_t pos_ = 0;
};

// Generic value coding against a schema node. Encoding checks the datum's shape against
// the schema (a union picks `branch` when set, else the first branch of the datum's
// kind).
Status EncodeDatum(const Node& schema, const Datum& datum, Encoder* encoder);
// `max_values` bounds the number of values decoded (zero-byte values such as nulls or
// empty records in a hostile array would otherwise be unbounded); it is decremented.
Status DecodeDatum(const Node& schema, Decoder* decoder, Datum* out, int64_t* max_values);

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

  const AvroSchema& schema() const { return *schema_; }

  // Low-level path: encode exactly one record of the writer schema into encoder(), then
  // call EndRecord(). Not validated: the caller's encoding must follow the schema it
  // gave.
  Encoder& encoder() { return block_; }
  void EndRecord();

  // Generic path, validated against the schema.
  Status Append(const Datum& record);

  int64_t records() const { return records_; }

  // Flushes the last block and returns the whole file. The writer is spent afterwards.
  std::string Finish();

 private:
  Writer() = default;
  void FlushBlock();

  std::shared_ptr<const AvroSchema> schema_;
  WriterOptions options_;
  std::string out_;
  std::string sync_;
  Encoder block_;
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

  const AvroSchema& schema() const { return *schema_; }
  std::shared_ptr<const AvroSchema> shared_schema() const { return schema_; }
  const std::map<std::string, std::string>& metadata() const { return metadata_; }
  // nullptr if the key is absent.
  const std::string* FindMetadata(const std::string& key) const;
  const std::string& codec() const { return codec_; }

  // Decodes the next record into `out`; false at the end of the file.
  Result<bool> Next(Datum* out);
  Result<std::vector<Datum>> ReadAll();

 private:
  Reader() = default;
  Status LoadBlock();

  ReaderOptions options_;
  std::string data_;
  size_t pos_ = 0;  // next unread byte of data_ (block boundary)
  std::shared_ptr<const AvroSchema> schema_;
  std::map<std::string, std::string> metadata_;
  std::string codec_ = "null";
  std::string sync_;
  std::string block_storage_;  // decompressed block
  std::string_view block_;
  std::unique_ptr<Decoder> block_decoder_;
  int64_t block_remaining_ = 0;
  int64_t block_value_budget_ = 0;
  int block_index_ = 0;
};

}  // namespace floe::iceberg::avro
