#include "floe/avro/schema.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <nlohmann/json.hpp>
#include <unordered_map>
#include <unordered_set>
#include <utility>

namespace floe::avro {

struct Schema::Graph {
  std::string json;
  std::vector<std::unique_ptr<Node>> nodes;
};

namespace {

using Json = ::nlohmann::json;

// Largest fixed accepted: far beyond any real use, and small enough that a count of such
// values checked against the bytes left cannot overflow.
constexpr int64_t kMaxFixedSize = int64_t{1} << 24;

bool IsPrimitiveName(std::string_view s, Type* out) {
  static const std::pair<std::string_view, Type> kPrimitives[] = {
      {"null", Type::kNull},   {"boolean", Type::kBoolean}, {"int", Type::kInt},
      {"long", Type::kLong},   {"float", Type::kFloat},     {"double", Type::kDouble},
      {"bytes", Type::kBytes}, {"string", Type::kString},
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
  Parser(const ParseOptions& options, std::vector<std::unique_ptr<Node>>* nodes)
      : options_(options), nodes_(nodes) {}

  Result<Node*> Parse(const Json& j, const std::string& path, const std::string& ns,
                      int depth) {
    if (depth > kMaxSchemaDepth) {
      return Error(
          path, "nesting is deeper than " + std::to_string(kMaxSchemaDepth) + " levels");
    }
    if (j.is_string()) return ParseReference(j.get_ref<const std::string&>(), path, ns);
    if (j.is_array()) return ParseUnion(j, path, ns, depth);
    if (j.is_object()) return ParseObject(j, path, ns, depth);
    return Error(path, "expected a type name, a JSON object or a JSON array, got " +
                           std::string(j.type_name()));
  }

  // Fills in Node::min_bytes once the graph is complete.
  void Finish() {
    for (auto& n : *nodes_) n->min_bytes = -1;
    for (auto& n : *nodes_) MinBytes(n.get());
  }

 private:
  static Status Error(const std::string& path, const std::string& what) {
    return Status::Invalid("Avro schema at ", path, ": ", what);
  }

  Node* NewNode(Type type) {
    nodes_->push_back(std::make_unique<Node>());
    nodes_->back()->type = type;
    return nodes_->back().get();
  }

  Result<Node*> ParseReference(const std::string& name, const std::string& path,
                               const std::string& ns) {
    Type prim;
    if (IsPrimitiveName(name, &prim)) return NewNode(prim);
    // Spec "Names": a name with a dot is a full name; otherwise the enclosing namespace
    // applies. Like the Java implementation, fall back to the null namespace.
    std::vector<std::string> candidates;
    if (name.find('.') == std::string::npos && !ns.empty())
      candidates.push_back(ns + "." + name);
    candidates.push_back(name);
    for (const auto& full : candidates) {
      if (!options_.allow_recursive_types && in_progress_.count(full) != 0) {
        return Error(path, "recursive type " + full + " is not supported");
      }
      auto it = defined_.find(full);
      if (it != defined_.end()) return it->second;
    }
    return Error(path, "unknown type name " + Quote(name));
  }

  Result<Node*> ParseUnion(const Json& j, const std::string& path, const std::string& ns,
                           int depth) {
    Node* node = NewNode(Type::kUnion);
    std::string listing;
    for (size_t i = 0; i < j.size(); ++i) {
      std::string bpath = path + "[" + std::to_string(i) + "]";
      FLOE_ASSIGN_OR_RAISE(Node * branch, Parse(j[i], bpath, ns, depth + 1));
      // Spec "Unions": no union directly inside a union; at most one branch per unnamed
      // type and per name.
      if (branch->type == Type::kUnion) {
        return Error(bpath, "a union may not immediately contain another union");
      }
      for (const Node* other : node->branches) {
        bool same = other->type == branch->type &&
                    (!branch->is_named() || other->full_name == branch->full_name);
        if (same) {
          return Error(bpath,
                       "union contains " + DescribeType(*branch) + " more than once");
        }
      }
      listing += (i == 0 ? "" : ", ") + DescribeType(*branch);
      node->branches.push_back(branch);
    }
    const size_t non_null = node->branches.size() - (node->FindNullBranch() >= 0 ? 1 : 0);
    if (node->branches.empty()) {
      return Error(path, "union [] has no non-null branch; no value can have its type");
    }
    if (options_.allow_single_branch_unions) return node;
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

  // The integer attributes Iceberg adds ("field-id", "element-id", ...): -1 when absent.
  // Some writers emit them as strings of digits.
  static Result<int> IdAttribute(const Json& obj, const char* key,
                                 const std::string& path) {
    auto it = obj.find(key);
    if (it == obj.end() || it->is_null()) return -1;
    const Status bad = Error(path, std::string("\"") + key + "\" must be an integer " +
                                       "between 0 and 2^31-1, got " + it->dump());
    if (it->is_number_integer()) {
      if (it->is_number_unsigned()) {
        if (it->get<uint64_t>() > static_cast<uint64_t>(std::numeric_limits<int>::max()))
          return bad;
        return static_cast<int>(it->get<uint64_t>());
      }
      int64_t v = it->get<int64_t>();
      if (v < 0 || v > std::numeric_limits<int>::max()) return bad;
      return static_cast<int>(v);
    }
    if (it->is_string()) {
      const std::string& s = it->get_ref<const std::string&>();
      if (s.empty() || s.size() > 9 ||
          s.find_first_not_of("0123456789") != std::string::npos) {
        return bad;
      }
      return std::stoi(s);
    }
    return bad;
  }

  Result<Node*> ParseObject(const Json& j, const std::string& path, const std::string& ns,
                            int depth) {
    auto type_it = j.find("type");
    if (type_it == j.end()) return Error(path, "missing \"type\"");
    if (!type_it->is_string()) {
      return Error(path, "\"type\" of a schema object must be a string");
    }
    const std::string& type = type_it->get_ref<const std::string&>();
    Type prim;
    if (IsPrimitiveName(type, &prim)) {
      Node* node = NewNode(prim);
      FLOE_RETURN_NOT_OK(ApplyLogicalType(j, path, node));
      return node;
    }
    if (type == "record" || type == "error") return ParseRecord(j, path, ns, depth);
    if (type == "enum") return ParseEnum(j, path, ns);
    if (type == "fixed") return ParseFixed(j, path, ns);
    if (type == "array" || type == "map") {
      const bool is_array = type == "array";
      const char* key = is_array ? "items" : "values";
      auto it = j.find(key);
      if (it == j.end()) return Error(path, type + " without \"" + key + "\"");
      Node* node = NewNode(is_array ? Type::kArray : Type::kMap);
      FLOE_ASSIGN_OR_RAISE(const Node* child,
                           Parse(*it, path + "." + key, ns, depth + 1));
      if (is_array) {
        node->items = child;
        FLOE_ASSIGN_OR_RAISE(node->element_id, IdAttribute(j, "element-id", path));
      } else {
        node->values = child;
        FLOE_ASSIGN_OR_RAISE(node->key_id, IdAttribute(j, "key-id", path));
        FLOE_ASSIGN_OR_RAISE(node->value_id, IdAttribute(j, "value-id", path));
      }
      return node;
    }
    // Java accepts a named-type reference in object form; so do we.
    return ParseReference(type, path + ".type", ns);
  }

  // Spec "Logical Types": a logical type on the wrong underlying type is ignored.
  Status ApplyLogicalType(const Json& j, const std::string& path, Node* node) {
    auto it = j.find("logicalType");
    if (it == j.end() || !it->is_string()) return Status::OK();
    const std::string& lt = it->get_ref<const std::string&>();
    const Type t = node->type;
    if (lt == "decimal") {
      if (t != Type::kBytes && t != Type::kFixed) return Status::OK();
      Status st = ApplyDecimal(j, path, node);
      if (!st.ok() && options_.ignore_invalid_decimals) return Status::OK();
      return st;
    }
    struct Entry {
      const char* name;
      Type on;
      LogicalType logical;
    };
    static const Entry kSimple[] = {
        {"date", Type::kInt, LogicalType::kDate},
        {"time-millis", Type::kInt, LogicalType::kTimeMillis},
        {"time-micros", Type::kLong, LogicalType::kTimeMicros},
        {"timestamp-millis", Type::kLong, LogicalType::kTimestampMillis},
        {"timestamp-micros", Type::kLong, LogicalType::kTimestampMicros},
        {"local-timestamp-millis", Type::kLong, LogicalType::kLocalTimestampMillis},
        {"local-timestamp-micros", Type::kLong, LogicalType::kLocalTimestampMicros},
        {"uuid", Type::kString, LogicalType::kUuid},
    };
    for (const auto& e : kSimple) {
      if (lt == e.name && t == e.on) node->logical_type = e.logical;
    }
    return Status::OK();
  }

  // Sets the decimal logical type, or fails and leaves `node` as it was.
  static Status ApplyDecimal(const Json& j, const std::string& path, Node* node) {
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
    if (node->type == Type::kFixed && precision > MaxFixedDecimalPrecision(node->size)) {
      return Error(path, "decimal precision " + std::to_string(precision) +
                             " does not fit a fixed of " + std::to_string(node->size) +
                             " bytes (at most " +
                             std::to_string(MaxFixedDecimalPrecision(node->size)) +
                             " digits)");
    }
    node->logical_type = LogicalType::kDecimal;
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

  // A record, enum or fixed with its name and doc; its namespace goes to `*own_ns`.
  Result<Node*> NewNamed(Type type, const Json& j, const std::string& path,
                         const std::string& ns, std::string* own_ns) {
    FLOE_ASSIGN_OR_RAISE(std::string full, DefineName(j, path, ns, own_ns));
    Node* node = NewNode(type);
    node->full_name = std::move(full);
    FLOE_ASSIGN_OR_RAISE(node->doc, OptionalString(j, "doc", path));
    return node;
  }

  Result<Node*> ParseRecord(const Json& j, const std::string& path, const std::string& ns,
                            int depth) {
    std::string own_ns;
    FLOE_ASSIGN_OR_RAISE(Node * node, NewNamed(Type::kRecord, j, path, ns, &own_ns));
    const std::string& full = node->full_name;
    auto fit = j.find("fields");
    if (fit == j.end() || !fit->is_array()) {
      return Error(path, "record " + full + " needs a \"fields\" array");
    }
    // Known before its fields so that a self-reference is recognised: as recursion, or
    // as this node when recursive types are allowed.
    in_progress_.insert(full);
    if (options_.allow_recursive_types) defined_[full] = node;
    std::unordered_set<std::string> names;
    for (size_t i = 0; i < fit->size(); ++i) {
      const Json& fj = (*fit)[i];
      std::string fpath = path + ".fields[" + std::to_string(i) + "]";
      if (!fj.is_object()) return Error(fpath, "a field must be a JSON object");
      auto nit = fj.find("name");
      if (nit == fj.end() || !nit->is_string())
        return Error(fpath, "a field needs a \"name\"");
      Field field;
      field.name = nit->get<std::string>();
      if (!IsValidName(field.name))
        return Error(fpath, "invalid field name " + Quote(field.name));
      if (!names.insert(field.name).second) {
        return Error(fpath, "record " + full + " has more than one field named " +
                                Quote(field.name));
      }
      FLOE_ASSIGN_OR_RAISE(field.doc, OptionalString(fj, "doc", fpath));
      if (auto ait = fj.find("aliases"); ait != fj.end() && !ait->is_null()) {
        if (!ait->is_array()) {
          return Error(fpath + ".aliases", "\"aliases\" must be an array of names");
        }
        for (size_t a = 0; a < ait->size(); ++a) {
          const Json& aj = (*ait)[a];
          const std::string apath = fpath + ".aliases[" + std::to_string(a) + "]";
          if (!aj.is_string()) return Error(apath, "an alias must be a string");
          std::string alias = aj.get<std::string>();
          if (!IsValidName(alias)) return Error(apath, "invalid alias " + Quote(alias));
          if (alias == field.name || std::find(field.aliases.begin(), field.aliases.end(),
                                               alias) != field.aliases.end()) {
            continue;
          }
          field.aliases.push_back(std::move(alias));
        }
      }
      auto tit = fj.find("type");
      if (tit == fj.end())
        return Error(fpath, "field " + Quote(field.name) + " has no \"type\"");
      FLOE_ASSIGN_OR_RAISE(field.type, Parse(*tit, fpath + ".type", own_ns, depth + 1));
      FLOE_ASSIGN_OR_RAISE(field.field_id, IdAttribute(fj, "field-id", fpath));
      field.has_default = fj.contains("default");
      node->fields.push_back(std::move(field));
    }
    in_progress_.erase(full);
    defined_[full] = node;
    return node;
  }

  Result<Node*> ParseEnum(const Json& j, const std::string& path, const std::string& ns) {
    std::string own_ns;
    FLOE_ASSIGN_OR_RAISE(Node * node, NewNamed(Type::kEnum, j, path, ns, &own_ns));
    const std::string& full = node->full_name;
    auto sit = j.find("symbols");
    if (sit == j.end() || !sit->is_array() || sit->empty()) {
      return Error(path, "enum " + full + " needs a non-empty \"symbols\" array");
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

  Result<Node*> ParseFixed(const Json& j, const std::string& path,
                           const std::string& ns) {
    std::string own_ns;
    FLOE_ASSIGN_OR_RAISE(Node * node, NewNamed(Type::kFixed, j, path, ns, &own_ns));
    const std::string& full = node->full_name;
    auto sit = j.find("size");
    if (sit == j.end() || !sit->is_number_integer() || sit->get<int64_t>() < 0 ||
        sit->get<int64_t>() > kMaxFixedSize) {
      return Error(path, "fixed " + full +
                             " needs a non-negative integer \"size\" of at most 16 MiB");
    }
    node->size = static_cast<int32_t>(sit->get<int64_t>());
    FLOE_RETURN_NOT_OK(ApplyLogicalType(j, path, node));
    defined_[full] = node;
    return node;
  }

  // Lower bound of a value's encoded size; a node being computed (recursion) counts 0.
  static int64_t MinBytes(Node* n) {
    if (n->min_bytes >= 0) return n->min_bytes;
    n->min_bytes = 0;
    int64_t m = 0;
    switch (n->type) {
      case Type::kNull:
        m = 0;
        break;
      case Type::kFloat:
        m = 4;
        break;
      case Type::kDouble:
        m = 8;
        break;
      case Type::kFixed:
        m = n->size;
        break;
      case Type::kRecord:
        for (const auto& f : n->fields) {
          m = std::min<int64_t>(m + MinBytes(const_cast<Node*>(f.type)), 1 << 30);
        }
        break;
      case Type::kUnion: {
        int64_t best = std::numeric_limits<int64_t>::max();
        for (const Node* b : n->branches)
          best = std::min(best, MinBytes(const_cast<Node*>(b)));
        m = 1 + best;
        break;
      }
      default:
        m = 1;
        break;  // boolean, int, long, bytes, string, enum, array/map end marker
    }
    n->min_bytes = m;
    return m;
  }

  const ParseOptions options_;
  std::vector<std::unique_ptr<Node>>* nodes_;
  std::unordered_map<std::string, Node*> defined_;
  std::unordered_set<std::string> in_progress_;
};

}  // namespace

const char* TypeName(Type type) {
  switch (type) {
    case Type::kNull:
      return "null";
    case Type::kBoolean:
      return "boolean";
    case Type::kInt:
      return "int";
    case Type::kLong:
      return "long";
    case Type::kFloat:
      return "float";
    case Type::kDouble:
      return "double";
    case Type::kBytes:
      return "bytes";
    case Type::kString:
      return "string";
    case Type::kRecord:
      return "record";
    case Type::kEnum:
      return "enum";
    case Type::kArray:
      return "array";
    case Type::kMap:
      return "map";
    case Type::kFixed:
      return "fixed";
    case Type::kUnion:
      return "union";
  }
  return "unknown";
}

int Node::NullBranch() const {
  if (type != Type::kUnion || branches.size() != 2) return -1;
  const bool first = branches[0]->type == Type::kNull;
  const bool second = branches[1]->type == Type::kNull;
  if (first == second) return -1;
  return first ? 0 : 1;
}

int Node::FindNullBranch() const {
  if (type != Type::kUnion) return -1;
  for (size_t i = 0; i < branches.size(); ++i) {
    if (branches[i]->type == Type::kNull) return static_cast<int>(i);
  }
  return -1;
}

const Node& Node::NonNullBranch() const {
  return *branches.at(NullBranch() == 0 ? 1 : 0);
}

int Node::FieldIndex(std::string_view field_name) const {
  for (size_t i = 0; i < fields.size(); ++i) {
    if (fields[i].name == field_name) return static_cast<int>(i);
  }
  return -1;
}

int Node::FieldIndexById(int id) const {
  for (size_t i = 0; i < fields.size(); ++i) {
    if (fields[i].field_id == id) return static_cast<int>(i);
  }
  return -1;
}

std::string DescribeType(const Node& n) {
  switch (n.logical_type) {
    case LogicalType::kNone:
      break;
    case LogicalType::kDate:
      return "date";
    case LogicalType::kTimeMillis:
      return "time-millis";
    case LogicalType::kTimeMicros:
      return "time-micros";
    case LogicalType::kTimestampMillis:
      return "timestamp-millis";
    case LogicalType::kTimestampMicros:
      return "timestamp-micros";
    case LogicalType::kLocalTimestampMillis:
      return "local-timestamp-millis";
    case LogicalType::kLocalTimestampMicros:
      return "local-timestamp-micros";
    case LogicalType::kDecimal:
      return "decimal(" + std::to_string(n.precision) + "," + std::to_string(n.scale) +
             ")";
    case LogicalType::kUuid:
      return "uuid";
  }
  switch (n.type) {
    case Type::kRecord:
    case Type::kEnum:
      return std::string(TypeName(n.type)) + " " + n.full_name;
    case Type::kFixed:
      return "fixed " + n.full_name + "(" + std::to_string(n.size) + ")";
    default:
      return TypeName(n.type);
  }
}

const std::string& Schema::json() const { return graph_->json; }

Result<Schema> Schema::Parse(std::string_view json, const ParseOptions& options) {
  Json j;
  try {
    j = Json::parse(json);
  } catch (const Json::exception& e) {
    return Status::Invalid("Avro schema at $: not valid JSON: ", e.what());
  }
  auto graph = std::make_shared<Graph>();
  graph->json = std::string(json);
  Parser parser(options, &graph->nodes);
  Node* root = nullptr;
  try {
    FLOE_ASSIGN_OR_RAISE(root, parser.Parse(j, "$", "", 1));
  } catch (const Json::exception& e) {
    // The parser checks every JSON type before it reads a value; this is a safety net.
    return Status::Invalid("Avro schema at $: ", e.what());
  }
  parser.Finish();
  return Schema(std::move(graph), root);
}

}  // namespace floe::avro
