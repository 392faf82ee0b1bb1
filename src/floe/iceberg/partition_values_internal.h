// Private to floe/iceberg: partition values as manifests hold them (spec Appendix A
// "Avro", Appendix D "Single-value serialization"): their Avro types in the
// manifest_entry schema, their encoding and decoding, and the summaries manifest lists
// keep. A value travels as its single-value serialization (DataFile::partition).
#pragma once

#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "floe/avro/encoding.h"
#include "floe/avro/schema.h"
#include "floe/iceberg/avro_file.h"
#include "floe/iceberg/json_internal.h"
#include "floe/iceberg/manifest.h"
#include "floe/iceberg/schema.h"

namespace floe::iceberg::internal {

// Avro names allow [A-Za-z_][A-Za-z0-9_]*; other characters become "_x<HEX>" (the Iceberg
// convention, so readers that map names back get the same result).
std::string AvroName(const std::string& name);

// The Avro type of a partition field's values; `named` collects the fixed types already
// defined (a second one is referenced by name).
Result<Json> PartitionAvroType(const Type& t, std::set<std::string>* named);

// Writes value `v` (single-value serialization) of partition field `field` of type `t`.
Status EncodePartitionValue(const Type& t, const std::string& field, std::string_view v,
                            avro::Encoder* e);

// Single-value serialization of a partition value read from Avro (by the file's own
// schema); nullopt for a null.
Result<std::optional<std::string>> PartitionValueFromDatum(const avro::Node* node,
                                                           const avro_file::Datum& d);

// Per partition field: null and NaN presence and bounds over `entries`.
std::vector<PartitionFieldSummary> Summarize(const std::vector<TypePtr>& types,
                                             const std::vector<ManifestEntry>& entries);

}  // namespace floe::iceberg::internal
