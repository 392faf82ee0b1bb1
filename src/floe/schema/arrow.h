// Iceberg schema → Arrow schema, as the Parquet writer and the decoders' builders need it
// (REFERENCE.md "Parquet for Iceberg"). Lives in its own library, floe_schema_arrow, so
// that floe_schema stays free of Arrow's type headers.
//
//   boolean→bool  int→int32  long→int64  float→float32  double→float64
//   decimal(p,s)→decimal128(p,s)  date→date32  time→time64[us]  timestamp→timestamp[us]
//   timestamptz→timestamp[us, UTC]  string→utf8  uuid→fixed_size_binary(16)
//   fixed[L]→fixed_size_binary(L)  binary→binary  struct→struct
//   list→list<element>  map→map<key_value: struct<key, value>>
//
// Every field, including list elements and map keys/values, carries its Iceberg id as
// the field metadata "PARQUET:field_id"; nullable = !required. Map keys are non-nullable.
#pragma once

#include <arrow/type_fwd.h>

#include <memory>

#include "floe/common/status.h"
#include "floe/iceberg/schema.h"

namespace floe::schema {

inline constexpr char kParquetFieldIdKey[] = "PARQUET:field_id";

// Fails (Status::Invalid) on a field without an id (id <= 0), a decimal precision outside
// 1..38 or a fixed length below 1.
Result<std::shared_ptr<::arrow::DataType>> ToArrowType(const iceberg::Type& type);
Result<std::shared_ptr<::arrow::Field>> ToArrowField(const iceberg::NestedField& field);
Result<std::shared_ptr<::arrow::Schema>> ToArrowSchema(const iceberg::Schema& schema);

}  // namespace floe::schema
