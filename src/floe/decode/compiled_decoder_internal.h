// Private to floe/decode: the members of CompiledDecoder (compiled_decoder.h) and the
// Make-time compiler scaffolding the three decoders share. Included only by the decoders'
// .cc files, each of which ends with the explicit instantiation of its CompiledDecoder.
//
// What differs per format are three functions of the decoder's Program (a ProgramBase,
// builders_internal.h), declared in namespace internal beside it (CompiledDecoder finds
// them by argument-dependent lookup when its .cc instantiates it: direct calls, which
// the decoders inline):
//   Status CompileProgram(Program*, const Writer&, const iceberg::Schema& table,
//                         const Options&);
//   Status DecodeRecord(Program&, const uint8_t* data, size_t size,
//                       ::arrow::ArrayBuilder* const* columns);
//   Status ValidateRecord(Program&, const uint8_t* data, size_t size);
#pragma once

#include <arrow/util/utf8.h>

#include <algorithm>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>

#include "floe/decode/builders_internal.h"
#include "floe/decode/compiled_decoder.h"

namespace floe::decode {

template <typename Self, typename Writer, typename Options, typename Program>
CompiledDecoder<Self, Writer, Options, Program>::CompiledDecoder(
    std::unique_ptr<Program> program)
    : program_(std::move(program)) {}

template <typename Self, typename Writer, typename Options, typename Program>
CompiledDecoder<Self, Writer, Options, Program>::~CompiledDecoder() = default;

template <typename Self, typename Writer, typename Options, typename Program>
Result<std::unique_ptr<Self>> CompiledDecoder<Self, Writer, Options, Program>::Make(
    const Writer& writer, const iceberg::Schema& table, const Options& options) {
  // The lookup table of Arrow's UTF-8 validation (idempotent).
  ::arrow::util::InitializeUTF8();
  auto program = std::make_unique<Program>();
  FLOE_RETURN_NOT_OK(program->columns.Init(table));
  program->validate_after_invalid = std::max<int64_t>(0, options.validate_after_invalid);
  FLOE_RETURN_NOT_OK(CompileProgram(program.get(), writer, table, options));
  return std::unique_ptr<Self>(new Self(std::move(program)));
}

template <typename Self, typename Writer, typename Options, typename Program>
Status CompiledDecoder<Self, Writer, Options, Program>::Decode(
    const uint8_t* data, size_t size, ::arrow::ArrayBuilder* const* columns) {
  return DecodeRecord(*program_, data, size, columns);
}

template <typename Self, typename Writer, typename Options, typename Program>
Status CompiledDecoder<Self, Writer, Options, Program>::Validate(const uint8_t* data,
                                                                 size_t size) {
  return ValidateRecord(*program_, data, size);
}

template <typename Self, typename Writer, typename Options, typename Program>
size_t CompiledDecoder<Self, Writer, Options, Program>::program_size() const {
  return program_->ops.size();
}

namespace internal {

// One rule for all three formats: instants and dates are bounded to years 1..9999 in
// UTC, as google.protobuf.Timestamp is. Python's datetime (pyiceberg, pandas readers)
// cannot hold year 0 or 10000, so such a value would make the table unreadable there.
inline constexpr int64_t kMinTimestampMicros =
    int64_t{-62135596800} * 1000000;  // 0001-01-01T00:00:00Z
inline constexpr int64_t kMaxTimestampMicros =
    int64_t{253402300799} * 1000000 + 999999;     // 9999-12-31T23:59:59.999999Z
inline constexpr int64_t kMinDateDays = -719162;  // 0001-01-01
inline constexpr int64_t kMaxDateDays = 2932896;  // 9999-12-31

// How a decoder's compiler names things in messages, and how deep ops may nest.
struct CompilerTerms {
  const char* what;          // a writer value: "Avro field", "JSON property", ...
  const char* writer_lacks;  // the end of "table column 'x' is required but ..."
  int max_depth;             // deepest op nesting a valid writer schema can need
};

// The Make-time compiler of a decoder derives from this (CRTP; nothing here runs per
// record). `Derived` provides the hooks
//   void MarkAbsent(uint32_t op, const iceberg::NestedField& field): op (its sink already
//                                    kNull) appends a null on every record;
//   void MarkStringKey(uint32_t op): op is the string key of a skipped map (only if it
//                                    uses UnlinkedItem).
template <typename Derived, typename Program>
class CompilerBase {
 public:
  // Derived inherits it (`using CompilerBase::CompilerBase`).
  CompilerBase(Program* p, const CompilerTerms& terms) : p_(p), terms_(terms) {}

 protected:
  using Op = typename decltype(Program::ops)::value_type;

  uint32_t Alloc(uint32_t parent, uint32_t n) { return p_->AllocChildren(parent, n); }

  std::string Child(uint32_t op, const std::string& name) const {
    return p_->ChildPath(op, name);
  }

  // ops[0], with path "": the record (message, object) itself; the columns are its
  // children.
  Op& AddRoot() {
    p_->ops.emplace_back();
    p_->paths.emplace_back("");
    return p_->ops[0];
  }

  [[gnu::noinline]] Status CheckDepth(uint32_t op, int depth) const {
    if (depth > terms_.max_depth) {
      return Status::Invalid(terms_.what, " '", p_->paths[op], "': nesting too deep");
    }
    return Status::OK();
  }

  [[gnu::noinline]] Status TypeMismatch(uint32_t op, const std::string& writer_type,
                                        const std::string& table_type) const {
    return Status::Invalid(terms_.what, " '", p_->paths[op], "' of type ", writer_type,
                           " cannot be decoded into the table column of type ",
                           table_type);
  }

  // A table field that receives a null on every record (ProgramBase::AbsentField; a
  // struct's fields get ops too, for the empty values Arrow appends to them).
  Status Absent(uint32_t op, const iceberg::NestedField& tf, bool check_required,
                int depth) {
    auto mark = [this](uint32_t o, const iceberg::NestedField& f, int d) -> Status {
      FLOE_RETURN_NOT_OK(CheckDepth(o, d));
      Op& absent = p_->ops[o];
      absent.sink = decltype(absent.sink)::kNull;
      static_cast<Derived*>(this)->MarkAbsent(o, f);
      return Status::OK();
    };
    return p_->AbsentField(op, tf, check_required, depth, terms_.writer_lacks, mark);
  }

  // Writer data the table lacks: checked as the writer schema says, never appended.
  Op& Unlinked(uint32_t op) {
    Op& o = p_->ops[op];
    o.sink = decltype(o.sink)::kNone;
    o.link = Link::kNone;
    return o;
  }

  // The child of such a list (`map` false) or map to skip next: the element, or the
  // value after a string key. Returns its op.
  uint32_t UnlinkedItem(uint32_t op, bool map) {
    if (!map) return p_->AllocListElement(op, /*linked=*/false);
    const uint32_t key = p_->AllocMapEntry(op, /*linked=*/false);
    static_cast<Derived*>(this)->MarkStringKey(key);
    return key + 1;
  }

  Program* p_;

 private:
  CompilerTerms terms_;
};

}  // namespace internal
}  // namespace floe::decode
