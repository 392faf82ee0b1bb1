// Iceberg schema JSON (spec Appendix C "Schemas"): the table metadata `schemas`, the REST
// catalog's `Schema`, the manifest header key `schema` and the Parquet footer key
// `iceberg.schema` all use this form.
#pragma once

#include <nlohmann/json_fwd.hpp>
#include <string>
#include <string_view>

#include "floe/common/status.h"
#include "floe/iceberg/schema.h"

namespace floe::iceberg {

// Type JSON: a string for primitives ("long", "decimal(10,2)", "fixed[16]"), an object
// for struct/list/map. Types Floe's model lacks (v3 types such as "variant",
// "timestamp_ns", "unknown", "geometry(...)") are rejected with an error naming them.
::nlohmann::json TypeToJson(const Type& type);
Result<TypePtr> TypeFromJson(const ::nlohmann::json& json);

// Schema JSON: a struct object plus `schema-id` and, when non-empty,
// `identifier-field-ids`. Parse errors are InvalidInput (HTTP 400 when they come from a
// request).
::nlohmann::json SchemaToJson(const Schema& schema);
Result<Schema> SchemaFromJson(const ::nlohmann::json& json);

// Compact JSON text; and parsing from text.
std::string SchemaToJsonString(const Schema& schema);
Result<Schema> SchemaFromJsonString(std::string_view text);

// Parses a primitive type string, accepting optional whitespace inside parameters as the
// spec asks ("decimal(9, 2)"). Error for unknown or unsupported names.
Result<TypePtr> PrimitiveTypeFromString(std::string_view text);

}  // namespace floe::iceberg
