// Decoders for topics whose bytes are not decoded with a schema (issue 5, ARCHITECTURE.md
// §3):
// - RawValueDecoder: `value.format: binary` — the whole value into a `value` binary
// column
//   (null for a tombstone);
// - KeyColumnAppender: `key.format: string` — the raw key into a top-level `key` string
//   column (null when the record has no key); the key must be valid UTF-8.
// Both follow the AvroDecoder conventions (columns are the top-level builders of
// schema::ToArrowSchema(table); nothing is appended when a record is invalid) and
// allocate nothing per record.
//
// Threading: stateless after Make; one pipeline thread uses them.
#pragma once

#include <arrow/type_fwd.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "floe/common/status.h"
#include "floe/iceberg/schema.h"

namespace floe::decode {

inline constexpr char kValueColumn[] = "value";
inline constexpr char kKeyColumn[] = "key";

class RawValueDecoder {
 public:
  // `table` must have an optional binary top-level column `value`. Columns other writers
  // added (anything but `value`, `key` and `_kafka`) get nulls; they must be optional.
  static Result<RawValueDecoder> Make(const iceberg::Schema& table);
  // `data` null: a tombstone (null value).
  Status Decode(const uint8_t* data, size_t size, ::arrow::ArrayBuilder* const* columns);

 private:
  RawValueDecoder(int column, std::vector<int> null_columns)
      : column_(column), null_columns_(std::move(null_columns)) {}
  int column_;
  std::vector<int> null_columns_;
};

class KeyColumnAppender {
 public:
  // `table` must have an optional string top-level column `key`.
  static Result<KeyColumnAppender> Make(const iceberg::Schema& table);
  // InvalidRecord when the key is not valid UTF-8 (call before appending anything).
  Status Validate(const uint8_t* key, size_t size) const;
  // Appends the (validated) key, or null when `key` is null.
  Status Append(const uint8_t* key, size_t size, ::arrow::ArrayBuilder* const* columns);
  int column() const { return column_; }

 private:
  explicit KeyColumnAppender(int column) : column_(column) {}
  int column_;
};

}  // namespace floe::decode
