#include "floe/decode/raw_decoder.h"

#include <arrow/builder.h>
#include <arrow/util/utf8.h>

#include <limits>
#include <string>

namespace floe::decode {
namespace {

Result<int> FindColumn(const iceberg::Schema& table, const char* name,
                       iceberg::TypeId type) {
  for (size_t i = 0; i < table.fields.size(); ++i) {
    const auto& f = table.fields[i];
    if (f.name != name) continue;
    if (f.type->id != type || f.required) {
      return Status::Invalid("table column '", name, "' must be an optional ",
                             type == iceberg::TypeId::kString ? "string" : "binary");
    }
    return static_cast<int>(i);
  }
  return Status::Invalid("table has no '", name, "' column");
}

Status CheckLength(size_t size, const char* what) {
  // Arrow's binary builders hold at most 2 GiB per value; Kafka caps records far below.
  if (size > static_cast<size_t>(std::numeric_limits<int32_t>::max())) {
    return InvalidRecord(std::string(what) + " of " + std::to_string(size) +
                         " bytes is larger than a binary column can hold");
  }
  return Status::OK();
}

}  // namespace

Result<RawValueDecoder> RawValueDecoder::Make(const iceberg::Schema& table) {
  FLOE_ASSIGN_OR_RAISE(int column,
                       FindColumn(table, kValueColumn, iceberg::TypeId::kBinary));
  std::vector<int> null_columns;
  for (size_t i = 0; i < table.fields.size(); ++i) {
    const auto& f = table.fields[i];
    if (f.name == kValueColumn || f.name == kKeyColumn || f.name == "_kafka") continue;
    if (f.required) {
      return Status::Invalid("table column '", f.name,
                             "' is required but value.format: binary fills only `value`");
    }
    null_columns.push_back(static_cast<int>(i));
  }
  return RawValueDecoder(column, std::move(null_columns));
}

Status RawValueDecoder::Decode(const uint8_t* data, size_t size,
                               ::arrow::ArrayBuilder* const* columns) {
  if (data != nullptr) FLOE_RETURN_NOT_OK(CheckLength(size, "value"));
  for (int c : null_columns_) FLOE_RETURN_NOT_OK(columns[c]->AppendNull());
  auto* b = static_cast<::arrow::BinaryBuilder*>(columns[column_]);
  if (data == nullptr) return b->AppendNull();
  return b->Append(data, static_cast<int32_t>(size));
}

Result<KeyColumnAppender> KeyColumnAppender::Make(const iceberg::Schema& table) {
  ::arrow::util::InitializeUTF8();  // ValidateUTF8's lookup table (idempotent)
  FLOE_ASSIGN_OR_RAISE(int column,
                       FindColumn(table, kKeyColumn, iceberg::TypeId::kString));
  return KeyColumnAppender(column);
}

Status KeyColumnAppender::Validate(const uint8_t* key, size_t size) const {
  if (key == nullptr) return Status::OK();
  FLOE_RETURN_NOT_OK(CheckLength(size, "key"));
  if (!::arrow::util::ValidateUTF8(key, static_cast<int64_t>(size))) {
    return InvalidRecord("key is not valid UTF-8 (key.format: string)");
  }
  return Status::OK();
}

Status KeyColumnAppender::Append(const uint8_t* key, size_t size,
                                 ::arrow::ArrayBuilder* const* columns) {
  auto* b = static_cast<::arrow::StringBuilder*>(columns[column_]);
  if (key == nullptr) return b->AppendNull();
  return b->Append(key, static_cast<int32_t>(size));
}

}  // namespace floe::decode
