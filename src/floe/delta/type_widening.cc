#include "floe/delta/type_widening.h"

#include <optional>

namespace floe::delta {

namespace {

struct DecimalType {
  int precision = 0;
  int scale = 0;
};

// "decimal(P,S)" or "decimal(P, S)".
std::optional<DecimalType> ParseDecimal(std::string_view t) {
  constexpr std::string_view kPrefix = "decimal(";
  if (t.substr(0, kPrefix.size()) != kPrefix || t.empty() || t.back() != ')') {
    return std::nullopt;
  }
  t.remove_prefix(kPrefix.size());
  t.remove_suffix(1);
  auto number = [](std::string_view s) -> std::optional<int> {
    while (!s.empty() && s.front() == ' ') s.remove_prefix(1);
    while (!s.empty() && s.back() == ' ') s.remove_suffix(1);
    if (s.empty() || s.size() > 2) return std::nullopt;
    int v = 0;
    for (char c : s) {
      if (c < '0' || c > '9') return std::nullopt;
      v = v * 10 + (c - '0');
    }
    return v;
  };
  const size_t comma = t.find(',');
  if (comma == std::string_view::npos) return std::nullopt;
  auto p = number(t.substr(0, comma));
  auto s = number(t.substr(comma + 1));
  if (!p || !s || *s > *p) return std::nullopt;
  return DecimalType{*p, *s};
}

// Rank in the integer chain byte < short < integer < long; 0 for other types.
int IntegerRank(std::string_view t) {
  if (t == "byte") return 1;
  if (t == "short") return 2;
  if (t == "integer") return 3;
  if (t == "long") return 4;
  return 0;
}

}  // namespace

bool IsSupportedTypeChange(std::string_view from, std::string_view to) {
  if (from == to) return false;
  const int from_int = IntegerRank(from);
  if (from_int > 0) {
    const int to_int = IntegerRank(to);
    if (to_int > 0) return to_int > from_int;
    if (to == "double") return from_int <= 3;
    if (auto d = ParseDecimal(to)) {
      // Every value of the integer type fits the integer digits of the decimal.
      const int digits = from_int == 4 ? 20 : 10;
      const int k2 = d->scale;
      const int k1 = d->precision - digits;
      return k1 >= k2 && k2 >= 0;
    }
    return false;
  }
  if (from == "float") return to == "double";
  if (from == "date") return to == "timestamp_ntz";
  if (auto f = ParseDecimal(from)) {
    auto t = ParseDecimal(to);
    if (!t) return false;
    const int k1 = t->precision - f->precision;
    const int k2 = t->scale - f->scale;
    return k1 >= k2 && k2 >= 0;
  }
  return false;
}

}  // namespace floe::delta
