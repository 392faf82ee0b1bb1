// The scan that explains a number simdjson cannot hold (json_number_scan_internal.h):
// simdjson refuses such a document whole; this walks the text along the program to name
// the value at fault, or to find the literals to rewrite.
#include <cmath>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "floe/common/utf8.h"
#include "floe/decode/json_decoder.h"
#include "floe/decode/json_number_scan_internal.h"
#include "floe/decode/json_program_internal.h"

namespace floe::decode::internal::json {

bool NumberScan::Run() { return Value(0, 1) && (Ws(), i_ == s_.size()); }

std::string NumberScan::Shorten(std::string_view v) {
  if (v.size() > 40) return std::string(v.substr(0, 40)) + "...";
  return std::string(v);
}

void NumberScan::Ws() {
  while (i_ < s_.size() &&
         (s_[i_] == ' ' || s_[i_] == '\t' || s_[i_] == '\n' || s_[i_] == '\r')) {
    ++i_;
  }
}

bool NumberScan::Literal(std::string_view word) {
  if (s_.substr(i_, word.size()) != word) return false;
  i_ += word.size();
  return true;
}

// `op` is the program op the value goes to, or -1 (not read by the schema).
bool NumberScan::Value(int64_t op, int depth) {
  Ws();
  if (i_ >= s_.size()) return false;
  switch (s_[i_]) {
    case '{':
      return depth <= kMaxJsonDocumentDepth && Object(op, depth);
    case '[':
      return depth <= kMaxJsonDocumentDepth && Array(op, depth);
    case '"':
      return String(nullptr);
    case 't':
      return Literal("true");
    case 'f':
      return Literal("false");
    case 'n':
      return Literal("null");
    default:
      return Number(op);
  }
}

bool NumberScan::Object(int64_t op, int depth) {
  const Op* o = op >= 0 ? &p_.ops[op] : nullptr;
  ++i_;
  Ws();
  if (i_ < s_.size() && s_[i_] == '}') return ++i_, true;
  std::string key;
  while (true) {
    Ws();
    if (i_ >= s_.size() || s_[i_] != '"' || !String(&key)) return false;
    Ws();
    if (i_ >= s_.size() || s_[i_] != ':') return false;
    ++i_;
    int64_t child = -1;
    if (o != nullptr && o->kind == Kind::kMap) {
      child = o->first_child + 1;
    } else if (o != nullptr && o->kind == Kind::kObject) {
      for (uint32_t k = 0; k < o->num_props; ++k) {
        if (p_.names[o->first_child + k] == key) child = o->first_child + k;
      }
    }
    path_.push_back("." + key.substr(0, 64));
    if (!Value(child, depth + 1)) return false;
    path_.pop_back();
    Ws();
    if (i_ >= s_.size()) return false;
    if (s_[i_++] == '}') return true;
    if (s_[i_ - 1] != ',') return false;
  }
}

bool NumberScan::Array(int64_t op, int depth) {
  const int64_t item = op >= 0 && p_.ops[op].kind == Kind::kArray
                           ? static_cast<int64_t>(p_.ops[op].first_child)
                           : int64_t{-1};
  ++i_;
  Ws();
  if (i_ < s_.size() && s_[i_] == ']') return ++i_, true;
  for (int64_t n = 0;; ++n) {
    path_.push_back("[" + std::to_string(n) + "]");
    if (!Value(item, depth + 1)) return false;
    path_.pop_back();
    Ws();
    if (i_ >= s_.size()) return false;
    if (s_[i_++] == ']') return true;
    if (s_[i_ - 1] != ',') return false;
  }
}

int NumberScan::Hex(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

bool NumberScan::Hex4(uint32_t* out) {
  if (i_ + 4 > s_.size()) return false;
  uint32_t v = 0;
  for (int k = 0; k < 4; ++k) {
    const int h = Hex(s_[i_++]);
    if (h < 0) return false;
    v = v * 16 + static_cast<uint32_t>(h);
  }
  *out = v;
  return true;
}

// A string at i_ (the opening quote); decoded into `out` (keys) when given.
bool NumberScan::String(std::string* out) {
  if (out) out->clear();
  ++i_;
  while (i_ < s_.size()) {
    const char c = s_[i_++];
    if (c == '"') return true;
    if (static_cast<unsigned char>(c) < 0x20) return false;
    if (c != '\\') {
      if (out) out->push_back(c);
      continue;
    }
    if (i_ >= s_.size()) return false;
    const char e = s_[i_++];
    char plain = 0;
    switch (e) {
      case '"':
      case '\\':
      case '/':
        plain = e;
        break;
      case 'b':
        plain = '\b';
        break;
      case 'f':
        plain = '\f';
        break;
      case 'n':
        plain = '\n';
        break;
      case 'r':
        plain = '\r';
        break;
      case 't':
        plain = '\t';
        break;
      case 'u': {
        uint32_t cp;
        if (!Hex4(&cp)) return false;
        if (cp >= 0xD800 && cp < 0xDC00 && Literal("\\u")) {
          uint32_t lo;
          if (!Hex4(&lo) || lo < 0xDC00 || lo >= 0xE000) return false;
          cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
        }
        if (out) AppendUtf8(cp, out);
        continue;
      }
      default:
        return false;
    }
    if (out) out->push_back(plain);
  }
  return false;
}

// An RFC 8259 number at i_; records a fix or the error when it is beyond what simdjson
// holds.
bool NumberScan::Number(int64_t op) {
  const size_t begin = i_;
  const bool negative = s_[i_] == '-';
  if (negative) ++i_;
  const size_t int_begin = i_;
  if (!Digit()) return false;
  if (s_[i_] == '0') {
    ++i_;
  } else {
    while (Digit()) ++i_;
  }
  const size_t int_digits = i_ - int_begin;
  bool is_float = false;
  if (i_ < s_.size() && s_[i_] == '.') {
    ++i_;
    if (!Digit()) return false;
    while (Digit()) ++i_;
    is_float = true;
  }
  if (i_ < s_.size() && (s_[i_] == 'e' || s_[i_] == 'E')) {
    ++i_;
    if (i_ < s_.size() && (s_[i_] == '+' || s_[i_] == '-')) ++i_;
    if (!Digit()) return false;
    while (Digit()) ++i_;
    is_float = true;
  }
  const std::string_view literal = s_.substr(begin, i_ - begin);
  bool beyond;
  if (is_float) {
    beyond = !std::isfinite(std::strtod(std::string(literal).c_str(), nullptr));
  } else {
    // Integers simdjson holds: [-2^63, 2^64 - 1].
    const std::string_view digits = s_.substr(int_begin, int_digits);
    const std::string_view limit =
        negative ? "9223372036854775808" : "18446744073709551615";
    beyond =
        digits.size() > limit.size() || (digits.size() == limit.size() && digits > limit);
  }
  if (!beyond) return true;
  const Kind kind = op >= 0 ? p_.ops[op].kind : Kind::kAbsent;
  if (kind == Kind::kInteger || (kind == Kind::kNumber && is_float)) {
    if (error_.empty()) {  // the first one; the rest of the text is still checked
      error_ = (kind == Kind::kInteger ? "integer " : "number ") + Shorten(literal) +
               (kind == Kind::kInteger ? " is outside the int64 range"
                                       : " is outside the double range");
      error_path_ = "$";
      for (const auto& seg : path_) error_path_ += seg;
    }
  } else {
    fixes_.push_back({begin, i_, /*append_fraction=*/kind == Kind::kNumber});
  }
  return true;
}

}  // namespace floe::decode::internal::json
