#include "floe/schema/avro_schema.h"

#include <cmath>
#include <limits>
#include <nlohmann/json.hpp>
#include <unordered_map>
#include <unordered_set>

namespace floe::schema {
namespace {

using Json = nlohmann::json;

bool IsPrimitiveName(std::string_view s, AvroType* out) {
  static const std::pair<std::string_view, AvroType> kPrimitives[] = {
      {"null", AvroType::kNull},   {"boolean", AvroType::kBoolean},
      {"int", AvroType::kInt},     {"long", AvroType::kLong},
      {"float", AvroType::kFloat}, {"double", AvroType::kDouble},
      {"bytes", AvroType::kBytes}, {"string", AvroType::kString},
  };
  for (const auto& [name, type] : kPrimitives) {
    if (s == name) {
      if (out != nullptr) *out = type;
      return true;
    }
  }
  return false;
}

// Avro spec "Names": [A-Za-z_][A-Za-z0-9_]*
bool IsValidName(std::string_view s) {
  if (s.empty()) return false;
  auto alpha = [](char c) {
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '_';
  };
  if (!alpha(s[0])) return false;
  for (char c : s.substr(1)) {
    if (!alpha(c) && !(c >= '0' && c <= '9')) return false;
  }
  return true;
}

// A full name: dot-separated valid names.
bool IsValidFullName(std::string_view s) {
  size_t start = 0;
  while (true) {
    size_t dot = s.find('.', start);
    if (!IsValidName(
            s.substr(start, dot == std::string_view::npos ? dot : dot - start))) {
      return false;
    }
    if (dot == std::string_view::npos) return true;
    start = dot + 1;
  }
}

std::string Quote(std::string_view s) { return "'" + std::string(s) + "'"; }

// Largest decimal precision a fixed of `size` bytes can hold:
// floor(log10(2^(8*size-1)-1)).
int MaxFixedDecimalPrecision(int32_t size) {
  if (size <= 0) return 0;
  // 2^k is never a power of ten, so floor(log10(2^k - 1)) == floor(k * log10(2)).
  double digits = static_cast<double>(8.0 * size - 1) * std::log10(2.0);
  return digits > 1e9 ? std::numeric_limits<int>::max()
                      : static_cast<int>(std::floor(digits));
}

class Parser {
 public:
  Result<AvroNodePtr> Parse(const Json& j, const std::string& path, const std::string& ns,
                            int depth) {
    if (depth > kMaxAvroSchemaDepth) {
      return Error(path, "nesting is deeper than " + std::to_string(kMaxAvroSchemaDepth) +
                             " levels");
    }
    if (j.is_string()) return ParseReference(j.get_ref<const std::string&>(), path, ns);
    if (j.is_array()) return ParseUnion(j, path, ns, depth);
    if (j.is_object()) return ParseObject(j, path, ns, depth);
    return Error(path, "expected a type name, a JSON object or a JSON array, got " +
                           std::string(j.type_name()));
  }

 private:
  static Status Error(const std::string& path, const std::string& what) {
    return Status::Invalid("Avro schema at ", path, ": ", what);
  }

  static AvroNodePtr Primitive(AvroType type) {
    auto n = std::make_shared<AvroNode>();
    n->type = type;
    return n;
  }

  Result<AvroNodePtr> ParseReference(const std::string& name, const std::string& path,
                                     const std::string& ns) {
    AvroType prim;
    if (IsPrimitiveName(name, &prim)) return Primitive(prim);
    // Spec "Names": a name with a dot is a full name; otherwise the enclosing namespace
    // applies. Like the Java implementation, fall back to the null namespace.
    std::vector<std::string> candidates;
    if (name.find('.') == std::string::npos && !ns.empty())
      candidates.push_back(ns + "." + name);
    candidates.push_back(name);
    for (const auto& full : candidates) {
      if (in_progress_.count(full) != 0) {
        return Error(path, "recursive type " + full + " is not supported");
      }
      auto it = defined_.find(full);
      if (it != defined_.end()) return it->second;
    }
    return Error(path, "unknown type name " + Quote(name));
  }

  Result<AvroNodePtr> ParseUnion(const Json& j, const std::string& path,
                                 const std::string& ns, int depth) {
    auto node = std::make_shared<AvroNode>();
    node->type = AvroType::kUnion;
    std::string listing;
    for (size_t i = 0; i < j.size(); ++i) {
      std::string bpath = path + "[" + std::to_string(i) + "]";
      FLOE_ASSIGN_OR_RAISE(auto branch, Parse(j[i], bpath, ns, depth + 1));
      // Spec "Unions": no union directly inside a union; at most one branch per unnamed
      // type and per name.
      if (branch->type == AvroType::kUnion) {
        return Error(bpath, "a union may not immediately contain another union");
      }
      for (const auto& other : node->branches) {
        bool same = other->type == branch->type &&
                    (!branch->is_named() || other->full_name == branch->full_name);
        if (same) {
          return Error(bpath,
                       "union contains " + AvroTypeName(*branch) + " more than once");
        }
      }
      listing += (i == 0 ? "" : ", ") + AvroTypeName(*branch);
      node->branches.push_back(std::move(branch));
    }
    const size_t non_null = node->branches.size() - (node->FindNullBranch() >= 0 ? 1 : 0);
    if (non_null == 0) {
      return Error(path, "union [" + listing +
                             "] has no non-null branch; no column type can hold it");
    }
    if (node->branches.size() == 1) {
      return Error(path, "union [" + listing +
                             "] of a single type is not supported; use " + listing +
                             " itself");
    }
    return node;
  }

  static Result<std::string> OptionalString(const Json& obj, const char* key,
                                            const std::string& path) {
    auto it = obj.find(key);
    if (it == obj.end() || it->is_null()) return std::string();
    if (!it->is_string())
      return Error(path, std::string("\"") + key + "\" must be a string");
    return it->get<std::string>();
  }

  Result<AvroNodePtr> ParseObject(const Json& j, const std::string& path,
                                  const std::string& ns, int depth) {
    auto type_it = j.find("type");
    if (type_it == j.end()) return Error(path, "missing \"type\"");
    if (!type_it->is_string()) {
      return Error(path, "\"type\" of a schema object must be a string");
    }
    const std::string& type = type_it->get_ref<const std::string&>();
    AvroType prim;
    if (IsPrimitiveName(type, &prim)) {
      auto node = std::make_shared<AvroNode>();
      node->type = prim;
      FLOE_RETURN_NOT_OK(ApplyLogicalType(j, path, node.get()));
      return node;
    }
    if (type == "record" || type == "error") return ParseRecord(j, path, ns, depth);
    if (type == "enum") return ParseEnum(j, path, ns);
    if (type == "fixed") return ParseFixed(j, path, ns);
    if (type == "array" || type == "map") {
      const char* key = type == "array" ? "items" : "values";
      auto it = j.find(key);
      if (it == j.end()) return Error(path, type + " without \"" + key + "\"");
      auto node = std::make_shared<AvroNode>();
      node->type = type == "array" ? AvroType::kArray : AvroType::kMap;
      FLOE_ASSIGN_OR_RAISE(auto child, Parse(*it, path + "." + key, ns, depth + 1));
      (type == "array" ? node->items : node->values) = std::move(child);
      return node;
    }
    // Java accepts a named-type reference in object form; so do we.
    return ParseReference(type, path + ".type", ns);
  }

  // Spec "Logical Types": a logical type on the wrong underlying type is ignored.
  Status ApplyLogicalType(const Json& j, const std::string& path, AvroNode* node) {
    auto it = j.find("logicalType");
    if (it == j.end() || !it->is_string()) return Status::OK();
    const std::string& lt = it->get_ref<const std::string&>();
    const AvroType t = node->type;
    if (lt == "decimal") {
      if (t != AvroType::kBytes && t != AvroType::kFixed) return Status::OK();
      return ApplyDecimal(j, path, node);
    }
    struct Entry {
      const char* name;
      AvroType on;
      AvroLogicalType logical;
    };
    static const Entry kSimple[] = {
        {"date", AvroType::kInt, AvroLogicalType::kDate},
        {"time-millis", AvroType::kInt, AvroLogicalType::kTimeMillis},
        {"time-micros", AvroType::kLong, AvroLogicalType::kTimeMicros},
        {"timestamp-millis", AvroType::kLong, AvroLogicalType::kTimestampMillis},
        {"timestamp-micros", AvroType::kLong, AvroLogicalType::kTimestampMicros},
        {"local-timestamp-millis", AvroType::kLong,
         AvroLogicalType::kLocalTimestampMillis},
        {"local-timestamp-micros", AvroType::kLong,
         AvroLogicalType::kLocalTimestampMicros},
        {"uuid", AvroType::kString, AvroLogicalType::kUuid},
    };
    for (const auto& e : kSimple) {
      if (lt == e.name && t == e.on) node->logical_type = e.logical;
    }
    return Status::OK();
  }

  Status ApplyDecimal(const Json& j, const std::string& path, AvroNode* node) {
    auto p = j.find("precision");
    if (p == j.end() || !p->is_number_integer()) {
      return Error(path, "decimal needs an integer \"precision\"");
    }
    int64_t precision = p->get<int64_t>();
    int64_t scale = 0;
    auto s = j.find("scale");
    if (s != j.end()) {
      if (!s->is_number_integer())
        return Error(path, "decimal \"scale\" must be an integer");
      scale = s->get<int64_t>();
    }
    if (precision < 1 || precision > std::numeric_limits<int>::max()) {
      return Error(
          path, "decimal precision " + std::to_string(precision) + " must be positive");
    }
    if (scale < 0 || scale > precision) {
      return Error(path, "decimal scale " + std::to_string(scale) +
                             " must be between 0 and the precision " +
                             std::to_string(precision));
    }
    if (node->type == AvroType::kFixed &&
        precision > MaxFixedDecimalPrecision(node->size)) {
      return Error(path, "decimal precision " + std::to_string(precision) +
                             " does not fit a fixed of " + std::to_string(node->size) +
                             " bytes (at most " +
                             std::to_string(MaxFixedDecimalPrecision(node->size)) +
                             " digits)");
    }
    node->logical_type = AvroLogicalType::kDecimal;
    node->precision = static_cast<int>(precision);
    node->scale = static_cast<int>(scale);
    return Status::OK();
  }

  // Spec "Names": a name with a dot is full; otherwise "namespace", else the enclosing
  // one. Returns the full name and sets `*own_ns` to the namespace of this definition.
  Result<std::string> DefineName(const Json& j, const std::string& path,
                                 const std::string& ns, std::string* own_ns) {
    auto it = j.find("name");
    if (it == j.end() || !it->is_string()) {
      return Error(path, "a named type needs a string \"name\"");
    }
    std::string name = it->get<std::string>();
    std::string full;
    if (name.find('.') != std::string::npos) {
      full = name;
      *own_ns = name.substr(0, name.rfind('.'));
    } else {
      auto nit = j.find("namespace");
      if (nit != j.end() && !nit->is_null()) {
        if (!nit->is_string()) return Error(path, "\"namespace\" must be a string");
        *own_ns = nit->get<std::string>();
      } else {
        *own_ns = ns;
      }
      full = own_ns->empty() ? name : *own_ns + "." + name;
    }
    if (!IsValidFullName(full)) return Error(path, "invalid name " + Quote(full));
    if (IsPrimitiveName(full, nullptr)) {
      return Error(path, "cannot redefine the primitive type " + Quote(full));
    }
    if (defined_.count(full) != 0 || in_progress_.count(full) != 0) {
      return Error(path, "named type " + full + " is defined more than once");
    }
    return full;
  }

  Result<AvroNodePtr> ParseRecord(const Json& j, const std::string& path,
                                  const std::string& ns, int depth) {
    std::string own_ns;
    FLOE_ASSIGN_OR_RAISE(std::string full, DefineName(j, path, ns, &own_ns));
    auto node = std::make_shared<AvroNode>();
    node->type = AvroType::kRecord;
    node->full_name = full;
    FLOE_ASSIGN_OR_RAISE(node->doc, OptionalString(j, "doc", path));
    auto fit = j.find("fields");
    if (fit == j.end() || !fit->is_array()) {
      return Error(path, "record " + full + " needs a \"fields\" array");
    }
    // Registered before its fields so that a self-reference is recognised as recursion.
    in_progress_.insert(full);
    std::unordered_set<std::string> names;
    for (size_t i = 0; i < fit->size(); ++i) {
      const Json& fj = (*fit)[i];
      std::string fpath = path + ".fields[" + std::to_string(i) + "]";
      if (!fj.is_object()) return Error(fpath, "a field must be a JSON object");
      auto nit = fj.find("name");
      if (nit == fj.end() || !nit->is_string())
        return Error(fpath, "a field needs a \"name\"");
      AvroField field;
      field.name = nit->get<std::string>();
      if (!IsValidName(field.name))
        return Error(fpath, "invalid field name " + Quote(field.name));
      if (!names.insert(field.name).second) {
        return Error(fpath, "record " + full + " has more than one field named " +
                                Quote(field.name));
      }
      FLOE_ASSIGN_OR_RAISE(field.doc, OptionalString(fj, "doc", fpath));
      auto tit = fj.find("type");
      if (tit == fj.end())
        return Error(fpath, "field " + Quote(field.name) + " has no \"type\"");
      FLOE_ASSIGN_OR_RAISE(field.type, Parse(*tit, fpath + ".type", own_ns, depth + 1));
      node->fields.push_back(std::move(field));
    }
    in_progress_.erase(full);
    defined_[full] = node;
    return node;
  }

  Result<AvroNodePtr> ParseEnum(const Json& j, const std::string& path,
                                const std::string& ns) {
    std::string own_ns;
    FLOE_ASSIGN_OR_RAISE(std::string full, DefineName(j, path, ns, &own_ns));
    auto node = std::make_shared<AvroNode>();
    node->type = AvroType::kEnum;
    node->full_name = full;
    FLOE_ASSIGN_OR_RAISE(node->doc, OptionalString(j, "doc", path));
    auto sit = j.find("symbols");
    if (sit == j.end() || !sit->is_array()) {
      return Error(path, "enum " + full + " needs a \"symbols\" array");
    }
    std::unordered_set<std::string> seen;
    for (size_t i = 0; i < sit->size(); ++i) {
      std::string spath = path + ".symbols[" + std::to_string(i) + "]";
      if (!(*sit)[i].is_string()) return Error(spath, "an enum symbol must be a string");
      std::string sym = (*sit)[i].get<std::string>();
      if (!IsValidName(sym)) return Error(spath, "invalid enum symbol " + Quote(sym));
      if (!seen.insert(sym).second)
        return Error(spath, "duplicate enum symbol " + Quote(sym));
      node->symbols.push_back(std::move(sym));
    }
    auto dit = j.find("default");
    if (dit != j.end() &&
        (!dit->is_string() || seen.count(dit->get<std::string>()) == 0)) {
      return Error(path + ".default", "the enum default must be one of its symbols");
    }
    defined_[full] = node;
    return node;
  }

  Result<AvroNodePtr> ParseFixed(const Json& j, const std::string& path,
                                 const std::string& ns) {
    std::string own_ns;
    FLOE_ASSIGN_OR_RAISE(std::string full, DefineName(j, path, ns, &own_ns));
    auto node = std::make_shared<AvroNode>();
    node->type = AvroType::kFixed;
    node->full_name = full;
    FLOE_ASSIGN_OR_RAISE(node->doc, OptionalString(j, "doc", path));
    auto sit = j.find("size");
    if (sit == j.end() || !sit->is_number_integer() || sit->get<int64_t>() < 0 ||
        sit->get<int64_t>() > std::numeric_limits<int32_t>::max()) {
      return Error(path, "fixed " + full + " needs a non-negative integer \"size\"");
    }
    node->size = static_cast<int32_t>(sit->get<int64_t>());
    FLOE_RETURN_NOT_OK(ApplyLogicalType(j, path, node.get()));
    defined_[full] = node;
    return node;
  }

  std::unordered_map<std::string, AvroNodePtr> defined_;
  std::unordered_set<std::string> in_progress_;
};

}  // namespace

int AvroNode::NullBranch() const {
  if (type != AvroType::kUnion || branches.size() != 2) return -1;
  const bool first = branches[0]->type == AvroType::kNull;
  const bool second = branches[1]->type == AvroType::kNull;
  if (first == second) return -1;
  return first ? 0 : 1;
}

int AvroNode::FindNullBranch() const {
  if (type != AvroType::kUnion) return -1;
  for (size_t i = 0; i < branches.size(); ++i) {
    if (branches[i]->type == AvroType::kNull) return static_cast<int>(i);
  }
  return -1;
}

const AvroNode& AvroNode::NonNullBranch() const {
  return *branches.at(NullBranch() == 0 ? 1 : 0);
}

std::string AvroTypeName(const AvroNode& n) {
  switch (n.logical_type) {
    case AvroLogicalType::kNone: break;
    case AvroLogicalType::kDate: return "date";
    case AvroLogicalType::kTimeMillis: return "time-millis";
    case AvroLogicalType::kTimeMicros: return "time-micros";
    case AvroLogicalType::kTimestampMillis: return "timestamp-millis";
    case AvroLogicalType::kTimestampMicros: return "timestamp-micros";
    case AvroLogicalType::kLocalTimestampMillis: return "local-timestamp-millis";
    case AvroLogicalType::kLocalTimestampMicros: return "local-timestamp-micros";
    case AvroLogicalType::kDecimal:
      return "decimal(" + std::to_string(n.precision) + "," + std::to_string(n.scale) +
             ")";
    case AvroLogicalType::kUuid: return "uuid";
  }
  switch (n.type) {
    case AvroType::kNull: return "null";
    case AvroType::kBoolean: return "boolean";
    case AvroType::kInt: return "int";
    case AvroType::kLong: return "long";
    case AvroType::kFloat: return "float";
    case AvroType::kDouble: return "double";
    case AvroType::kBytes: return "bytes";
    case AvroType::kString: return "string";
    case AvroType::kRecord: return "record " + n.full_name;
    case AvroType::kEnum: return "enum " + n.full_name;
    case AvroType::kArray: return "array";
    case AvroType::kMap: return "map";
    case AvroType::kFixed:
      return "fixed " + n.full_name + "(" + std::to_string(n.size) + ")";
    case AvroType::kUnion: return "union";
  }
  return "unknown";
}

Result<AvroSchema> AvroSchema::Parse(std::string_view json) {
  Json j;
  try {
    j = Json::parse(json);
  } catch (const Json::exception& e) {
    return Status::Invalid("Avro schema at $: not valid JSON: ", e.what());
  }
  Parser parser;
  FLOE_ASSIGN_OR_RAISE(auto root, parser.Parse(j, "$", "", 1));
  return AvroSchema(std::move(root));
}

}  // namespace floe::schema
