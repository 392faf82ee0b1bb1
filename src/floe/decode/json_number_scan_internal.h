// Private to the JSON decoder (json_decoder.cc): the scan that explains a number simdjson
// cannot hold. It runs only after simdjson refused a record, never on a valid one.
//
// Threading: a NumberScan lives for one scan of one record, on the caller's stack.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace floe::decode::internal {

struct JsonProgram;  // json_program_internal.h

namespace json {

// simdjson refuses a whole document (NUMBER_ERROR) for an integer literal beyond
// int64/uint64 or a number beyond the double range, though RFC 8259 §6 allows both and
// leaves the range to the reader. Only after such an error, this scan walks the text
// along the program (and checks the whole text as RFC 8259 JSON) to explain it:
//  - such a literal in an integer column, or beyond the double range in a number column,
//    is an invalid record naming the path and the literal, like an integer beyond int64
//    (Validator);
//  - an integer literal in a number column is rewritten as a float ("…0" → "…0.0"), so it
//    is kept as a rounded double like any integer beyond 2^53;
//  - anywhere else (a key the schema does not declare, or a column of another type) it is
//    rewritten to 0: an undeclared key is not validated, and a column of another type
//    then fails the Validator's own type check.
// The rewritten copy is parsed again. A scan that finds no such literal (the document is
// malformed in another way) leaves simdjson's error standing.
class NumberScan {
 public:
  struct Fix {
    size_t begin = 0;
    size_t end = 0;
    bool append_fraction = false;  // else: the literal becomes 0
  };

  NumberScan(const JsonProgram& p, std::string_view text) : p_(p), s_(text) {}

  // False when the scan cannot read the text (simdjson's error stands); else error() is
  // the first value that makes the record invalid ("" if none) and fixes() the rewrites.
  bool Run();
  const std::string& error() const { return error_; }
  // "$.a[3].b" of the value that set error().
  const std::string& error_path() const { return error_path_; }
  const std::vector<Fix>& fixes() const { return fixes_; }

 private:
  static std::string Shorten(std::string_view v);
  void Ws();
  bool Literal(std::string_view word);
  bool Value(int64_t op, int depth);
  bool Object(int64_t op, int depth);
  bool Array(int64_t op, int depth);
  static int Hex(char c);
  bool Hex4(uint32_t* out);
  bool String(std::string* out);
  bool Digit() const { return i_ < s_.size() && s_[i_] >= '0' && s_[i_] <= '9'; }
  bool Number(int64_t op);

  const JsonProgram& p_;
  const std::string_view s_;
  size_t i_ = 0;
  std::vector<std::string> path_;
  std::vector<Fix> fixes_;
  std::string error_;
  std::string error_path_;
};

}  // namespace json
}  // namespace floe::decode::internal
