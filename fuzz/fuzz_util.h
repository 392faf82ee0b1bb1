// Helpers shared by the fuzz targets (fuzz/README.md): Arrow builders for a table, as the
// pipeline owns them, and the checks run after every input. A violated invariant prints
// what broke and aborts, which libFuzzer reports as a crash and the replay test as a
// failure.
#pragma once

#include <arrow/api.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "floe/common/status.h"
#include "floe/iceberg/schema.h"
#include "floe/schema/arrow.h"
#include "floe/schema/field_ids.h"

namespace floe::fuzz {

[[noreturn]] inline void Fail(const std::string& what) {
  std::fprintf(stderr, "fuzz invariant violated: %s\n", what.c_str());
  std::fflush(stderr);
  std::abort();
}

// FLOE_FUZZ_VERBOSE=1 in the environment prints every decode result (to check what a
// corpus file exercises).
inline bool Verbose() {
  static const bool verbose = std::getenv("FLOE_FUZZ_VERBOSE") != nullptr;
  return verbose;
}

inline void Report(const char* decoder, const Status& st) {
  if (Verbose()) std::fprintf(stderr, "%s: %s\n", decoder, st.ToString().c_str());
}

inline void CheckOk(const Status& st, const char* what) {
  if (!st.ok()) Fail(std::string(what) + ": " + st.ToString());
}

template <typename T>
T OrDie(Result<T> r, const char* what) {
  CheckOk(r.status(), what);
  return std::move(r).ValueOrDie();
}

// A decoder may only refuse a record as invalid; allocation failures are the one other
// documented outcome (decoder headers, "Decode").
inline void CheckDecodeError(const Status& st, const char* decoder) {
  if (st.ok() || KindOf(st) == ErrorKind::kInvalidRecord || st.IsOutOfMemory() ||
      st.IsCapacityError()) {
    return;
  }
  Fail(std::string(decoder) +
       " failed with an error that is not kInvalidRecord: " + st.ToString());
}

// A fresh table for `fields` (ids 1..n), without `_kafka`, as the decoder tests use.
inline iceberg::Schema TableFrom(const std::vector<iceberg::NestedField>& fields) {
  int last = 0;
  iceberg::Schema table;
  table.fields = OrDie(schema::AssignFieldIds(fields, nullptr, &last), "AssignFieldIds");
  return table;
}

// The builders of every top-level column of a table. Not thread-safe (fuzz targets run
// one input at a time).
class Columns {
 public:
  explicit Columns(const iceberg::Schema& table)
      : schema_(OrDie(schema::ToArrowSchema(table), "ToArrowSchema")),
        builder_(OrDie(
            ::arrow::RecordBatchBuilder::Make(schema_, ::arrow::default_memory_pool()),
            "RecordBatchBuilder::Make")) {
    for (int i = 0; i < builder_->num_fields(); ++i)
      columns_.push_back(builder_->GetField(i));
  }

  ::arrow::ArrayBuilder* const* data() const { return columns_.data(); }

  // After a refused record: every builder, nested ones included, must still be empty (a
  // bad record leaves no trace). Cheaper than finishing, and most fuzz inputs are
  // refused.
  void CheckEmpty(const char* what) const {
    for (int i = 0; i < static_cast<int>(columns_.size()); ++i) {
      if (!IsEmpty(columns_[i])) {
        Fail(std::string(what) + ": a refused record left values in column '" +
             schema_->field(i)->name() + "'");
      }
    }
  }

  // Finishes (and so resets) the builders and checks what they held: every column has
  // `rows` values and the batch passes ValidateFull (offsets, child lengths, UTF-8, null
  // counts). With `rows_equal`, all rows must be equal: the same record decoded twice
  // must give the same row (no state leaks from one record into the next).
  void FinishAndCheck(int64_t rows, bool rows_equal, const char* what) {
    std::vector<std::shared_ptr<::arrow::Array>> arrays;
    for (int i = 0; i < builder_->num_fields(); ++i) {
      std::shared_ptr<::arrow::Array> a;
      CheckOk(columns_[i]->Finish(&a), what);
      if (a->length() != rows) {
        Fail(std::string(what) + ": column '" + schema_->field(i)->name() + "' has " +
             std::to_string(a->length()) + " values, expected " + std::to_string(rows));
      }
      if (!a->type()->Equals(*schema_->field(i)->type())) {
        Fail(std::string(what) + ": column '" + schema_->field(i)->name() +
             "' has type " + a->type()->ToString() + ", expected " +
             schema_->field(i)->type()->ToString());
      }
      arrays.push_back(std::move(a));
    }
    auto batch = ::arrow::RecordBatch::Make(schema_, rows, arrays);
    Status st = batch->ValidateFull();
    if (!st.ok()) Fail(std::string(what) + ": ValidateFull: " + st.ToString());
    if (rows_equal && rows > 1) {
      const auto options = ::arrow::EqualOptions::Defaults().nans_equal(true);
      for (int64_t r = 1; r < rows; ++r) {
        if (!batch->Slice(0, 1)->Equals(*batch->Slice(r, 1), /*check_metadata=*/false,
                                        options)) {
          Fail(std::string(what) +
               ": the same record decoded twice gave different rows:\n" +
               batch->ToString());
        }
      }
    }
  }

 private:
  static bool IsEmpty(::arrow::ArrayBuilder* b) {
    if (b->length() != 0 || b->null_count() != 0) return false;
    if (auto* bin = dynamic_cast<::arrow::BinaryBuilder*>(b)) {
      return bin->value_data_length() == 0;
    }
    if (auto* st = dynamic_cast<::arrow::StructBuilder*>(b)) {
      for (int i = 0; i < st->num_fields(); ++i) {
        if (!IsEmpty(st->field_builder(i))) return false;
      }
    } else if (auto* map = dynamic_cast<::arrow::MapBuilder*>(b)) {
      return IsEmpty(map->key_builder()) && IsEmpty(map->item_builder());
    } else if (auto* list = dynamic_cast<::arrow::ListBuilder*>(b)) {
      return IsEmpty(list->value_builder());
    }
    return true;
  }

  std::shared_ptr<::arrow::Schema> schema_;
  std::unique_ptr<::arrow::RecordBatchBuilder> builder_;
  std::vector<::arrow::ArrayBuilder*> columns_;
};

// Decodes one record twice with `decoder` (AvroDecoder, ProtobufDecoder: a `Decode(data,
// size, columns)` member) into `columns`, and checks the outcome: both decodes agree, an
// error is kInvalidRecord, a refused record leaves the builders empty, an accepted one
// gives two equal valid rows. Returns whether the record was accepted.
template <typename Decoder>
bool DecodeTwiceAndCheck(Decoder& decoder, Columns& columns, const uint8_t* data,
                         size_t size, const char* name) {
  Status first = decoder.Decode(data, size, columns.data());
  Report(name, first);
  CheckDecodeError(first, name);
  Status second = decoder.Decode(data, size, columns.data());
  CheckDecodeError(second, name);
  if (first.ok() != second.ok()) {
    Fail(std::string(name) + ": the same record decoded twice gave " + first.ToString() +
         " then " + second.ToString());
  }
  if (first.ok()) {
    columns.FinishAndCheck(2, /*rows_equal=*/true, name);
  } else {
    columns.CheckEmpty(name);
  }
  return first.ok();
}

}  // namespace floe::fuzz
