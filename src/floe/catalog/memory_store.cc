// An in-memory PointerStore: the SQLite store's behaviour without a file, for unit tests
// of everything above the catalog (the pipeline's among them). One mutex serializes it.
#include <mutex>
#include <set>

#include "floe/catalog/pointer_store.h"

namespace floe::catalog {
namespace {

class MemoryStore : public PointerStore {
 public:
  Result<std::string> Get(const TableIdent& ident) override {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = tables_.find(ident);
    if (it == tables_.end())
      return NotFound("table " + ident.ToString() + " does not exist");
    return it->second;
  }

  Status Create(const TableIdent& ident, const std::string& location) override {
    std::lock_guard<std::mutex> lock(mu_);
    return CreateLocked(ident, location);
  }

  Status Swap(const TableIdent& ident, const std::string& expected,
              const std::string& desired) override {
    std::lock_guard<std::mutex> lock(mu_);
    return SwapLocked(ident, expected, desired);
  }

  Status Drop(const TableIdent& ident, const std::string& expected) override {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = tables_.find(ident);
    if (it == tables_.end() || (!expected.empty() && it->second != expected)) {
      return DropMissed(ident, it != tables_.end());
    }
    tables_.erase(it);
    return Status::OK();
  }

  Result<std::vector<TableIdent>> ListTables(
      const std::vector<std::string>& ns) override {
    std::lock_guard<std::mutex> lock(mu_);
    std::vector<TableIdent> out;
    for (const auto& [ident, location] : tables_) {
      if (ident.ns == ns) out.push_back(ident);
    }
    return out;
  }

  Status Rename(const TableIdent& from, const TableIdent& to) override {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = tables_.find(from);
    if (it == tables_.end())
      return NotFound("table " + from.ToString() + " does not exist");
    if (tables_.count(to)) return Conflict("table " + to.ToString() + " already exists");
    std::string location = it->second;
    tables_.erase(it);
    tables_[to] = location;
    return Status::OK();
  }

  Status SwapAll(const std::vector<SwapOp>& ops) override {
    std::lock_guard<std::mutex> lock(mu_);
    auto saved = tables_;
    for (const auto& op : ops) {
      Status st = op.expected.empty() ? CreateLocked(op.ident, op.desired)
                                      : SwapLocked(op.ident, op.expected, op.desired);
      if (!st.ok()) {
        tables_ = std::move(saved);
        return st;
      }
    }
    return Status::OK();
  }

  Status CreateNamespace(const std::vector<std::string>& ns,
                         const std::map<std::string, std::string>& props) override {
    std::lock_guard<std::mutex> lock(mu_);
    auto& existing = namespaces_[ns];
    existing.insert({"exists", "true"});
    for (const auto& [k, v] : props) existing.insert({k, v});
    return Status::OK();
  }

  Result<bool> NamespaceExists(const std::vector<std::string>& ns) override {
    std::lock_guard<std::mutex> lock(mu_);
    return namespaces_.count(ns) > 0;
  }

  Result<std::vector<std::vector<std::string>>> ListNamespaces() override {
    std::lock_guard<std::mutex> lock(mu_);
    std::set<std::vector<std::string>> all;
    for (const auto& [ns, props] : namespaces_) all.insert(ns);
    for (const auto& [ident, location] : tables_) all.insert(ident.ns);
    return std::vector<std::vector<std::string>>(all.begin(), all.end());
  }

  Result<std::map<std::string, std::string>> NamespaceProperties(
      const std::vector<std::string>& ns) override {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = namespaces_.find(ns);
    if (it == namespaces_.end()) {
      return NotFound("namespace " + TableIdent{ns, ""}.NamespaceString() +
                      " does not exist");
    }
    return it->second;
  }

  Status UpdateNamespaceProperties(const std::vector<std::string>& ns,
                                   const std::map<std::string, std::string>& updates,
                                   const std::vector<std::string>& removals) override {
    std::lock_guard<std::mutex> lock(mu_);
    auto& props = namespaces_[ns];
    for (const auto& key : removals) props.erase(key);
    for (const auto& [k, v] : updates) props[k] = v;
    props["exists"] = "true";
    return Status::OK();
  }

  Status DropNamespace(const std::vector<std::string>& ns) override {
    std::lock_guard<std::mutex> lock(mu_);
    if (namespaces_.erase(ns) == 0) {
      return NotFound("namespace " + TableIdent{ns, ""}.NamespaceString() +
                      " does not exist");
    }
    return Status::OK();
  }

 private:
  Status CreateLocked(const TableIdent& ident, const std::string& location) {
    if (!tables_.emplace(ident, location).second) {
      return Conflict("table " + ident.ToString() + " already exists");
    }
    return Status::OK();
  }
  Status SwapLocked(const TableIdent& ident, const std::string& expected,
                    const std::string& desired) {
    auto it = tables_.find(ident);
    if (it == tables_.end() || it->second != expected) {
      return Conflict("table " + ident.ToString() + " was changed by another writer");
    }
    it->second = desired;
    return Status::OK();
  }

  std::mutex mu_;
  std::map<TableIdent, std::string> tables_;
  std::map<std::vector<std::string>, std::map<std::string, std::string>> namespaces_;
};

}  // namespace

std::unique_ptr<PointerStore> MakeMemoryStore() {
  return std::make_unique<MemoryStore>();
}

}  // namespace floe::catalog
