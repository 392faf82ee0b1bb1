#include "floe/schema/avro_to_iceberg.h"

#include <memory>
#include <string>
#include <utility>

namespace floe::schema {
namespace {

using iceberg::NestedField;
using iceberg::Type;
using iceberg::TypeId;
using iceberg::TypePtr;

Status Error(const std::string& path, const std::string& what) {
  return Status::Invalid("Avro field '", path, "': ", what);
}

// A mapped type plus whether it came from a nullable union and the doc it adds.
struct Mapped {
  TypePtr type;
  bool required = true;
  std::string doc;  // added by the mapping (time columns)
};

Result<Mapped> MapType(const avro::Node& node, const std::string& path, int depth);

Result<std::vector<NestedField>> MapRecord(const avro::Node& record,
                                           const std::string& path, int depth) {
  if (record.fields.empty()) {
    return Error(path.empty() ? record.full_name : path,
                 "record " + record.full_name +
                     " has no fields; Parquet cannot store an empty struct");
  }
  std::vector<NestedField> out;
  out.reserve(record.fields.size());
  for (const auto& f : record.fields) {
    std::string fpath = path.empty() ? f.name : path + "." + f.name;
    FLOE_ASSIGN_OR_RAISE(Mapped m, MapType(*f.type, fpath, depth + 1));
    std::string doc = f.doc;
    if (!m.doc.empty()) doc = doc.empty() ? m.doc : doc + " (" + m.doc + ")";
    out.push_back(NestedField{0, f.name, m.required, std::move(m.type), std::move(doc)});
    out.back().has_default = f.has_default;
    out.back().aliases = f.aliases;  // a rename hint (schema/evolution.h)
  }
  return out;
}

// Element/key/value fields are built by hand (not Type::List/Map) to carry their doc.
TypePtr ListOf(Mapped element) {
  auto t = std::make_shared<Type>();
  t->id = TypeId::kList;
  t->children.push_back(
      NestedField{0, "element", element.required, std::move(element.type), element.doc});
  return t;
}

TypePtr MapOf(Mapped value) {
  auto t = std::make_shared<Type>();
  t->id = TypeId::kMap;
  t->children.push_back(
      NestedField{0, "key", true, Type::Primitive(TypeId::kString), {}});
  t->children.push_back(
      NestedField{0, "value", value.required, std::move(value.type), value.doc});
  return t;
}

Result<Mapped> MapType(const avro::Node& node, const std::string& path, int depth) {
  if (depth > avro::kMaxSchemaDepth) {
    return Error(path, "nesting is deeper than " + std::to_string(avro::kMaxSchemaDepth));
  }
  auto prim = [](TypeId id, std::string doc = {}) {
    return Mapped{Type::Primitive(id), true, std::move(doc)};
  };
  switch (node.logical_type) {
    case avro::LogicalType::kNone:
      break;
    case avro::LogicalType::kDate:
      return prim(TypeId::kDate);
    case avro::LogicalType::kTimeMillis:
    case avro::LogicalType::kTimeMicros:
      return prim(TypeId::kLong, kTimeOfDayDoc);
    case avro::LogicalType::kTimestampMillis:
    case avro::LogicalType::kTimestampMicros:
      return prim(TypeId::kTimestampTz);
    case avro::LogicalType::kLocalTimestampMillis:
    case avro::LogicalType::kLocalTimestampMicros:
      return prim(TypeId::kTimestamp);
    case avro::LogicalType::kUuid:
      return prim(TypeId::kString);
    case avro::LogicalType::kDecimal:
      if (node.precision > kMaxDecimalPrecision) {
        return Error(path, "decimal precision " + std::to_string(node.precision) +
                               " is above Iceberg's maximum of " +
                               std::to_string(kMaxDecimalPrecision));
      }
      return Mapped{Type::Decimal(node.precision, node.scale), true, {}};
  }
  switch (node.type) {
    case avro::Type::kNull:
      return Error(path, "a field of type null has no Iceberg type; use [\"null\", T]");
    case avro::Type::kBoolean:
      return prim(TypeId::kBoolean);
    case avro::Type::kInt:
      return prim(TypeId::kInt);
    case avro::Type::kLong:
      return prim(TypeId::kLong);
    case avro::Type::kFloat:
      return prim(TypeId::kFloat);
    case avro::Type::kDouble:
      return prim(TypeId::kDouble);
    case avro::Type::kBytes:
      return prim(TypeId::kBinary);
    case avro::Type::kString:
      return prim(TypeId::kString);
    case avro::Type::kEnum:
      return prim(TypeId::kString);
    case avro::Type::kFixed:
      return prim(TypeId::kBinary);
    case avro::Type::kRecord: {
      FLOE_ASSIGN_OR_RAISE(auto fields, MapRecord(node, path, depth));
      return Mapped{Type::Struct(std::move(fields)), true, {}};
    }
    case avro::Type::kArray: {
      FLOE_ASSIGN_OR_RAISE(Mapped element, MapType(*node.items, path + "[]", depth + 1));
      return Mapped{ListOf(std::move(element)), true, {}};
    }
    case avro::Type::kMap: {
      FLOE_ASSIGN_OR_RAISE(Mapped value, MapType(*node.values, path + "{}", depth + 1));
      return Mapped{MapOf(std::move(value)), true, {}};
    }
    case avro::Type::kUnion: {
      if (node.NullBranch() >= 0) {
        FLOE_ASSIGN_OR_RAISE(Mapped m, MapType(node.NonNullBranch(), path, depth + 1));
        m.required = false;
        return m;
      }
      // General union: one optional member per non-null branch, in branch order.
      std::vector<NestedField> members;
      for (const auto& branch : node.branches) {
        if (branch->type == avro::Type::kNull) continue;
        std::string name = AvroUnionMemberName(static_cast<int>(members.size()));
        FLOE_ASSIGN_OR_RAISE(Mapped m, MapType(*branch, path + "." + name, depth + 1));
        members.push_back(
            NestedField{0, std::move(name), false, std::move(m.type), std::move(m.doc)});
      }
      if (members.size() < 2) {
        return Error(path, "a union needs two non-null branches or [\"null\", T]");
      }
      return Mapped{Type::Struct(std::move(members)), node.FindNullBranch() < 0, {}};
    }
  }
  return Error(path, "unsupported Avro type");
}

}  // namespace

std::string AvroUnionMemberName(int position) {
  return "member" + std::to_string(position);
}

Result<NestedField> AvroTypeToIcebergField(const std::string& name,
                                           const avro::Node& type) {
  FLOE_ASSIGN_OR_RAISE(Mapped m, MapType(type, name, 1));
  return NestedField{0, name, m.required, std::move(m.type), std::move(m.doc)};
}

Result<std::vector<NestedField>> AvroRecordToIcebergFields(const avro::Node& record) {
  if (record.type != avro::Type::kRecord) {
    return Status::Invalid("the Avro value schema must be a record, not ",
                           avro::DescribeType(record));
  }
  return MapRecord(record, "", 1);
}

Result<std::vector<NestedField>> AvroToIcebergFields(const avro::Schema& schema) {
  return AvroRecordToIcebergFields(schema.root());
}

}  // namespace floe::schema
