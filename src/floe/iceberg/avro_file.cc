#include "floe/iceberg/avro_file.h"

#include <zlib.h>
#include <zstd.h>

#include <algorithm>
#include <cstring>
#include <limits>

#include "floe/common/util.h"

namespace floe::iceberg::avro_file {

using avro::Decoder;
using avro::Encoder;
using avro::Node;
using avro::Type;

namespace {

constexpr char kMagic[4] = {'O', 'b', 'j', 1};
constexpr size_t kSyncSize = 16;
// Values that encode to zero bytes (null, empty records) allowed per array/map block and
// per file block: without a cap a few bytes could announce billions of them.
constexpr int64_t kMaxZeroByteValuesPerBlock = 1 << 16;

Status Corrupt(const std::string& what) { return InvalidInput("avro: " + what); }

// A container file's schema may use anything the specification allows (other tools
// wrote it); a bad one makes the file malformed input, whatever the parser's code.
Result<avro::Schema> ParseSchema(std::string_view json) {
  auto schema = avro::Schema::Parse(json, avro::ParseOptions::AnyValid());
  if (!schema.ok()) return Corrupt(schema.status().message());
  return schema;
}

}  // namespace

// ---------------------------------------------------------------------------------------
// Datum constructors

Datum Datum::Boolean(bool v) {
  Datum d;
  d.kind = Type::kBoolean;
  d.boolean = v;
  return d;
}
Datum Datum::Int(int32_t v) {
  Datum d;
  d.kind = Type::kInt;
  d.integer = v;
  return d;
}
Datum Datum::Long(int64_t v) {
  Datum d;
  d.kind = Type::kLong;
  d.integer = v;
  return d;
}
Datum Datum::Float(float v) {
  Datum d;
  d.kind = Type::kFloat;
  d.real = v;
  return d;
}
Datum Datum::Double(double v) {
  Datum d;
  d.kind = Type::kDouble;
  d.real = v;
  return d;
}
Datum Datum::Bytes(std::string v) {
  Datum d;
  d.kind = Type::kBytes;
  d.bytes = std::move(v);
  return d;
}
Datum Datum::String(std::string v) {
  Datum d;
  d.kind = Type::kString;
  d.bytes = std::move(v);
  return d;
}
Datum Datum::Fixed(std::string v) {
  Datum d;
  d.kind = Type::kFixed;
  d.bytes = std::move(v);
  return d;
}
Datum Datum::Enum(int index) {
  Datum d;
  d.kind = Type::kEnum;
  d.integer = index;
  return d;
}
Datum Datum::Record(std::vector<Datum> fields) {
  Datum d;
  d.kind = Type::kRecord;
  d.items = std::move(fields);
  return d;
}
Datum Datum::Array(std::vector<Datum> items) {
  Datum d;
  d.kind = Type::kArray;
  d.items = std::move(items);
  return d;
}
Datum Datum::Map(std::vector<std::pair<std::string, Datum>> entries) {
  Datum d;
  d.kind = Type::kMap;
  for (auto& [k, v] : entries) {
    d.keys.push_back(std::move(k));
    d.items.push_back(std::move(v));
  }
  return d;
}

// ---------------------------------------------------------------------------------------
// Generic coding

namespace {

Status EncodeImpl(const Node& n, const Datum& d, Encoder* e, int depth) {
  if (depth > avro::kMaxSchemaDepth) {
    return Corrupt("value nesting deeper than " + std::to_string(avro::kMaxSchemaDepth) +
                   " levels");
  }
  if (n.type == Type::kUnion) {
    int idx = d.branch;
    if (idx >= 0) {
      if (idx >= static_cast<int>(n.branches.size()) || n.branches[idx]->type != d.kind) {
        return Corrupt("datum union branch " + std::to_string(idx) +
                       " does not fit the schema");
      }
    } else {
      for (size_t i = 0; i < n.branches.size(); ++i) {
        if (n.branches[i]->type == d.kind) {
          idx = static_cast<int>(i);
          break;
        }
      }
      if (idx < 0)
        return Corrupt(std::string("no union branch for a ") + avro::TypeName(d.kind) +
                       " value");
    }
    e->WriteUnionIndex(idx);
    return EncodeImpl(*n.branches[idx], d, e, depth + 1);
  }
  if (n.type != d.kind) {
    return Corrupt(std::string("datum of kind ") + avro::TypeName(d.kind) +
                   " where the schema has " + avro::TypeName(n.type));
  }
  switch (n.type) {
    case Type::kNull:
      return Status::OK();
    case Type::kBoolean:
      e->WriteBoolean(d.boolean);
      return Status::OK();
    case Type::kInt:
      if (d.integer < std::numeric_limits<int32_t>::min() ||
          d.integer > std::numeric_limits<int32_t>::max()) {
        return Corrupt("int datum out of range");
      }
      e->WriteInt(static_cast<int32_t>(d.integer));
      return Status::OK();
    case Type::kLong:
      e->WriteLong(d.integer);
      return Status::OK();
    case Type::kFloat:
      e->WriteFloat(static_cast<float>(d.real));
      return Status::OK();
    case Type::kDouble:
      e->WriteDouble(d.real);
      return Status::OK();
    case Type::kBytes:
    case Type::kString:
      e->WriteBytes(d.bytes);
      return Status::OK();
    case Type::kFixed:
      if (static_cast<int64_t>(d.bytes.size()) != n.size) {
        return Corrupt("fixed " + n.full_name + " needs " + std::to_string(n.size) +
                       " bytes, datum has " + std::to_string(d.bytes.size()));
      }
      e->WriteFixed(d.bytes);
      return Status::OK();
    case Type::kEnum:
      if (d.integer < 0 || d.integer >= static_cast<int64_t>(n.symbols.size())) {
        return Corrupt("enum index out of range for " + n.full_name);
      }
      e->WriteEnum(static_cast<int>(d.integer));
      return Status::OK();
    case Type::kRecord:
      if (d.items.size() != n.fields.size()) {
        return Corrupt("record " + n.full_name + " has " +
                       std::to_string(n.fields.size()) + " fields, datum has " +
                       std::to_string(d.items.size()));
      }
      for (size_t i = 0; i < n.fields.size(); ++i) {
        FLOE_RETURN_NOT_OK(EncodeImpl(*n.fields[i].type, d.items[i], e, depth + 1));
      }
      return Status::OK();
    case Type::kArray:
      e->StartBlock(static_cast<int64_t>(d.items.size()));
      for (const auto& item : d.items)
        FLOE_RETURN_NOT_OK(EncodeImpl(*n.items, item, e, depth + 1));
      e->EndBlocks();
      return Status::OK();
    case Type::kMap:
      if (d.keys.size() != d.items.size())
        return Corrupt("map datum has keys and values of different counts");
      e->StartBlock(static_cast<int64_t>(d.items.size()));
      for (size_t i = 0; i < d.items.size(); ++i) {
        e->WriteString(d.keys[i]);
        FLOE_RETURN_NOT_OK(EncodeImpl(*n.values, d.items[i], e, depth + 1));
      }
      e->EndBlocks();
      return Status::OK();
    case Type::kUnion:
      break;
  }
  return Corrupt("unreachable");
}

// Reads one array/map block header: item count (0 = end) with the optional byte size of
// negative counts; validates it against the bytes left and the value budget.
Result<int64_t> ReadBlockCount(Decoder* dec, const Node& item, bool is_map,
                               int64_t* budget) {
  FLOE_ASSIGN_OR_RAISE(int64_t count, dec->ReadLong());
  if (count == 0) return 0;
  if (count < 0) {
    if (count == std::numeric_limits<int64_t>::min())
      return Corrupt("invalid block count");
    count = -count;
    FLOE_ASSIGN_OR_RAISE(int64_t size, dec->ReadLong());
    if (size < 0 || static_cast<uint64_t>(size) > dec->remaining()) {
      return Corrupt("block byte size " + std::to_string(size) +
                     " exceeds the bytes left");
    }
  }
  int64_t per_item = item.min_bytes + (is_map ? 1 : 0);  // a map key is at least 1 byte
  if (per_item > 0) {
    if (count > static_cast<int64_t>(dec->remaining()) / per_item) {
      return Corrupt("block of " + std::to_string(count) + " items cannot fit in the " +
                     std::to_string(dec->remaining()) + " bytes left");
    }
  } else if (count > kMaxZeroByteValuesPerBlock) {
    return Corrupt("block of " + std::to_string(count) + " zero-byte items");
  }
  if (count > *budget) return Corrupt("too many values in one record");
  return count;
}

Status DecodeImpl(const Node& n, Decoder* dec, Datum* d, int64_t* budget, int depth) {
  if (depth > avro::kMaxSchemaDepth) {
    return Corrupt("value nesting deeper than " + std::to_string(avro::kMaxSchemaDepth) +
                   " levels");
  }
  if (--*budget < 0) return Corrupt("too many values in one record");
  if (n.type == Type::kUnion) {
    FLOE_ASSIGN_OR_RAISE(int64_t idx, dec->ReadLong());
    if (idx < 0 || idx >= static_cast<int64_t>(n.branches.size())) {
      return Corrupt("union index " + std::to_string(idx) + " out of range");
    }
    FLOE_RETURN_NOT_OK(DecodeImpl(*n.branches[idx], dec, d, budget, depth + 1));
    d->branch = static_cast<int32_t>(idx);
    return Status::OK();
  }
  d->kind = n.type;
  switch (n.type) {
    case Type::kNull:
      return Status::OK();
    case Type::kBoolean: {
      FLOE_ASSIGN_OR_RAISE(d->boolean, dec->ReadBoolean());
      return Status::OK();
    }
    case Type::kInt: {
      FLOE_ASSIGN_OR_RAISE(int32_t v, dec->ReadInt());
      d->integer = v;
      return Status::OK();
    }
    case Type::kLong: {
      FLOE_ASSIGN_OR_RAISE(d->integer, dec->ReadLong());
      return Status::OK();
    }
    case Type::kFloat: {
      FLOE_ASSIGN_OR_RAISE(float v, dec->ReadFloat());
      d->real = v;
      return Status::OK();
    }
    case Type::kDouble: {
      FLOE_ASSIGN_OR_RAISE(d->real, dec->ReadDouble());
      return Status::OK();
    }
    case Type::kBytes:
    case Type::kString: {
      FLOE_ASSIGN_OR_RAISE(auto v, dec->ReadBytes());
      d->bytes.assign(v.data(), v.size());
      return Status::OK();
    }
    case Type::kFixed: {
      FLOE_ASSIGN_OR_RAISE(auto v, dec->ReadFixed(n.size));
      d->bytes.assign(v.data(), v.size());
      return Status::OK();
    }
    case Type::kEnum: {
      FLOE_ASSIGN_OR_RAISE(int64_t idx, dec->ReadLong());
      if (idx < 0 || idx >= static_cast<int64_t>(n.symbols.size())) {
        return Corrupt("enum index " + std::to_string(idx) + " out of range for " +
                       n.full_name);
      }
      d->integer = idx;
      return Status::OK();
    }
    case Type::kRecord: {
      d->items.resize(n.fields.size());
      for (size_t i = 0; i < n.fields.size(); ++i) {
        FLOE_RETURN_NOT_OK(
            DecodeImpl(*n.fields[i].type, dec, &d->items[i], budget, depth + 1));
      }
      return Status::OK();
    }
    case Type::kArray:
    case Type::kMap: {
      const bool is_map = n.type == Type::kMap;
      const Node& item = is_map ? *n.values : *n.items;
      while (true) {
        FLOE_ASSIGN_OR_RAISE(int64_t count, ReadBlockCount(dec, item, is_map, budget));
        if (count == 0) break;
        // Never reserve from an untrusted count beyond a small bound.
        d->items.reserve(d->items.size() +
                         static_cast<size_t>(std::min<int64_t>(count, 1024)));
        for (int64_t i = 0; i < count; ++i) {
          if (is_map) {
            FLOE_ASSIGN_OR_RAISE(auto key, dec->ReadBytes());
            d->keys.emplace_back(key);
          }
          d->items.emplace_back();
          FLOE_RETURN_NOT_OK(DecodeImpl(item, dec, &d->items.back(), budget, depth + 1));
        }
      }
      return Status::OK();
    }
    case Type::kUnion:
      break;
  }
  return Corrupt("unreachable");
}

std::string RandomSync() {
  // 16 random bytes: the hex digits of a v4 UUID from a CSPRNG (122 random bits).
  std::string hex;
  while (hex.size() < 32) {
    for (char c : NewUuid()) {
      if (c != '-') hex.push_back(c);
    }
  }
  std::string out(kSyncSize, '\0');
  for (size_t i = 0; i < kSyncSize; ++i) {
    auto nib = [](char c) { return c <= '9' ? c - '0' : c - 'a' + 10; };
    out[i] = static_cast<char>((nib(hex[2 * i]) << 4) | nib(hex[2 * i + 1]));
  }
  return out;
}

Status Inflate(std::string_view in, size_t limit, std::string* out) {
  z_stream zs;
  std::memset(&zs, 0, sizeof(zs));
  if (inflateInit2(&zs, -15) != Z_OK)
    return Status::UnknownError("avro: inflateInit2 failed");
  zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in.data()));
  zs.avail_in = static_cast<uInt>(in.size());
  out->clear();
  char buf[1 << 16];
  int rc = Z_OK;
  while (rc != Z_STREAM_END) {
    zs.next_out = reinterpret_cast<Bytef*>(buf);
    zs.avail_out = sizeof(buf);
    rc = inflate(&zs, Z_NO_FLUSH);
    if (rc != Z_OK && rc != Z_STREAM_END) {
      inflateEnd(&zs);
      return Corrupt("deflate block is corrupt or truncated");
    }
    size_t produced = sizeof(buf) - zs.avail_out;
    if (out->size() + produced > limit) {
      inflateEnd(&zs);
      return Corrupt("deflate block expands beyond " + std::to_string(limit) + " bytes");
    }
    out->append(buf, produced);
    if (rc == Z_OK && produced == 0 && zs.avail_in == 0) {
      inflateEnd(&zs);
      return Corrupt("deflate block is truncated");
    }
  }
  inflateEnd(&zs);
  return Status::OK();
}

Status ZstdDecompress(std::string_view in, size_t limit, std::string* out) {
  ZSTD_DStream* ds = ZSTD_createDStream();
  if (!ds) return Status::OutOfMemory("avro: ZSTD_createDStream failed");
  ZSTD_initDStream(ds);
  ZSTD_inBuffer input{in.data(), in.size(), 0};
  out->clear();
  char buf[1 << 16];
  size_t rc = 1;
  while (input.pos < input.size || rc != 0) {
    ZSTD_outBuffer output{buf, sizeof(buf), 0};
    size_t before = input.pos;
    rc = ZSTD_decompressStream(ds, &output, &input);
    if (ZSTD_isError(rc)) {
      ZSTD_freeDStream(ds);
      return Corrupt(std::string("zstandard block is corrupt: ") + ZSTD_getErrorName(rc));
    }
    if (out->size() + output.pos > limit) {
      ZSTD_freeDStream(ds);
      return Corrupt("zstandard block expands beyond " + std::to_string(limit) +
                     " bytes");
    }
    out->append(buf, output.pos);
    if (rc != 0 && output.pos == 0 && input.pos == before) {
      ZSTD_freeDStream(ds);
      return Corrupt("zstandard block is truncated");
    }
  }
  ZSTD_freeDStream(ds);
  return Status::OK();
}

}  // namespace

Status EncodeDatum(const Node& schema, const Datum& datum, Encoder* encoder) {
  return EncodeImpl(schema, datum, encoder, 0);
}

Status DecodeDatum(const Node& schema, Decoder* decoder, Datum* out,
                   int64_t* max_values) {
  *out = Datum{};
  return DecodeImpl(schema, decoder, out, max_values, 0);
}

// ---------------------------------------------------------------------------------------
// Writer

Result<std::unique_ptr<Writer>> Writer::Make(
    std::string_view schema_json,
    const std::vector<std::pair<std::string, std::string>>& metadata,
    WriterOptions options) {
  FLOE_ASSIGN_OR_RAISE(avro::Schema schema, ParseSchema(schema_json));
  std::unique_ptr<Writer> w(new Writer(std::move(schema)));
  w->options_ = options;
  w->sync_ = RandomSync();
  Encoder header;
  header.WriteFixed(std::string_view(kMagic, 4));
  header.StartBlock(static_cast<int64_t>(metadata.size() + 2));
  header.WriteString("avro.schema");
  header.WriteBytes(schema_json);
  header.WriteString("avro.codec");
  header.WriteBytes("null");
  for (const auto& [k, v] : metadata) {
    if (k == "avro.schema" || k == "avro.codec")
      return Status::Invalid("avro: reserved metadata key ", k);
    header.WriteString(k);
    header.WriteBytes(v);
  }
  header.EndBlocks();
  header.WriteFixed(w->sync_);
  w->out_ = std::move(header.buffer());
  return w;
}

void Writer::EndRecord() {
  ++block_records_;
  ++records_;
  if (block_.size() >= options_.block_bytes) FlushBlock();
}

Status Writer::Append(const Datum& record) {
  size_t mark = block_.size();
  Status st = EncodeDatum(schema_.root(), record, &block_);
  if (!st.ok()) {
    block_.buffer().resize(mark);  // drop the partial record
    return st;
  }
  EndRecord();
  return Status::OK();
}

void Writer::FlushBlock() {
  if (block_records_ == 0) return;
  Encoder head;
  head.WriteLong(block_records_);
  head.WriteLong(static_cast<int64_t>(block_.size()));
  out_ += head.buffer();
  out_ += block_.buffer();
  out_ += sync_;
  block_.buffer().clear();
  block_records_ = 0;
}

std::string Writer::Finish() {
  FlushBlock();
  return std::move(out_);
}

// ---------------------------------------------------------------------------------------
// Reader

Result<std::unique_ptr<Reader>> Reader::Open(std::string data, ReaderOptions options) {
  if (data.size() < 4 || std::memcmp(data.data(), kMagic, 4) != 0) {
    return Corrupt("not an Avro object container file (bad magic)");
  }
  std::map<std::string, std::string> metadata;
  Decoder dec(std::string_view(data).substr(4));
  while (true) {
    FLOE_ASSIGN_OR_RAISE(int64_t count, dec.ReadLong());
    if (count == 0) break;
    if (count < 0) {
      if (count == std::numeric_limits<int64_t>::min())
        return Corrupt("invalid header block count");
      count = -count;
      FLOE_ASSIGN_OR_RAISE(int64_t size, dec.ReadLong());
      if (size < 0 || static_cast<uint64_t>(size) > dec.remaining())
        return Corrupt("bad header block size");
    }
    if (count > static_cast<int64_t>(dec.remaining()) / 2)
      return Corrupt("header metadata count too large");
    for (int64_t i = 0; i < count; ++i) {
      FLOE_ASSIGN_OR_RAISE(auto key, dec.ReadBytes());
      FLOE_ASSIGN_OR_RAISE(auto value, dec.ReadBytes());
      metadata[std::string(key)] = std::string(value);
    }
  }
  FLOE_ASSIGN_OR_RAISE(auto sync_view, dec.ReadFixed(kSyncSize));
  std::string sync(sync_view);  // a copy: `data` moves into the reader below
  const size_t header_size = 4 + dec.position();
  auto schema_it = metadata.find("avro.schema");
  if (schema_it == metadata.end()) return Corrupt("header has no avro.schema");
  FLOE_ASSIGN_OR_RAISE(avro::Schema schema, ParseSchema(schema_it->second));
  std::unique_ptr<Reader> r(new Reader(std::move(data), std::move(schema), options));
  r->sync_ = std::move(sync);
  r->pos_ = header_size;
  r->metadata_ = std::move(metadata);
  if (auto c = r->metadata_.find("avro.codec");
      c != r->metadata_.end() && !c->second.empty()) {
    r->codec_ = c->second;
  }
  if (r->codec_ != "null" && r->codec_ != "deflate" && r->codec_ != "zstandard") {
    return InvalidInput("avro: unsupported codec '" + r->codec_ +
                        "' (supported: null, deflate, zstandard)");
  }
  return r;
}

const std::string* Reader::FindMetadata(const std::string& key) const {
  auto it = metadata_.find(key);
  return it == metadata_.end() ? nullptr : &it->second;
}

Status Reader::LoadBlock() {
  Decoder dec(std::string_view(data_).substr(pos_));
  FLOE_ASSIGN_OR_RAISE(int64_t count, dec.ReadLong());
  FLOE_ASSIGN_OR_RAISE(int64_t size, dec.ReadLong());
  std::string where = "block " + std::to_string(block_index_) + ": ";
  if (count < 0) return Corrupt(where + "negative object count");
  if (size < 0 || static_cast<uint64_t>(size) > dec.remaining()) {
    return Corrupt(where + "size " + std::to_string(size) + " exceeds the " +
                   std::to_string(dec.remaining()) + " bytes left (truncated file?)");
  }
  FLOE_ASSIGN_OR_RAISE(auto payload, dec.ReadFixed(size));
  if (dec.remaining() < kSyncSize)
    return Corrupt(where + "truncated before its sync marker");
  FLOE_ASSIGN_OR_RAISE(auto sync, dec.ReadFixed(kSyncSize));
  if (sync != sync_) return Corrupt(where + "sync marker mismatch");
  pos_ += dec.position();
  if (codec_ == "null") {
    if (payload.size() > options_.max_block_bytes)
      return Corrupt(where + "larger than the block limit");
    block_ = payload;
  } else if (codec_ == "deflate") {
    FLOE_RETURN_NOT_OK(Inflate(payload, options_.max_block_bytes, &block_storage_));
    block_ = block_storage_;
  } else {
    FLOE_RETURN_NOT_OK(
        ZstdDecompress(payload, options_.max_block_bytes, &block_storage_));
    block_ = block_storage_;
  }
  const int64_t min = schema_.root().min_bytes;
  if (min > 0 ? count > static_cast<int64_t>(block_.size()) / min
              : count > kMaxZeroByteValuesPerBlock) {
    return Corrupt(where + std::to_string(count) + " objects cannot fit in " +
                   std::to_string(block_.size()) + " bytes");
  }
  block_decoder_ = std::make_unique<Decoder>(block_);
  block_remaining_ = count;
  block_value_budget_ =
      static_cast<int64_t>(block_.size()) + kMaxZeroByteValuesPerBlock + count;
  ++block_index_;
  return Status::OK();
}

Result<bool> Reader::Next(Datum* out) {
  while (block_remaining_ == 0) {
    if (block_decoder_ && block_decoder_->remaining() != 0) {
      return Corrupt("block " + std::to_string(block_index_ - 1) + " has " +
                     std::to_string(block_decoder_->remaining()) + " trailing bytes");
    }
    if (pos_ >= data_.size()) return false;
    FLOE_RETURN_NOT_OK(LoadBlock());
  }
  Status st =
      DecodeDatum(schema_.root(), block_decoder_.get(), out, &block_value_budget_);
  if (!st.ok()) {
    return st.WithMessage("block ", block_index_ - 1, ": ", st.message());
  }
  --block_remaining_;
  return true;
}

Result<std::vector<Datum>> Reader::ReadAll() {
  std::vector<Datum> out;
  while (true) {
    Datum d;
    FLOE_ASSIGN_OR_RAISE(bool more, Next(&d));
    if (!more) break;
    if (static_cast<int64_t>(out.size()) >= options_.max_records) {
      return Corrupt("more than " + std::to_string(options_.max_records) + " records");
    }
    out.push_back(std::move(d));
  }
  return out;
}

}  // namespace floe::iceberg::avro_file
