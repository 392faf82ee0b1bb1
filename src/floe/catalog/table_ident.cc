#include "floe/catalog/table_ident.h"

namespace floe::catalog {
namespace {

Status ValidateName(const std::string& part, const char* what) {
  if (part.empty()) return InvalidInput(std::string(what) + " must not be empty");
  if (part.size() > 255) {
    return InvalidInput(std::string(what) + " '" + part.substr(0, 32) +
                        "...' is longer than 255 bytes");
  }
  if (part == "." || part == "..") {
    return InvalidInput(std::string(what) + " '" + part + "' is not allowed");
  }
  for (unsigned char c : part) {
    if (c < 0x20 || c == 0x7f || c == '.' || c == '/' || c == '\\') {
      return InvalidInput(std::string(what) + " '" + part +
                          "' contains a forbidden character ('.', '/', '\\' or a control "
                          "character)");
    }
  }
  return Status::OK();
}

}  // namespace

std::string TableIdent::NamespaceString() const {
  std::string out;
  for (size_t i = 0; i < ns.size(); ++i) {
    if (i) out += '.';
    out += ns[i];
  }
  return out;
}

std::string TableIdent::ToString() const { return NamespaceString() + "." + name; }

Status ValidateNamespaceLevels(const std::vector<std::string>& ns) {
  for (const auto& level : ns) FLOE_RETURN_NOT_OK(ValidateName(level, "namespace level"));
  return Status::OK();
}

Status ValidateIdent(const TableIdent& ident) {
  if (ident.ns.empty()) return InvalidInput("a table needs a namespace");
  FLOE_RETURN_NOT_OK(ValidateNamespaceLevels(ident.ns));
  return ValidateName(ident.name, "table name");
}

std::vector<std::string> SplitNamespaceString(const std::string& text) {
  std::vector<std::string> out(1);
  for (char c : text) {
    if (c == '.') {
      out.emplace_back();
    } else {
      out.back() += c;
    }
  }
  return out;
}

}  // namespace floe::catalog
