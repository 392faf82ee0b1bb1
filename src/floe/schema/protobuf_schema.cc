#include "floe/schema/protobuf_schema.h"

#include <google/protobuf/any.pb.h>
#include <google/protobuf/api.pb.h>
#include <google/protobuf/compiler/parser.h>
#include <google/protobuf/descriptor.h>
#include <google/protobuf/descriptor.pb.h>
#include <google/protobuf/descriptor_database.h>
#include <google/protobuf/duration.pb.h>
#include <google/protobuf/empty.pb.h>
#include <google/protobuf/field_mask.pb.h>
#include <google/protobuf/io/tokenizer.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>
#include <google/protobuf/source_context.pb.h>
#include <google/protobuf/struct.pb.h>
#include <google/protobuf/stubs/strutil.h>
#include <google/protobuf/timestamp.pb.h>
#include <google/protobuf/type.pb.h>
#include <google/protobuf/wrappers.pb.h>

#include <algorithm>
#include <limits>
#include <set>
#include <utility>

namespace floe::schema {

namespace pb = ::google::protobuf;

namespace {

// The well-known files compiled into libprotobuf. Naming each descriptor makes sure its
// file is registered in the generated pool before we look it up.
const pb::FileDescriptor* BuiltinFile(const std::string& name) {
  static const std::vector<const pb::FileDescriptor*> files = {
      pb::Any::descriptor()->file(),
      pb::Api::descriptor()->file(),
      pb::Duration::descriptor()->file(),
      pb::Empty::descriptor()->file(),
      pb::FieldMask::descriptor()->file(),
      pb::SourceContext::descriptor()->file(),
      pb::Struct::descriptor()->file(),
      pb::Timestamp::descriptor()->file(),
      pb::Type::descriptor()->file(),
      pb::Int32Value::descriptor()->file(),
      pb::FileDescriptorProto::descriptor()->file(),
  };
  for (const auto* f : files) {
    if (f->name() == name) return f;
  }
  return nullptr;
}

// A registry may hold a Protobuf schema as base64 of a serialized FileDescriptorProto
// (the form Confluent's Python and Go serializers register) instead of .proto text.
// .proto text always has a ';' or '{', so text made only of the base64 alphabet is a
// descriptor.
bool LooksLikeBase64(const std::string& text) {
  size_t n = 0;
  for (char c : text) {
    if (c == ' ' || c == '\n' || c == '\r' || c == '\t') continue;
    const bool alpha = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') ||
                       (c >= '0' && c <= '9') || c == '+' || c == '/' || c == '=';
    if (!alpha) return false;
    ++n;
  }
  return n > 0 && n % 4 == 0;
}

class TextErrors : public pb::io::ErrorCollector {
 public:
  void AddError(int line, pb::io::ColumnNumber column,
                const std::string& message) override {
    if (!first.empty()) return;
    // Tokenizer lines and columns are zero-based.
    first = "line " + std::to_string(line + 1) + ", column " +
            std::to_string(column + 1) + ": " + message;
  }
  std::string first;
};

class PoolErrors : public pb::DescriptorPool::ErrorCollector {
 public:
  void AddError(const std::string& filename, const std::string& element_name,
                const pb::Message*, ErrorLocation, const std::string& message) override {
    if (!first.empty()) return;
    first = (filename == kProtobufMainFile ? std::string("the schema") : filename) +
            (element_name.empty() ? "" : " (" + element_name + ")") + ": " + message;
  }
  std::string first;
};

}  // namespace

// Files by name: the schema itself, the caller's imports (parsed on first use), and the
// built-in google/protobuf files. The pool asks for each file once.
struct ProtobufSchema::Database : public pb::DescriptorDatabase {
  std::map<std::string, std::string> texts;
  std::string parse_error;  // the first .proto syntax error, with its file
  PoolErrors pool_errors;

  bool FindFileByName(const std::string& filename,
                      pb::FileDescriptorProto* output) override {
    auto it = texts.find(filename);
    if (it == texts.end()) {
      const pb::FileDescriptor* builtin = BuiltinFile(filename);
      if (builtin == nullptr) return false;
      builtin->CopyTo(output);
      return true;
    }
    const std::string what = filename == kProtobufMainFile
                                 ? std::string("the schema")
                                 : "import \"" + filename + "\"";
    if (LooksLikeBase64(it->second)) {
      std::string bytes;
      if (!pb::Base64Unescape(it->second, &bytes) || !output->ParseFromString(bytes)) {
        if (parse_error.empty()) {
          parse_error =
              what + ", base64 text that is not a serialized FileDescriptorProto";
        }
        return false;
      }
      output->set_name(filename);
      return true;
    }
    pb::io::ArrayInputStream input(it->second.data(),
                                   static_cast<int>(it->second.size()));
    TextErrors errors;
    pb::io::Tokenizer tokenizer(&input, &errors);
    pb::compiler::Parser parser;
    parser.RecordErrorsTo(&errors);
    const bool ok = parser.Parse(&tokenizer, output);
    if (!ok || !errors.first.empty()) {
      if (parse_error.empty()) {
        parse_error =
            what + ", " + (errors.first.empty() ? "syntax error" : errors.first);
      }
      return false;
    }
    output->set_name(filename);
    return true;
  }
  bool FindFileContainingSymbol(const std::string&, pb::FileDescriptorProto*) override {
    return false;
  }
  bool FindFileContainingExtension(const std::string&, int,
                                   pb::FileDescriptorProto*) override {
    return false;
  }
};

ProtobufSchema::~ProtobufSchema() = default;

Result<std::shared_ptr<const ProtobufSchema>> ProtobufSchema::Make(
    const std::string& text, const std::map<std::string, std::string>& imports) {
  if (text.size() > static_cast<size_t>(std::numeric_limits<int>::max())) {
    return Status::Invalid("Protobuf schema of ", text.size(), " bytes is too large");
  }
  std::shared_ptr<ProtobufSchema> s(new ProtobufSchema());
  s->database_ = std::make_unique<Database>();
  s->database_->texts = imports;
  s->database_->texts[kProtobufMainFile] = text;
  s->pool_ = std::make_unique<pb::DescriptorPool>(s->database_.get(),
                                                  &s->database_->pool_errors);
  s->file_ = s->pool_->FindFileByName(kProtobufMainFile);
  if (s->file_ == nullptr) {
    const auto& db = *s->database_;
    std::string why = !db.parse_error.empty()         ? db.parse_error
                      : !db.pool_errors.first.empty() ? db.pool_errors.first
                                                      : "cannot be built";
    return Status::Invalid("Protobuf schema: ", why);
  }
  return std::shared_ptr<const ProtobufSchema>(std::move(s));
}

Result<const pb::Descriptor*> ProtobufSchema::MessageAt(const int32_t* indexes,
                                                        size_t count) const {
  static const int32_t kFirst = 0;
  if (count == 0) {
    indexes = &kFirst;
    count = 1;
  }
  auto out_of_range = [&](size_t level, int available) {
    std::string path;
    for (size_t i = 0; i < count; ++i)
      path += (i ? "," : "") + std::to_string(indexes[i]);
    return InvalidRecord("Protobuf message index path [" + path + "]: index " +
                         std::to_string(indexes[level]) + " at level " +
                         std::to_string(level) + " is outside the " +
                         std::to_string(available) + " message type(s) there");
  };
  if (indexes[0] < 0 || indexes[0] >= file_->message_type_count()) {
    return out_of_range(0, file_->message_type_count());
  }
  const pb::Descriptor* d = file_->message_type(indexes[0]);
  for (size_t i = 1; i < count; ++i) {
    if (indexes[i] < 0 || indexes[i] >= d->nested_type_count()) {
      return out_of_range(i, d->nested_type_count());
    }
    d = d->nested_type(indexes[i]);
  }
  return d;
}

bool IsProtobufTimestamp(const pb::Descriptor& message) {
  return message.full_name() == "google.protobuf.Timestamp";
}

bool IsProtobufWrapper(const pb::Descriptor& message) {
  static const std::set<std::string> kWrappers = {
      "google.protobuf.DoubleValue", "google.protobuf.FloatValue",
      "google.protobuf.Int64Value",  "google.protobuf.UInt64Value",
      "google.protobuf.Int32Value",  "google.protobuf.UInt32Value",
      "google.protobuf.BoolValue",   "google.protobuf.StringValue",
      "google.protobuf.BytesValue"};
  return kWrappers.count(message.full_name()) > 0 && message.field_count() == 1 &&
         message.field(0)->number() == 1;
}

ProtobufPresence PresenceOf(const pb::FieldDescriptor& field) {
  if (field.is_required()) return ProtobufPresence::kRequired;
  if (!field.has_presence()) return ProtobufPresence::kImplicit;
  if (field.cpp_type() != pb::FieldDescriptor::CPPTYPE_MESSAGE &&
      field.real_containing_oneof() == nullptr && field.has_default_value()) {
    return ProtobufPresence::kDefault;
  }
  return ProtobufPresence::kExplicit;
}

namespace {

using iceberg::NestedField;
using iceberg::Type;
using iceberg::TypeId;
using iceberg::TypePtr;

Status Error(const std::string& path, const std::string& what) {
  return Status::Invalid("Protobuf field '", path, "': ", what);
}

class Mapper {
 public:
  Result<std::vector<NestedField>> Message(const pb::Descriptor& d,
                                           const std::string& path, int depth) {
    if (depth > kMaxProtobufDepth) {
      return Error(path, "nesting is deeper than " + std::to_string(kMaxProtobufDepth));
    }
    if (std::find(stack_.begin(), stack_.end(), &d) != stack_.end()) {
      return Error(path, "recursive message type " + d.full_name() + " is not supported");
    }
    if (d.field_count() == 0) {
      return Error(path.empty() ? d.full_name() : path,
                   "message " + d.full_name() +
                       " has no fields; Parquet cannot store an empty struct");
    }
    stack_.push_back(&d);
    std::vector<NestedField> out;
    out.reserve(static_cast<size_t>(d.field_count()));
    for (int i = 0; i < d.field_count(); ++i) {
      const pb::FieldDescriptor& f = *d.field(i);
      const std::string fpath = path.empty() ? f.name() : path + "." + f.name();
      FLOE_ASSIGN_OR_RAISE(NestedField nf, Field(f, fpath, depth));
      nf.field_number = f.number();  // a rename hint (schema/evolution.h)
      out.push_back(std::move(nf));
    }
    stack_.pop_back();
    return out;
  }

 private:
  Result<NestedField> Field(const pb::FieldDescriptor& f, const std::string& path,
                            int depth) {
    if (f.is_map()) {
      const pb::Descriptor& entry = *f.message_type();
      FLOE_ASSIGN_OR_RAISE(TypePtr key,
                           Value(*entry.field(0), path + "{key}", depth + 1));
      FLOE_ASSIGN_OR_RAISE(TypePtr value, Value(*entry.field(1), path + "{}", depth + 1));
      const bool wrapper = entry.field(1)->message_type() != nullptr &&
                           IsProtobufWrapper(*entry.field(1)->message_type());
      NestedField map{0,
                      f.name(),
                      true,
                      Type::Map(0, std::move(key), 0, !wrapper, std::move(value)),
                      {}};
      map.has_default = true;  // a map field defaults to empty
      return map;
    }
    FLOE_ASSIGN_OR_RAISE(TypePtr t,
                         Value(f, f.is_repeated() ? path + "[]" : path, depth));
    if (f.is_repeated()) {
      NestedField list{0, f.name(), true, Type::List(0, true, std::move(t)), {}};
      list.has_default = true;  // a repeated field defaults to empty
      return list;
    }
    const ProtobufPresence presence = PresenceOf(f);
    NestedField out{
        0, f.name(), presence != ProtobufPresence::kExplicit, std::move(t), {}};
    out.has_default = !f.is_required();  // proto3 and proto2 optional fields default
    return out;
  }

  // The type of one value of field `f` (an element, for a repeated field).
  Result<TypePtr> Value(const pb::FieldDescriptor& f, const std::string& path,
                        int depth) {
    using FD = pb::FieldDescriptor;
    switch (f.type()) {
      case FD::TYPE_INT32:
      case FD::TYPE_SINT32:
      case FD::TYPE_SFIXED32:
        return Type::Primitive(TypeId::kInt);
      case FD::TYPE_INT64:
      case FD::TYPE_SINT64:
      case FD::TYPE_SFIXED64:
      case FD::TYPE_UINT32:
      case FD::TYPE_FIXED32:
        return Type::Primitive(TypeId::kLong);
      case FD::TYPE_UINT64:
      case FD::TYPE_FIXED64:
        return Type::Decimal(20, 0);
      case FD::TYPE_BOOL:
        return Type::Primitive(TypeId::kBoolean);
      case FD::TYPE_FLOAT:
        return Type::Primitive(TypeId::kFloat);
      case FD::TYPE_DOUBLE:
        return Type::Primitive(TypeId::kDouble);
      case FD::TYPE_STRING:
      case FD::TYPE_ENUM:
        return Type::Primitive(TypeId::kString);
      case FD::TYPE_BYTES:
        return Type::Primitive(TypeId::kBinary);
      case FD::TYPE_GROUP:
        return Error(path, "proto2 groups are not supported; use a nested message");
      case FD::TYPE_MESSAGE: {
        const pb::Descriptor& m = *f.message_type();
        if (IsProtobufTimestamp(m)) return Type::Primitive(TypeId::kTimestampTz);
        if (IsProtobufWrapper(m)) return Value(*m.field(0), path, depth + 1);
        FLOE_ASSIGN_OR_RAISE(auto fields, Message(m, path, depth + 1));
        return Type::Struct(std::move(fields));
      }
    }
    return Error(path, "unsupported Protobuf type");
  }

  std::vector<const pb::Descriptor*> stack_;
};

}  // namespace

Result<std::vector<NestedField>> ProtobufToIcebergFields(const pb::Descriptor& message) {
  Mapper mapper;
  return mapper.Message(message, "", 1);
}

}  // namespace floe::schema
