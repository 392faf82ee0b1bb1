// For tests and benchmarks of floe/parquet: an Arrow field carrying its Iceberg field id
// the way DataFileWriter expects it (`PARQUET:field_id`).
#pragma once

#include <arrow/type.h>
#include <arrow/util/key_value_metadata.h>

#include <memory>
#include <string>

namespace floe::parquet::testing {

inline std::shared_ptr<::arrow::Field> F(const std::string& name,
                                         std::shared_ptr<::arrow::DataType> type,
                                         bool nullable, int id) {
  return ::arrow::field(
      name, std::move(type), nullable,
      ::arrow::key_value_metadata({"PARQUET:field_id"}, {std::to_string(id)}));
}

}  // namespace floe::parquet::testing
