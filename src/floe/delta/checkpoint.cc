#include <arrow/api.h>
#include <arrow/io/memory.h>
#include <parquet/arrow/reader.h>
#include <parquet/arrow/writer.h>
#include <parquet/exception.h>
#include <parquet/properties.h>

#include "floe/delta/actions_internal.h"
#include "floe/delta/checkpoint_internal.h"
#include "floe/delta/json_internal.h"
#include "floe/delta/log.h"

namespace floe::delta::internal {

namespace {

// ---- Schema (delta-kernel's checkpoint schema, minus the columns Floe never fills)
// -----

std::shared_ptr<::arrow::DataType> StringMapType() {
  return ::arrow::map(::arrow::utf8(), ::arrow::field("value", ::arrow::utf8(), true));
}

std::shared_ptr<::arrow::DataType> StringListType() {
  return ::arrow::list(::arrow::field("element", ::arrow::utf8(), false));
}

std::shared_ptr<::arrow::Schema> CheckpointSchema() {
  using ::arrow::field;
  auto txn = ::arrow::struct_({field("appId", ::arrow::utf8(), false),
                               field("version", ::arrow::int64(), false),
                               field("lastUpdated", ::arrow::int64(), true)});
  auto add = ::arrow::struct_({field("path", ::arrow::utf8(), false),
                               field("partitionValues", StringMapType(), false),
                               field("size", ::arrow::int64(), false),
                               field("modificationTime", ::arrow::int64(), false),
                               field("dataChange", ::arrow::boolean(), false),
                               field("stats", ::arrow::utf8(), true),
                               field("tags", StringMapType(), true)});
  auto remove = ::arrow::struct_({field("path", ::arrow::utf8(), false),
                                  field("deletionTimestamp", ::arrow::int64(), true),
                                  field("dataChange", ::arrow::boolean(), false),
                                  field("extendedFileMetadata", ::arrow::boolean(), true),
                                  field("partitionValues", StringMapType(), true),
                                  field("size", ::arrow::int64(), true)});
  auto format = ::arrow::struct_({field("provider", ::arrow::utf8(), false),
                                  field("options", StringMapType(), false)});
  auto metadata = ::arrow::struct_(
      {field("id", ::arrow::utf8(), false), field("name", ::arrow::utf8(), true),
       field("description", ::arrow::utf8(), true), field("format", format, false),
       field("schemaString", ::arrow::utf8(), false),
       field("partitionColumns", StringListType(), false),
       field("createdTime", ::arrow::int64(), true),
       field("configuration", StringMapType(), false)});
  auto protocol = ::arrow::struct_({field("minReaderVersion", ::arrow::int32(), false),
                                    field("minWriterVersion", ::arrow::int32(), false),
                                    field("readerFeatures", StringListType(), true),
                                    field("writerFeatures", StringListType(), true)});
  return ::arrow::schema(
      {field("txn", txn, true), field("add", add, true), field("remove", remove, true),
       field("metaData", metadata, true), field("protocol", protocol, true)});
}

enum Column { kTxn = 0, kAdd, kRemove, kMetaData, kProtocol, kNumColumns };

// ---- Builders
// ---------------------------------------------------------------------------

template <typename B>
B* Child(::arrow::ArrayBuilder* parent, int i) {
  return static_cast<B*>(parent->child_builder(i).get());
}

Status AppendString(::arrow::ArrayBuilder* b, const std::string& s) {
  return static_cast<::arrow::StringBuilder*>(b)->Append(s);
}

Status AppendOptString(::arrow::ArrayBuilder* b, const std::optional<std::string>& s) {
  auto* sb = static_cast<::arrow::StringBuilder*>(b);
  return s ? sb->Append(*s) : sb->AppendNull();
}

Status AppendInt64(::arrow::ArrayBuilder* b, int64_t v) {
  return static_cast<::arrow::Int64Builder*>(b)->Append(v);
}

Status AppendOptInt64(::arrow::ArrayBuilder* b, const std::optional<int64_t>& v) {
  auto* ib = static_cast<::arrow::Int64Builder*>(b);
  return v ? ib->Append(*v) : ib->AppendNull();
}

Status AppendBool(::arrow::ArrayBuilder* b, bool v) {
  return static_cast<::arrow::BooleanBuilder*>(b)->Append(v);
}

Status AppendMap(::arrow::ArrayBuilder* b, const StringMap& m) {
  auto* mb = static_cast<::arrow::MapBuilder*>(b);
  FLOE_RETURN_NOT_OK(mb->Append());
  for (const auto& [k, v] : m) {
    FLOE_RETURN_NOT_OK(
        static_cast<::arrow::StringBuilder*>(mb->key_builder())->Append(k));
    FLOE_RETURN_NOT_OK(
        static_cast<::arrow::StringBuilder*>(mb->item_builder())->Append(v));
  }
  return Status::OK();
}

Status AppendList(::arrow::ArrayBuilder* b,
                  const std::optional<std::vector<std::string>>& v) {
  auto* lb = static_cast<::arrow::ListBuilder*>(b);
  if (!v) return lb->AppendNull();
  FLOE_RETURN_NOT_OK(lb->Append());
  for (const auto& s : *v) {
    FLOE_RETURN_NOT_OK(
        static_cast<::arrow::StringBuilder*>(lb->value_builder())->Append(s));
  }
  return Status::OK();
}

class RowWriter {
 public:
  static Result<RowWriter> Make(const std::shared_ptr<::arrow::Schema>& schema) {
    RowWriter w;
    w.schema_ = schema;
    for (const auto& f : schema->fields()) {
      FLOE_ASSIGN_OR_RAISE(auto b, ::arrow::MakeBuilder(f->type()));
      w.builders_.push_back(std::move(b));
    }
    return w;
  }

  // Starts a row whose only non-null column is `column`; returns its struct builder.
  Result<::arrow::StructBuilder*> Row(Column column) {
    for (int c = 0; c < kNumColumns; ++c) {
      if (c != column) FLOE_RETURN_NOT_OK(builders_[c]->AppendNull());
    }
    auto* sb = static_cast<::arrow::StructBuilder*>(builders_[column].get());
    FLOE_RETURN_NOT_OK(sb->Append());
    ++rows_;
    return sb;
  }

  int64_t rows() const { return rows_; }

  Result<std::shared_ptr<::arrow::Table>> Finish() {
    std::vector<std::shared_ptr<::arrow::Array>> arrays;
    for (auto& b : builders_) {
      FLOE_ASSIGN_OR_RAISE(auto a, b->Finish());
      arrays.push_back(std::move(a));
    }
    return ::arrow::Table::Make(schema_, arrays, rows_);
  }

 private:
  std::shared_ptr<::arrow::Schema> schema_;
  std::vector<std::unique_ptr<::arrow::ArrayBuilder>> builders_;
  int64_t rows_ = 0;
};

Status WriteProtocol(RowWriter* w, const Protocol& p) {
  FLOE_ASSIGN_OR_RAISE(auto* sb, w->Row(kProtocol));
  FLOE_RETURN_NOT_OK(Child<::arrow::Int32Builder>(sb, 0)->Append(p.min_reader_version));
  FLOE_RETURN_NOT_OK(Child<::arrow::Int32Builder>(sb, 1)->Append(p.min_writer_version));
  FLOE_RETURN_NOT_OK(AppendList(sb->child_builder(2).get(), p.reader_features));
  return AppendList(sb->child_builder(3).get(), p.writer_features);
}

Status WriteMetadata(RowWriter* w, const Metadata& m) {
  FLOE_ASSIGN_OR_RAISE(auto* sb, w->Row(kMetaData));
  FLOE_RETURN_NOT_OK(AppendString(sb->child_builder(0).get(), m.id));
  FLOE_RETURN_NOT_OK(AppendOptString(sb->child_builder(1).get(), m.name));
  FLOE_RETURN_NOT_OK(AppendOptString(sb->child_builder(2).get(), m.description));
  auto* format = Child<::arrow::StructBuilder>(sb, 3);
  FLOE_RETURN_NOT_OK(format->Append());
  FLOE_RETURN_NOT_OK(AppendString(format->child_builder(0).get(), m.format_provider));
  FLOE_RETURN_NOT_OK(AppendMap(format->child_builder(1).get(), m.format_options));
  FLOE_RETURN_NOT_OK(AppendString(sb->child_builder(4).get(), m.schema_string));
  FLOE_RETURN_NOT_OK(AppendList(sb->child_builder(5).get(), m.partition_columns));
  FLOE_RETURN_NOT_OK(AppendOptInt64(sb->child_builder(6).get(), m.created_time));
  return AppendMap(sb->child_builder(7).get(), m.configuration);
}

Status WriteTxn(RowWriter* w, const Txn& t) {
  FLOE_ASSIGN_OR_RAISE(auto* sb, w->Row(kTxn));
  FLOE_RETURN_NOT_OK(AppendString(sb->child_builder(0).get(), t.app_id));
  FLOE_RETURN_NOT_OK(AppendInt64(sb->child_builder(1).get(), t.version));
  return AppendOptInt64(sb->child_builder(2).get(), t.last_updated);
}

Status WriteAdd(RowWriter* w, const AddFile& a) {
  FLOE_ASSIGN_OR_RAISE(auto* sb, w->Row(kAdd));
  FLOE_RETURN_NOT_OK(AppendString(sb->child_builder(0).get(), a.path));
  FLOE_RETURN_NOT_OK(AppendMap(sb->child_builder(1).get(), a.partition_values));
  FLOE_RETURN_NOT_OK(AppendInt64(sb->child_builder(2).get(), a.size));
  FLOE_RETURN_NOT_OK(AppendInt64(sb->child_builder(3).get(), a.modification_time));
  FLOE_RETURN_NOT_OK(AppendBool(sb->child_builder(4).get(), a.data_change));
  FLOE_RETURN_NOT_OK(AppendOptString(sb->child_builder(5).get(), a.stats));
  if (a.tags.empty()) return sb->child_builder(6)->AppendNull();
  return AppendMap(sb->child_builder(6).get(), a.tags);
}

Status WriteRemove(RowWriter* w, const RemoveFile& r) {
  FLOE_ASSIGN_OR_RAISE(auto* sb, w->Row(kRemove));
  FLOE_RETURN_NOT_OK(AppendString(sb->child_builder(0).get(), r.path));
  FLOE_RETURN_NOT_OK(AppendOptInt64(sb->child_builder(1).get(), r.deletion_timestamp));
  FLOE_RETURN_NOT_OK(AppendBool(sb->child_builder(2).get(), r.data_change));
  FLOE_RETURN_NOT_OK(AppendBool(sb->child_builder(3).get(), r.extended_file_metadata));
  if (!r.extended_file_metadata) {
    FLOE_RETURN_NOT_OK(sb->child_builder(4)->AppendNull());
    return sb->child_builder(5)->AppendNull();
  }
  FLOE_RETURN_NOT_OK(AppendMap(sb->child_builder(4).get(), r.partition_values));
  return AppendOptInt64(sb->child_builder(5).get(), r.size);
}

// ---- Reading: Arrow values -> the JSON objects the log parser understands
// ---------------

Result<Json> ToJson(const ::arrow::Array& arr, int64_t i, int depth);

Result<Json> StructToJson(const ::arrow::StructArray& s, int64_t i, int depth) {
  Json obj = Json::object();
  const auto& type = *s.struct_type();
  for (int f = 0; f < type.num_fields(); ++f) {
    const std::string& name = type.field(f)->name();
    // Parsed copies of stats and partition values: the JSON text is authoritative.
    if (name == "stats_parsed" || name == "partitionValues_parsed") continue;
    FLOE_ASSIGN_OR_RAISE(Json v, ToJson(*s.field(f), i, depth + 1));
    obj[name] = std::move(v);
  }
  return obj;
}

Result<Json> ToJson(const ::arrow::Array& arr, int64_t i, int depth) {
  if (depth > 32) return InvalidInput("checkpoint nesting too deep");
  if (arr.IsNull(i)) return Json(nullptr);
  using ::arrow::Type;
  switch (arr.type_id()) {
    case Type::NA:
      return Json(nullptr);
    case Type::BOOL:
      return Json(static_cast<const ::arrow::BooleanArray&>(arr).Value(i));
    case Type::INT8:
      return Json(static_cast<const ::arrow::Int8Array&>(arr).Value(i));
    case Type::INT16:
      return Json(static_cast<const ::arrow::Int16Array&>(arr).Value(i));
    case Type::INT32:
      return Json(static_cast<const ::arrow::Int32Array&>(arr).Value(i));
    case Type::INT64:
      return Json(static_cast<const ::arrow::Int64Array&>(arr).Value(i));
    case Type::TIMESTAMP:
      return Json(static_cast<const ::arrow::TimestampArray&>(arr).Value(i));
    case Type::DOUBLE:
      return Json(static_cast<const ::arrow::DoubleArray&>(arr).Value(i));
    case Type::STRING:
      return Json(std::string(static_cast<const ::arrow::StringArray&>(arr).GetView(i)));
    case Type::LARGE_STRING:
      return Json(
          std::string(static_cast<const ::arrow::LargeStringArray&>(arr).GetView(i)));
    case Type::BINARY:
      return Json(std::string(static_cast<const ::arrow::BinaryArray&>(arr).GetView(i)));
    case Type::STRUCT:
      return StructToJson(static_cast<const ::arrow::StructArray&>(arr), i, depth);
    case Type::MAP: {
      const auto& m = static_cast<const ::arrow::MapArray&>(arr);
      Json obj = Json::object();
      for (int64_t k = m.value_offset(i); k < m.value_offset(i) + m.value_length(i);
           ++k) {
        FLOE_ASSIGN_OR_RAISE(Json key, ToJson(*m.keys(), k, depth + 1));
        if (!key.is_string()) return InvalidInput("checkpoint map with non-string keys");
        FLOE_ASSIGN_OR_RAISE(Json value, ToJson(*m.items(), k, depth + 1));
        obj[key.get<std::string>()] = std::move(value);
      }
      return obj;
    }
    case Type::LIST: {
      const auto& l = static_cast<const ::arrow::ListArray&>(arr);
      Json out = Json::array();
      for (int64_t k = l.value_offset(i); k < l.value_offset(i) + l.value_length(i);
           ++k) {
        FLOE_ASSIGN_OR_RAISE(Json v, ToJson(*l.values(), k, depth + 1));
        out.push_back(std::move(v));
      }
      return out;
    }
    default:
      // A column this library does not read (e.g. a deletion vector's fields would be
      // strings and ints; anything else is not part of the actions it models).
      return Json(nullptr);
  }
}

Result<std::vector<Action>> DecodeTable(const ::arrow::Table& table,
                                        const std::string& what) {
  std::vector<Action> out;
  // Reconciled state has one action per key, so column order does not matter; read the
  // table state first for readability of errors.
  for (const char* name : {"protocol", "metaData", "txn", "add", "remove"}) {
    auto column = table.GetColumnByName(name);
    if (!column) continue;
    for (const auto& chunk : column->chunks()) {
      for (int64_t i = 0; i < chunk->length(); ++i) {
        if (chunk->IsNull(i)) continue;
        auto body = ToJson(*chunk, i, 0);
        if (!body.ok()) return WithContext(body.status(), what);
        Json wrapper = Json::object();
        wrapper[name] = std::move(*body);
        auto action = ActionFromObject(wrapper);
        if (!action.ok()) return WithContext(action.status(), what);
        if (*action) out.push_back(std::move(**action));
      }
    }
  }
  return out;
}

}  // namespace

Result<EncodedCheckpoint> EncodeCheckpoint(const Snapshot& snapshot, int64_t now_ms,
                                           int64_t tombstone_retention_ms) {
  if (!snapshot.protocol || !snapshot.metadata) {
    return Status::Invalid("cannot checkpoint Delta version ", snapshot.version,
                           ": no protocol or metaData");
  }
  auto schema = CheckpointSchema();
  FLOE_ASSIGN_OR_RAISE(RowWriter w, RowWriter::Make(schema));
  FLOE_RETURN_NOT_OK(WriteProtocol(&w, *snapshot.protocol));
  FLOE_RETURN_NOT_OK(WriteMetadata(&w, *snapshot.metadata));
  for (const auto& [id, txn] : snapshot.txns) FLOE_RETURN_NOT_OK(WriteTxn(&w, txn));
  EncodedCheckpoint out;
  for (const auto& [path, add] : snapshot.files) {
    FLOE_RETURN_NOT_OK(WriteAdd(&w, add));
    ++out.num_adds;
  }
  for (const auto& [path, remove] : snapshot.tombstones) {
    if (remove.deletion_timestamp &&
        *remove.deletion_timestamp < now_ms - tombstone_retention_ms) {
      continue;  // expired tombstone
    }
    FLOE_RETURN_NOT_OK(WriteRemove(&w, remove));
  }
  out.rows = w.rows();
  FLOE_ASSIGN_OR_RAISE(auto table, w.Finish());
  FLOE_RETURN_NOT_OK(table->ValidateFull());

  try {
    FLOE_ASSIGN_OR_RAISE(auto sink, ::arrow::io::BufferOutputStream::Create());
    auto props = ::parquet::WriterProperties::Builder()
                     .compression(::arrow::Compression::ZSTD)
                     // parquet-mr's version parser (Spark) expects "<app> version
                     // <semver> (build <id>)".
                     ->created_by("floe version " FLOE_VERSION_STRING " (build floe)")
                     ->build();
    FLOE_RETURN_NOT_OK(::parquet::arrow::WriteTable(
        *table, ::arrow::default_memory_pool(), sink, /*chunk_size=*/1 << 20, props));
    FLOE_ASSIGN_OR_RAISE(auto buffer, sink->Finish());
    out.bytes = buffer->ToString();
  } catch (const ::parquet::ParquetException& e) {
    return Status::IOError("writing Delta checkpoint: ", e.what());
  }
  return out;
}

Result<std::vector<Action>> DecodeCheckpoint(std::string_view bytes,
                                             const std::string& what) {
  try {
    auto buffer =
        std::make_shared<::arrow::Buffer>(reinterpret_cast<const uint8_t*>(bytes.data()),
                                          static_cast<int64_t>(bytes.size()));
    auto input = std::make_shared<::arrow::io::BufferReader>(buffer);
    auto reader = ::parquet::arrow::OpenFile(input, ::arrow::default_memory_pool());
    // The bytes are in memory, so Arrow's errors here (IOError included, which would
    // read as a retriable outage) can only mean a corrupt file: the kind is changed on
    // purpose.
    if (!reader.ok()) return InvalidInput(what + ": " + reader.status().message());
    auto table = (*reader)->ReadTable();
    if (!table.ok()) return InvalidInput(what + ": " + table.status().message());
    return DecodeTable(**table, what);
  } catch (const ::parquet::ParquetException& e) {
    return InvalidInput(what + ": " + e.what());
  }
}

}  // namespace floe::delta::internal
