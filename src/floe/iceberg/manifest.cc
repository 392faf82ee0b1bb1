#include "floe/iceberg/manifest.h"

#include <set>

#include "floe/iceberg/avro_file.h"
#include "floe/iceberg/json_internal.h"
#include "floe/iceberg/partition_values_internal.h"
#include "floe/iceberg/schema_json.h"

namespace floe::iceberg {

using avro::Encoder;
using avro::Node;
using avro_file::Datum;
using AvroType = avro::Type;
using internal::AvroName;
using internal::EncodePartitionValue;
using internal::Json;
using internal::PartitionAvroType;
using internal::PartitionValueFromDatum;
using internal::Summarize;

namespace {

// ---------------------------------------------------------------------------------------
// Avro schemas of manifest_entry and manifest_file

Json Optional(Json type) { return Json::array({"null", std::move(type)}); }

Json AvroField(const std::string& name, Json type, int id, bool optional) {
  Json f = Json::object();
  f["name"] = name;
  f["field-id"] = id;
  if (optional) {
    f["type"] = Optional(std::move(type));
    f["default"] = nullptr;
  } else {
    f["type"] = std::move(type);
  }
  return f;
}

Json IntKeyedMap(int key_id, Json value_type, int value_id) {
  Json rec = Json::object();
  rec["type"] = "record";
  rec["name"] = "k" + std::to_string(key_id) + "_v" + std::to_string(value_id);
  rec["fields"] =
      Json::array({AvroField("key", "int", key_id, false),
                   AvroField("value", std::move(value_type), value_id, false)});
  return Json{{"type", "array"}, {"logicalType", "map"}, {"items", std::move(rec)}};
}

Json AvroList(Json items, int element_id) {
  return Json{{"type", "array"}, {"items", std::move(items)}, {"element-id", element_id}};
}

Result<std::string> ManifestEntrySchema(const PartitionSpec& spec,
                                        const std::vector<TypePtr>& types) {
  Json partition_fields = Json::array();
  std::set<std::string> named;
  for (size_t i = 0; i < spec.fields.size(); ++i) {
    FLOE_ASSIGN_OR_RAISE(Json t, PartitionAvroType(*types[i], &named));
    partition_fields.push_back(AvroField(AvroName(spec.fields[i].name), std::move(t),
                                         spec.fields[i].field_id, true));
  }
  Json partition =
      Json{{"type", "record"}, {"name", "r102"}, {"fields", std::move(partition_fields)}};
  Json data_file_fields = Json::array({
      AvroField("content", "int", 134, false),
      AvroField("file_path", "string", 100, false),
      AvroField("file_format", "string", 101, false),
      AvroField("partition", std::move(partition), 102, false),
      AvroField("record_count", "long", 103, false),
      AvroField("file_size_in_bytes", "long", 104, false),
      AvroField("column_sizes", IntKeyedMap(117, "long", 118), 108, true),
      AvroField("value_counts", IntKeyedMap(119, "long", 120), 109, true),
      AvroField("null_value_counts", IntKeyedMap(121, "long", 122), 110, true),
      AvroField("nan_value_counts", IntKeyedMap(138, "long", 139), 137, true),
      AvroField("lower_bounds", IntKeyedMap(126, "bytes", 127), 125, true),
      AvroField("upper_bounds", IntKeyedMap(129, "bytes", 130), 128, true),
      AvroField("key_metadata", "bytes", 131, true),
      AvroField("split_offsets", AvroList("long", 133), 132, true),
      AvroField("equality_ids", AvroList("int", 136), 135, true),
      AvroField("sort_order_id", "int", 140, true),
      AvroField("referenced_data_file", "string", 143, true),
  });
  Json data_file =
      Json{{"type", "record"}, {"name", "r2"}, {"fields", std::move(data_file_fields)}};
  Json entry = Json::object();
  entry["type"] = "record";
  entry["name"] = "manifest_entry";
  entry["fields"] = Json::array({
      AvroField("status", "int", 0, false),
      AvroField("snapshot_id", "long", 1, true),
      AvroField("sequence_number", "long", 3, true),
      AvroField("file_sequence_number", "long", 4, true),
      AvroField("data_file", std::move(data_file), 2, false),
  });
  return internal::Dump(entry);
}

const std::string& ManifestListSchema() {
  static const std::string kSchema = [] {
    Json summary = Json{{"type", "record"},
                        {"name", "r508"},
                        {"fields", Json::array({
                                       AvroField("contains_null", "boolean", 509, false),
                                       AvroField("contains_nan", "boolean", 518, true),
                                       AvroField("lower_bound", "bytes", 510, true),
                                       AvroField("upper_bound", "bytes", 511, true),
                                   })}};
    Json list = Json::object();
    list["type"] = "record";
    list["name"] = "manifest_file";
    list["fields"] = Json::array({
        AvroField("manifest_path", "string", 500, false),
        AvroField("manifest_length", "long", 501, false),
        AvroField("partition_spec_id", "int", 502, false),
        AvroField("content", "int", 517, false),
        AvroField("sequence_number", "long", 515, false),
        AvroField("min_sequence_number", "long", 516, false),
        AvroField("added_snapshot_id", "long", 503, false),
        AvroField("added_files_count", "int", 504, false),
        AvroField("existing_files_count", "int", 505, false),
        AvroField("deleted_files_count", "int", 506, false),
        AvroField("added_rows_count", "long", 512, false),
        AvroField("existing_rows_count", "long", 513, false),
        AvroField("deleted_rows_count", "long", 514, false),
        AvroField("partitions", AvroList(std::move(summary), 508), 507, true),
        AvroField("key_metadata", "bytes", 519, true),
    });
    return internal::Dump(list);
  }();
  return kSchema;
}

// ---------------------------------------------------------------------------------------
// Encoding helpers (field order must follow the schemas above)

void OptLong(Encoder* e, const std::optional<int64_t>& v) {
  if (!v) {
    e->WriteUnionIndex(0);
    return;
  }
  e->WriteUnionIndex(1);
  e->WriteLong(*v);
}

void OptInt(Encoder* e, const std::optional<int>& v) {
  if (!v) {
    e->WriteUnionIndex(0);
    return;
  }
  e->WriteUnionIndex(1);
  e->WriteInt(*v);
}

void OptBytes(Encoder* e, const std::optional<std::string>& v) {
  if (!v) {
    e->WriteUnionIndex(0);
    return;
  }
  e->WriteUnionIndex(1);
  e->WriteBytes(*v);
}

void CountMap(Encoder* e, const std::map<int, int64_t>& m) {
  if (m.empty()) {
    e->WriteUnionIndex(0);
    return;
  }
  e->WriteUnionIndex(1);
  e->StartBlock(static_cast<int64_t>(m.size()));
  for (const auto& [k, v] : m) {
    e->WriteInt(k);
    e->WriteLong(v);
  }
  e->EndBlocks();
}

void BoundMap(Encoder* e, const std::map<int, std::string>& m) {
  if (m.empty()) {
    e->WriteUnionIndex(0);
    return;
  }
  e->WriteUnionIndex(1);
  e->StartBlock(static_cast<int64_t>(m.size()));
  for (const auto& [k, v] : m) {
    e->WriteInt(k);
    e->WriteBytes(v);
  }
  e->EndBlocks();
}

template <typename T>
void OptList(Encoder* e, const std::vector<T>& v) {
  if (v.empty()) {
    e->WriteUnionIndex(0);
    return;
  }
  e->WriteUnionIndex(1);
  e->StartBlock(static_cast<int64_t>(v.size()));
  for (const T& x : v) e->WriteLong(x);  // int and long share the varint encoding
  e->EndBlocks();
}

Status EncodeEntry(const ManifestEntry& entry, const PartitionSpec& spec,
                   const std::vector<TypePtr>& types, Encoder* e) {
  const DataFile& f = entry.data_file;
  if (f.partition.size() != spec.fields.size()) {
    return InvalidInput("data file " + f.file_path + " has " +
                        std::to_string(f.partition.size()) + " partition values, spec " +
                        std::to_string(spec.spec_id) + " has " +
                        std::to_string(spec.fields.size()) + " fields");
  }
  if (entry.status != ManifestEntryStatus::kAdded &&
      (!entry.sequence_number || !entry.file_sequence_number)) {
    // Spec "Manifest Entry Fields": only ADDED entries may inherit sequence numbers.
    return InvalidInput("existing/deleted entry for " + f.file_path +
                        " lacks sequence numbers");
  }
  e->WriteInt(static_cast<int>(entry.status));
  OptLong(e, entry.snapshot_id);
  OptLong(e, entry.sequence_number);
  OptLong(e, entry.file_sequence_number);
  e->WriteInt(f.content);
  e->WriteString(f.file_path);
  e->WriteString(f.file_format);
  for (size_t i = 0; i < spec.fields.size(); ++i) {
    if (!f.partition[i]) {
      e->WriteUnionIndex(0);
      continue;
    }
    e->WriteUnionIndex(1);
    FLOE_RETURN_NOT_OK(
        EncodePartitionValue(*types[i], spec.fields[i].name, *f.partition[i], e));
  }
  e->WriteLong(f.record_count);
  e->WriteLong(f.file_size_in_bytes);
  CountMap(e, f.column_sizes);
  CountMap(e, f.value_counts);
  CountMap(e, f.null_value_counts);
  CountMap(e, f.nan_value_counts);
  BoundMap(e, f.lower_bounds);
  BoundMap(e, f.upper_bounds);
  OptBytes(e, f.key_metadata);
  OptList(e, f.split_offsets);
  OptList(e, f.equality_ids);
  OptInt(e, f.sort_order_id);
  OptBytes(e, f.referenced_data_file);  // a string encodes like bytes
  return Status::OK();
}

Result<std::vector<TypePtr>> PartitionTypes(const PartitionSpec& spec,
                                            const Schema& schema) {
  std::vector<TypePtr> types;
  for (const auto& f : spec.fields) {
    FLOE_ASSIGN_OR_RAISE(auto t, PartitionFieldResultType(f, schema));
    types.push_back(std::move(t));
  }
  return types;
}

// ---------------------------------------------------------------------------------------
// Decoding helpers

const Node* Resolve(const Node* n, const Datum& d) {
  if (n && n->type == AvroType::kUnion && d.branch >= 0 &&
      d.branch < static_cast<int>(n->branches.size())) {
    return n->branches[d.branch];
  }
  return n;
}

int FindField(const Node& rec, int id, const char* name) {
  int i = rec.FieldIndexById(id);
  return i >= 0 ? i : rec.FieldIndex(name);
}

// The value of field `idx` of a record datum, nullptr when the field is absent or null.
const Datum* Get(const Datum& rec, int idx) {
  if (idx < 0 || idx >= static_cast<int>(rec.items.size())) return nullptr;
  const Datum& d = rec.items[idx];
  return d.is_null() ? nullptr : &d;
}

bool IsIntegral(const Datum* d) {
  return d && (d->kind == AvroType::kInt || d->kind == AvroType::kLong);
}

bool IsBinary(const Datum& d) {
  return d.kind == AvroType::kBytes || d.kind == AvroType::kString ||
         d.kind == AvroType::kFixed;
}

Status BadField(const char* what, const char* field) {
  return InvalidInput(std::string(what) + ": field '" + field +
                      "' is missing or has the wrong type");
}

Result<int64_t> RequiredInt(const Datum& rec, int idx, const char* what,
                            const char* field) {
  const Datum* d = Get(rec, idx);
  if (!IsIntegral(d)) return BadField(what, field);
  return d->integer;
}

std::optional<int64_t> OptionalInt(const Datum& rec, int idx) {
  const Datum* d = Get(rec, idx);
  if (!IsIntegral(d)) return std::nullopt;
  return d->integer;
}

Result<std::string> RequiredString(const Datum& rec, int idx, const char* what,
                                   const char* field) {
  const Datum* d = Get(rec, idx);
  if (!d || (d->kind != AvroType::kString && d->kind != AvroType::kBytes))
    return BadField(what, field);
  return d->bytes;
}

std::optional<std::string> OptionalBytes(const Datum& rec, int idx) {
  const Datum* d = Get(rec, idx);
  if (!d || !IsBinary(*d)) return std::nullopt;
  return d->bytes;
}

// An int-keyed map stored as array<record{key, value}> (or, leniently, an Avro map).
template <typename V, typename Conv>
Status ReadIntMap(const Node& rec_node, const Datum& rec, int idx, std::map<int, V>* out,
                  Conv conv) {
  const Datum* d = Get(rec, idx);
  if (!d) return Status::OK();
  const Node* n = Resolve(rec_node.fields[idx].type, *d);
  if (d->kind == AvroType::kArray && n->type == AvroType::kArray &&
      n->items->type == AvroType::kRecord) {
    const Node& kv = *n->items;
    int ki = kv.FieldIndex("key"), vi = kv.FieldIndex("value");
    if (ki < 0 || vi < 0)
      return InvalidInput("manifest: map entries without key/value fields");
    for (const auto& item : d->items) {
      const Datum* k = Get(item, ki);
      const Datum* v = Get(item, vi);
      if (!IsIntegral(k) || !v) continue;
      V value;
      if (!conv(*v, &value))
        return InvalidInput("manifest: map value of unexpected type");
      (*out)[static_cast<int>(k->integer)] = std::move(value);
    }
    return Status::OK();
  }
  if (d->kind == AvroType::kMap) {
    for (size_t i = 0; i < d->items.size(); ++i) {
      V value;
      if (!conv(d->items[i], &value))
        return InvalidInput("manifest: map value of unexpected type");
      try {
        (*out)[std::stoi(d->keys[i])] = std::move(value);
      } catch (const std::exception&) {
        return InvalidInput("manifest: non-integer map key '" + d->keys[i] + "'");
      }
    }
    return Status::OK();
  }
  return InvalidInput("manifest: metrics map of unexpected Avro type");
}

bool ToLong(const Datum& d, int64_t* out) {
  if (!IsIntegral(&d)) return false;
  *out = d.integer;
  return true;
}

bool ToBytes(const Datum& d, std::string* out) {
  if (!IsBinary(d)) return false;
  *out = d.bytes;
  return true;
}

template <typename T>
void ReadList(const Datum& rec, int idx, std::vector<T>* out) {
  const Datum* d = Get(rec, idx);
  if (!d || d->kind != AvroType::kArray) return;
  for (const auto& item : d->items) {
    if (IsIntegral(&item)) out->push_back(static_cast<T>(item.integer));
  }
}

Result<int> HeaderInt(const avro_file::Reader& r, const char* key, int fallback) {
  const std::string* v = r.FindMetadata(key);
  if (!v) return fallback;
  try {
    size_t pos = 0;
    int x = std::stoi(*v, &pos);
    if (pos != v->size()) throw std::invalid_argument(*v);
    return x;
  } catch (const std::exception&) {
    return InvalidInput(std::string("manifest: header ") + key +
                        " is not an integer: " + *v);
  }
}

}  // namespace

// ---------------------------------------------------------------------------------------
// Public API

Result<TypePtr> PartitionFieldResultType(const PartitionField& field,
                                         const Schema& schema) {
  const NestedField* source = schema.FindField(field.source_id);
  const std::string& t = field.transform;
  auto source_type = [&]() -> Result<TypePtr> {
    if (!source) {
      return InvalidInput("partition field '" + field.name + "': source id " +
                          std::to_string(field.source_id) + " is not in the schema");
    }
    if (!source->type->is_primitive()) {
      return InvalidInput("partition field '" + field.name +
                          "': source is not a primitive");
    }
    return source->type;
  };
  if (t == "identity" || t == "void" || t.rfind("truncate[", 0) == 0)
    return source_type();
  if (t.rfind("bucket[", 0) == 0 || t == "year" || t == "month" || t == "hour") {
    return Type::Primitive(TypeId::kInt);
  }
  if (t == "day") return Type::Primitive(TypeId::kDate);
  return InvalidInput("partition field '" + field.name + "' has unknown transform '" + t +
                      "'");
}

Result<std::string> EncodeManifest(const Schema& schema, const PartitionSpec& spec,
                                   ManifestContent content,
                                   const std::vector<ManifestEntry>& entries) {
  FLOE_ASSIGN_OR_RAISE(auto types, PartitionTypes(spec, schema));
  FLOE_ASSIGN_OR_RAISE(std::string avro_schema, ManifestEntrySchema(spec, types));
  std::vector<std::pair<std::string, std::string>> meta = {
      {"schema", SchemaToJsonString(schema)},
      {"schema-id", std::to_string(schema.schema_id)},
      {"partition-spec", internal::Dump(PartitionFieldsToJson(spec.fields))},
      {"partition-spec-id", std::to_string(spec.spec_id)},
      {"format-version", "2"},
      {"content", content == ManifestContent::kData ? "data" : "deletes"},
  };
  FLOE_ASSIGN_OR_RAISE(auto writer, avro_file::Writer::Make(avro_schema, meta));
  for (const auto& entry : entries) {
    FLOE_RETURN_NOT_OK(EncodeEntry(entry, spec, types, &writer->encoder()));
    writer->EndRecord();
  }
  return writer->Finish();
}

Result<Manifest> DecodeManifest(std::string_view bytes) {
  FLOE_ASSIGN_OR_RAISE(auto reader, avro_file::Reader::Open(std::string(bytes)));
  Manifest m;
  if (const auto* s = reader->FindMetadata("schema")) m.schema_json = *s;
  if (const auto* s = reader->FindMetadata("partition-spec")) m.partition_spec_json = *s;
  FLOE_ASSIGN_OR_RAISE(m.schema_id, HeaderInt(*reader, "schema-id", 0));
  FLOE_ASSIGN_OR_RAISE(m.partition_spec_id, HeaderInt(*reader, "partition-spec-id", 0));
  FLOE_ASSIGN_OR_RAISE(m.format_version, HeaderInt(*reader, "format-version", 1));
  if (const auto* c = reader->FindMetadata("content"); c && *c == "deletes") {
    m.content = ManifestContent::kDeletes;
  }
  const char* what = "manifest entry";
  const Node& root = reader->schema().root();
  if (root.type != AvroType::kRecord)
    return InvalidInput("manifest: entry schema is not a record");
  const int i_status = FindField(root, 0, "status");
  const int i_snapshot = FindField(root, 1, "snapshot_id");
  const int i_seq = FindField(root, 3, "sequence_number");
  const int i_file_seq = FindField(root, 4, "file_sequence_number");
  const int i_df = FindField(root, 2, "data_file");
  if (i_status < 0 || i_df < 0)
    return InvalidInput("manifest: entry schema lacks status or data_file");
  const Node* df = root.fields[i_df].type;
  if (df->type != AvroType::kRecord)
    return InvalidInput("manifest: data_file is not a record");
  const int f_content = FindField(*df, 134, "content");
  const int f_path = FindField(*df, 100, "file_path");
  const int f_format = FindField(*df, 101, "file_format");
  const int f_partition = FindField(*df, 102, "partition");
  const int f_records = FindField(*df, 103, "record_count");
  const int f_size = FindField(*df, 104, "file_size_in_bytes");
  const int f_col_sizes = FindField(*df, 108, "column_sizes");
  const int f_value_counts = FindField(*df, 109, "value_counts");
  const int f_null_counts = FindField(*df, 110, "null_value_counts");
  const int f_nan_counts = FindField(*df, 137, "nan_value_counts");
  const int f_lower = FindField(*df, 125, "lower_bounds");
  const int f_upper = FindField(*df, 128, "upper_bounds");
  const int f_key_meta = FindField(*df, 131, "key_metadata");
  const int f_splits = FindField(*df, 132, "split_offsets");
  const int f_eq_ids = FindField(*df, 135, "equality_ids");
  const int f_sort = FindField(*df, 140, "sort_order_id");
  const int f_ref = FindField(*df, 143, "referenced_data_file");
  const Node* partition_node = f_partition >= 0 ? df->fields[f_partition].type : nullptr;
  if (partition_node && partition_node->type != AvroType::kRecord) {
    return InvalidInput("manifest: partition is not a record");
  }

  Datum d;
  while (true) {
    FLOE_ASSIGN_OR_RAISE(bool more, reader->Next(&d));
    if (!more) break;
    ManifestEntry e;
    FLOE_ASSIGN_OR_RAISE(int64_t status, RequiredInt(d, i_status, what, "status"));
    if (status < 0 || status > 2)
      return InvalidInput("manifest: invalid entry status " + std::to_string(status));
    e.status = static_cast<ManifestEntryStatus>(status);
    e.snapshot_id = OptionalInt(d, i_snapshot);
    e.sequence_number = OptionalInt(d, i_seq);
    e.file_sequence_number = OptionalInt(d, i_file_seq);
    const Datum* fd = Get(d, i_df);
    if (!fd || fd->kind != AvroType::kRecord) return BadField(what, "data_file");
    DataFile& f = e.data_file;
    f.content = static_cast<int>(OptionalInt(*fd, f_content).value_or(0));
    FLOE_ASSIGN_OR_RAISE(f.file_path, RequiredString(*fd, f_path, what, "file_path"));
    FLOE_ASSIGN_OR_RAISE(f.file_format,
                         RequiredString(*fd, f_format, what, "file_format"));
    FLOE_ASSIGN_OR_RAISE(f.record_count,
                         RequiredInt(*fd, f_records, what, "record_count"));
    FLOE_ASSIGN_OR_RAISE(f.file_size_in_bytes,
                         RequiredInt(*fd, f_size, what, "file_size_in_bytes"));
    if (const Datum* p = Get(*fd, f_partition)) {
      for (size_t i = 0; i < p->items.size() && i < partition_node->fields.size(); ++i) {
        FLOE_ASSIGN_OR_RAISE(
            auto v, PartitionValueFromDatum(partition_node->fields[i].type, p->items[i]));
        f.partition.push_back(std::move(v));
      }
    }
    FLOE_RETURN_NOT_OK(
        ReadIntMap<int64_t>(*df, *fd, f_col_sizes, &f.column_sizes, ToLong));
    FLOE_RETURN_NOT_OK(
        ReadIntMap<int64_t>(*df, *fd, f_value_counts, &f.value_counts, ToLong));
    FLOE_RETURN_NOT_OK(
        ReadIntMap<int64_t>(*df, *fd, f_null_counts, &f.null_value_counts, ToLong));
    FLOE_RETURN_NOT_OK(
        ReadIntMap<int64_t>(*df, *fd, f_nan_counts, &f.nan_value_counts, ToLong));
    FLOE_RETURN_NOT_OK(
        ReadIntMap<std::string>(*df, *fd, f_lower, &f.lower_bounds, ToBytes));
    FLOE_RETURN_NOT_OK(
        ReadIntMap<std::string>(*df, *fd, f_upper, &f.upper_bounds, ToBytes));
    f.key_metadata = OptionalBytes(*fd, f_key_meta);
    ReadList(*fd, f_splits, &f.split_offsets);
    ReadList(*fd, f_eq_ids, &f.equality_ids);
    if (auto s = OptionalInt(*fd, f_sort)) f.sort_order_id = static_cast<int>(*s);
    f.referenced_data_file = OptionalBytes(*fd, f_ref);
    m.entries.push_back(std::move(e));
  }
  return m;
}

Result<ManifestFile> WriteManifest(storage::FileIO& io, const std::string& location,
                                   const Schema& schema, const PartitionSpec& spec,
                                   int64_t added_snapshot_id,
                                   const std::vector<ManifestEntry>& entries,
                                   ManifestContent content) {
  FLOE_ASSIGN_OR_RAISE(std::string bytes, EncodeManifest(schema, spec, content, entries));
  FLOE_ASSIGN_OR_RAISE(auto types, PartitionTypes(spec, schema));
  ManifestFile mf;
  mf.manifest_path = location;
  mf.manifest_length = static_cast<int64_t>(bytes.size());
  mf.partition_spec_id = spec.spec_id;
  mf.content = content;
  mf.added_snapshot_id = added_snapshot_id;
  mf.sequence_number = kUnassignedSequenceNumber;
  mf.min_sequence_number = kUnassignedSequenceNumber;
  for (const auto& e : entries) {
    switch (e.status) {
      case ManifestEntryStatus::kAdded:
        ++mf.added_files_count;
        mf.added_rows_count += e.data_file.record_count;
        break;
      case ManifestEntryStatus::kExisting:
        ++mf.existing_files_count;
        mf.existing_rows_count += e.data_file.record_count;
        break;
      case ManifestEntryStatus::kDeleted:
        ++mf.deleted_files_count;
        mf.deleted_rows_count += e.data_file.record_count;
        break;
    }
    // Minimum data sequence number of the live entries that carry one; entries that
    // inherit get the snapshot's, which is never below an explicit one.
    if (e.is_live() && e.sequence_number &&
        (mf.min_sequence_number == kUnassignedSequenceNumber ||
         *e.sequence_number < mf.min_sequence_number)) {
      mf.min_sequence_number = *e.sequence_number;
    }
  }
  mf.partitions = Summarize(types, entries);
  FLOE_RETURN_NOT_OK(io.WriteNew(location, bytes));
  return mf;
}

Result<std::vector<ManifestEntry>> ReadManifestEntries(storage::FileIO& io,
                                                       const ManifestFile& manifest) {
  FLOE_ASSIGN_OR_RAISE(std::string bytes, io.Read(manifest.manifest_path));
  auto decoded = DecodeManifest(bytes);
  if (!decoded.ok()) {
    return decoded.status().WithMessage(decoded.status().message(), " (in ",
                                        manifest.manifest_path, ")");
  }
  Manifest m = std::move(decoded).ValueOrDie();
  const bool v1 = m.format_version < 2;
  for (auto& e : m.entries) {
    if (!e.snapshot_id) e.snapshot_id = manifest.added_snapshot_id;
    if (v1) {
      // Appendix E: v1 entries read with sequence numbers 0.
      if (!e.sequence_number) e.sequence_number = 0;
      if (!e.file_sequence_number) e.file_sequence_number = 0;
      continue;
    }
    bool inherit =
        e.status == ManifestEntryStatus::kAdded || manifest.sequence_number == 0;
    if (inherit && manifest.sequence_number != kUnassignedSequenceNumber) {
      if (!e.sequence_number) e.sequence_number = manifest.sequence_number;
      if (!e.file_sequence_number) e.file_sequence_number = manifest.sequence_number;
    }
  }
  return std::move(m.entries);
}

Result<std::string> EncodeManifestList(int64_t snapshot_id,
                                       std::optional<int64_t> parent_snapshot_id,
                                       int64_t sequence_number,
                                       const std::vector<ManifestFile>& manifests) {
  std::vector<std::pair<std::string, std::string>> meta = {
      {"snapshot-id", std::to_string(snapshot_id)},
      // Java writes the string "null" for a snapshot without parent.
      {"parent-snapshot-id",
       parent_snapshot_id ? std::to_string(*parent_snapshot_id) : "null"},
      {"sequence-number", std::to_string(sequence_number)},
      {"format-version", "2"},
  };
  FLOE_ASSIGN_OR_RAISE(auto writer, avro_file::Writer::Make(ManifestListSchema(), meta));
  for (const auto& m : manifests) {
    if (m.has_unknown_counts()) {
      return InvalidInput("manifest " + m.manifest_path +
                          " has unknown file or row counts");
    }
    int64_t seq = m.sequence_number == kUnassignedSequenceNumber ? sequence_number
                                                                 : m.sequence_number;
    int64_t min_seq =
        m.min_sequence_number == kUnassignedSequenceNumber ? seq : m.min_sequence_number;
    Encoder& e = writer->encoder();
    e.WriteString(m.manifest_path);
    e.WriteLong(m.manifest_length);
    e.WriteInt(m.partition_spec_id);
    e.WriteInt(static_cast<int>(m.content));
    e.WriteLong(seq);
    e.WriteLong(min_seq);
    e.WriteLong(m.added_snapshot_id);
    e.WriteInt(m.added_files_count);
    e.WriteInt(m.existing_files_count);
    e.WriteInt(m.deleted_files_count);
    e.WriteLong(m.added_rows_count);
    e.WriteLong(m.existing_rows_count);
    e.WriteLong(m.deleted_rows_count);
    e.WriteUnionIndex(1);
    e.StartBlock(static_cast<int64_t>(m.partitions.size()));
    for (const auto& p : m.partitions) {
      e.WriteBoolean(p.contains_null);
      if (p.contains_nan) {
        e.WriteUnionIndex(1);
        e.WriteBoolean(*p.contains_nan);
      } else {
        e.WriteUnionIndex(0);
      }
      OptBytes(&e, p.lower_bound);
      OptBytes(&e, p.upper_bound);
    }
    e.EndBlocks();
    OptBytes(&e, m.key_metadata);
    writer->EndRecord();
  }
  return writer->Finish();
}

Result<std::vector<ManifestFile>> DecodeManifestList(std::string_view bytes) {
  FLOE_ASSIGN_OR_RAISE(auto reader, avro_file::Reader::Open(std::string(bytes)));
  FLOE_ASSIGN_OR_RAISE(int format_version, HeaderInt(*reader, "format-version", 1));
  const char* what = "manifest list entry";
  const Node& root = reader->schema().root();
  if (root.type != AvroType::kRecord)
    return InvalidInput("manifest list: schema is not a record");
  const int i_path = FindField(root, 500, "manifest_path");
  const int i_length = FindField(root, 501, "manifest_length");
  const int i_spec = FindField(root, 502, "partition_spec_id");
  const int i_content = FindField(root, 517, "content");
  const int i_seq = FindField(root, 515, "sequence_number");
  const int i_min_seq = FindField(root, 516, "min_sequence_number");
  const int i_snapshot = FindField(root, 503, "added_snapshot_id");
  const int i_added = FindField(root, 504, "added_files_count");
  const int i_existing = FindField(root, 505, "existing_files_count");
  const int i_deleted = FindField(root, 506, "deleted_files_count");
  const int i_added_rows = FindField(root, 512, "added_rows_count");
  const int i_existing_rows = FindField(root, 513, "existing_rows_count");
  const int i_deleted_rows = FindField(root, 514, "deleted_rows_count");
  const int i_partitions = FindField(root, 507, "partitions");
  const int i_key = FindField(root, 519, "key_metadata");
  std::vector<ManifestFile> out;
  Datum d;
  while (true) {
    FLOE_ASSIGN_OR_RAISE(bool more, reader->Next(&d));
    if (!more) break;
    ManifestFile m;
    FLOE_ASSIGN_OR_RAISE(m.manifest_path,
                         RequiredString(d, i_path, what, "manifest_path"));
    FLOE_ASSIGN_OR_RAISE(m.manifest_length,
                         RequiredInt(d, i_length, what, "manifest_length"));
    FLOE_ASSIGN_OR_RAISE(int64_t spec_id,
                         RequiredInt(d, i_spec, what, "partition_spec_id"));
    m.partition_spec_id = static_cast<int>(spec_id);
    m.content = OptionalInt(d, i_content).value_or(0) == 1 ? ManifestContent::kDeletes
                                                           : ManifestContent::kData;
    if (format_version >= 2) {
      FLOE_ASSIGN_OR_RAISE(m.sequence_number,
                           RequiredInt(d, i_seq, what, "sequence_number"));
      FLOE_ASSIGN_OR_RAISE(m.min_sequence_number,
                           RequiredInt(d, i_min_seq, what, "min_sequence_number"));
    } else {
      m.sequence_number = OptionalInt(d, i_seq).value_or(0);
      m.min_sequence_number = OptionalInt(d, i_min_seq).value_or(0);
    }
    m.added_snapshot_id = OptionalInt(d, i_snapshot).value_or(0);
    m.added_files_count = static_cast<int32_t>(OptionalInt(d, i_added).value_or(-1));
    m.existing_files_count =
        static_cast<int32_t>(OptionalInt(d, i_existing).value_or(-1));
    m.deleted_files_count = static_cast<int32_t>(OptionalInt(d, i_deleted).value_or(-1));
    m.added_rows_count = OptionalInt(d, i_added_rows).value_or(-1);
    m.existing_rows_count = OptionalInt(d, i_existing_rows).value_or(-1);
    m.deleted_rows_count = OptionalInt(d, i_deleted_rows).value_or(-1);
    const Datum* parts = Get(d, i_partitions);
    if (parts && parts->kind == AvroType::kArray) {
      const Node* list = Resolve(root.fields[i_partitions].type, *parts);
      const Node* rec = list->items;
      if (rec->type != AvroType::kRecord)
        return InvalidInput("manifest list: partitions of unexpected type");
      const int p_null = FindField(*rec, 509, "contains_null");
      const int p_nan = FindField(*rec, 518, "contains_nan");
      const int p_lower = FindField(*rec, 510, "lower_bound");
      const int p_upper = FindField(*rec, 511, "upper_bound");
      for (const auto& p : parts->items) {
        PartitionFieldSummary s;
        const Datum* cn = Get(p, p_null);
        s.contains_null = cn && cn->kind == AvroType::kBoolean && cn->boolean;
        if (const Datum* nan = Get(p, p_nan); nan && nan->kind == AvroType::kBoolean)
          s.contains_nan = nan->boolean;
        s.lower_bound = OptionalBytes(p, p_lower);
        s.upper_bound = OptionalBytes(p, p_upper);
        m.partitions.push_back(std::move(s));
      }
    }
    m.key_metadata = OptionalBytes(d, i_key);
    out.push_back(std::move(m));
  }
  return out;
}

Result<std::vector<ManifestFile>> ReadManifestList(storage::FileIO& io,
                                                   const std::string& location) {
  FLOE_ASSIGN_OR_RAISE(std::string bytes, io.Read(location));
  auto decoded = DecodeManifestList(bytes);
  if (!decoded.ok()) {
    return decoded.status().WithMessage(decoded.status().message(), " (in ", location,
                                        ")");
  }
  return decoded;
}

}  // namespace floe::iceberg
