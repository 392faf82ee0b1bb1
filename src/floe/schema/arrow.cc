#include "floe/schema/arrow.h"

#include <arrow/type.h>
#include <arrow/util/key_value_metadata.h>

#include <string>
#include <vector>

namespace floe::schema {

using iceberg::TypeId;

namespace {

Result<std::shared_ptr<::arrow::Field>> ToArrowFieldNamed(
    const iceberg::NestedField& field, const std::string& name) {
  if (field.id <= 0) {
    return Status::Invalid("Iceberg field '", name, "' has no field id (", field.id, ")");
  }
  if (!field.type) return Status::Invalid("Iceberg field '", name, "' has no type");
  FLOE_ASSIGN_OR_RAISE(auto type, ToArrowType(*field.type));
  return ::arrow::field(
      name, std::move(type), !field.required,
      ::arrow::key_value_metadata({kParquetFieldIdKey}, {std::to_string(field.id)}));
}

}  // namespace

Result<std::shared_ptr<::arrow::DataType>> ToArrowType(const iceberg::Type& type) {
  switch (type.id) {
    case TypeId::kBoolean:
      return ::arrow::boolean();
    case TypeId::kInt:
      return ::arrow::int32();
    case TypeId::kLong:
      return ::arrow::int64();
    case TypeId::kFloat:
      return ::arrow::float32();
    case TypeId::kDouble:
      return ::arrow::float64();
    case TypeId::kDecimal:
      if (type.precision < 1 || type.precision > 38 || type.scale < 0 ||
          type.scale > type.precision) {
        return Status::Invalid("Iceberg decimal(", type.precision, ",", type.scale,
                               ") has no Arrow decimal128 equivalent");
      }
      return ::arrow::decimal128(type.precision, type.scale);
    case TypeId::kDate:
      return ::arrow::date32();
    case TypeId::kTime:
      return ::arrow::time64(::arrow::TimeUnit::MICRO);
    case TypeId::kTimestamp:
      return ::arrow::timestamp(::arrow::TimeUnit::MICRO);
    case TypeId::kTimestampTz:
      return ::arrow::timestamp(::arrow::TimeUnit::MICRO, "UTC");
    case TypeId::kString:
      return ::arrow::utf8();
    case TypeId::kUuid:
      return ::arrow::fixed_size_binary(16);
    case TypeId::kFixed:
      if (type.length < 1) {
        return Status::Invalid("Iceberg fixed[", type.length,
                               "] must have a positive length");
      }
      return ::arrow::fixed_size_binary(type.length);
    case TypeId::kBinary:
      return ::arrow::binary();
    case TypeId::kStruct: {
      std::vector<std::shared_ptr<::arrow::Field>> fields;
      fields.reserve(type.fields.size());
      for (const auto& f : type.fields) {
        FLOE_ASSIGN_OR_RAISE(auto af, ToArrowField(f));
        fields.push_back(std::move(af));
      }
      return ::arrow::struct_(std::move(fields));
    }
    case TypeId::kList: {
      if (type.children.size() != 1)
        return Status::Invalid("Iceberg list without element");
      FLOE_ASSIGN_OR_RAISE(auto element, ToArrowFieldNamed(type.element(), "element"));
      return ::arrow::list(std::move(element));
    }
    case TypeId::kMap: {
      if (type.children.size() != 2)
        return Status::Invalid("Iceberg map without key/value");
      FLOE_ASSIGN_OR_RAISE(auto key, ToArrowFieldNamed(type.key(), "key"));
      FLOE_ASSIGN_OR_RAISE(auto value, ToArrowFieldNamed(type.value(), "value"));
      if (key->nullable())
        key = key->WithNullable(false);  // Iceberg map keys are required
      // Iceberg (and the Parquet MAP convention) names the repeated entries group
      // "key_value"; Arrow's default is "entries".
      auto entries = ::arrow::field("key_value",
                                    ::arrow::struct_({std::move(key), std::move(value)}),
                                    /*nullable=*/false);
      return std::make_shared<::arrow::MapType>(std::move(entries));
    }
  }
  return Status::Invalid("unknown Iceberg type id ", static_cast<int>(type.id));
}

Result<std::shared_ptr<::arrow::Field>> ToArrowField(const iceberg::NestedField& field) {
  return ToArrowFieldNamed(field, field.name);
}

Result<std::shared_ptr<::arrow::Schema>> ToArrowSchema(const iceberg::Schema& schema) {
  std::vector<std::shared_ptr<::arrow::Field>> fields;
  fields.reserve(schema.fields.size());
  for (const auto& f : schema.fields) {
    FLOE_ASSIGN_OR_RAISE(auto af, ToArrowField(f));
    fields.push_back(std::move(af));
  }
  return ::arrow::schema(std::move(fields));
}

}  // namespace floe::schema
