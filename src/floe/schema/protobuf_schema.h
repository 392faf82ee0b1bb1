// Protobuf schemas from the registry (schemaType PROTOBUF) and their Iceberg mapping
// (docs/type-mapping.md "Protobuf"). Library floe_schema_protobuf: the only schema code
// that links libprotobuf/libprotoc; this header forward-declares protobuf's types so
// including it stays cheap.
//
//   int32, sint32, sfixed32 → int          int64, sint64, sfixed64 → long
//   uint32, fixed32 → long                 uint64, fixed64 → decimal(20,0)
//   bool, float, double, string → same     bytes → binary        enum → string (the name)
//   message → struct (optional)            repeated T → list<T> (element required)
//   map<K,V> → map<K,V>                    google.protobuf.Timestamp → timestamptz
//   google.protobuf.*Value wrappers → the wrapped primitive, optional
//
// Presence: proto3 scalars without `optional` (implicit presence, absent = default) and
// proto2 `required` fields are required; fields with explicit presence (proto3
// `optional`, proto2 `optional`, oneof members, messages) are optional. A proto2 optional
// scalar with an explicit `[default = ...]` is required: a reader sees the default when
// it is absent. Refused with Status::Invalid naming the field path: recursive messages,
// groups, a message with no fields (Parquet cannot store an empty struct;
// google.protobuf.Empty included), nesting deeper than kMaxProtobufDepth.
//
// The fields come back WITHOUT ids, like AvroToIcebergFields.
//
// Threading: a ProtobufSchema is immutable after Make; share it freely.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "floe/common/status.h"
#include "floe/iceberg/schema.h"

namespace google::protobuf {
class Descriptor;
class DescriptorPool;
class FieldDescriptor;
class FileDescriptor;
}  // namespace google::protobuf

namespace floe::schema {

inline constexpr int kMaxProtobufDepth = 64;

// File name given to the schema text itself (imports name other files).
inline constexpr char kProtobufMainFile[] = "floe_main.proto";

class ProtobufSchema {
 public:
  // Parses `text` (a .proto file). `imports` maps import paths to .proto text (the
  // registry references, resolved by the caller, recursively); `google/protobuf/*.proto`
  // are built in and need not be given. The schema and each import may also be base64 of
  // a serialized FileDescriptorProto (what Confluent's Python and Go serializers register
  // and what `?format=serialized` returns). Errors (Status::Invalid) carry the file, line
  // and column of the first problem, or name the missing import.
  static Result<std::shared_ptr<const ProtobufSchema>> Make(
      const std::string& text, const std::map<std::string, std::string>& imports = {});

  ~ProtobufSchema();
  ProtobufSchema(const ProtobufSchema&) = delete;
  ProtobufSchema& operator=(const ProtobufSchema&) = delete;

  // The message a Confluent message-index path selects: the first index is a top-level
  // message of the file, each next one a nested type of the previous. An empty path means
  // [0]. kInvalidRecord when an index is out of range (the payload names a message the
  // schema does not have). The descriptor lives as long as this schema.
  Result<const ::google::protobuf::Descriptor*> MessageAt(const int32_t* indexes,
                                                          size_t count) const;
  Result<const ::google::protobuf::Descriptor*> MessageAt(
      const std::vector<int32_t>& indexes) const {
    return MessageAt(indexes.data(), indexes.size());
  }

  const ::google::protobuf::FileDescriptor* file() const { return file_; }

 private:
  ProtobufSchema() = default;
  struct Database;
  std::unique_ptr<Database> database_;
  std::unique_ptr<::google::protobuf::DescriptorPool> pool_;
  const ::google::protobuf::FileDescriptor* file_ = nullptr;
};

// The fields of `message` as Iceberg fields (no ids). See the mapping above.
Result<std::vector<iceberg::NestedField>> ProtobufToIcebergFields(
    const ::google::protobuf::Descriptor& message);

// How a field's absence reads (shared by the mapping and the decoder).
enum class ProtobufPresence {
  kImplicit,  // proto3 scalar: absent = the type's zero value (required column)
  kDefault,   // proto2 optional scalar with [default = ...]: absent = that default
  kRequired,  // proto2 required: absent = an invalid record
  kExplicit,  // absent = null (optional column)
};
// For a singular field; repeated fields and maps are never absent (empty).
ProtobufPresence PresenceOf(const ::google::protobuf::FieldDescriptor& field);

// google.protobuf.Timestamp, and the wrappers (google.protobuf.Int32Value, ...).
bool IsProtobufTimestamp(const ::google::protobuf::Descriptor& message);
bool IsProtobufWrapper(const ::google::protobuf::Descriptor& message);

}  // namespace floe::schema
