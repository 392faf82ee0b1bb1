#include <sqlite3.h>
#include <sys/stat.h>

#include <mutex>

#include "floe/catalog/pointer_store.h"
#include "floe/common/log.h"

namespace floe::catalog {

namespace {

constexpr int kBusyTimeoutMs = 10000;

class SqliteStore : public PointerStore {
 public:
  SqliteStore(sqlite3* db, std::string path, std::string catalog_name)
      : db_(db), path_(std::move(path)), catalog_(std::move(catalog_name)) {}
  ~SqliteStore() override { sqlite3_close(db_); }

  Status Init() {
    FLOE_RETURN_NOT_OK(Exec("PRAGMA journal_mode=WAL"));
    FLOE_RETURN_NOT_OK(
        Exec("CREATE TABLE IF NOT EXISTS iceberg_tables ("
             "catalog_name VARCHAR(255) NOT NULL, table_namespace VARCHAR(255) NOT NULL, "
             "table_name VARCHAR(255) NOT NULL, metadata_location VARCHAR(1000), "
             "previous_metadata_location VARCHAR(1000), iceberg_type VARCHAR(5), "
             "PRIMARY KEY (catalog_name, table_namespace, table_name))"));
    FLOE_RETURN_NOT_OK(
        Exec("CREATE TABLE IF NOT EXISTS iceberg_namespace_properties ("
             "catalog_name VARCHAR(255) NOT NULL, namespace VARCHAR(255) NOT NULL, "
             "property_key VARCHAR(255) NOT NULL, property_value VARCHAR(1000) NOT NULL, "
             "PRIMARY KEY (catalog_name, namespace, property_key))"));
    // A catalog created by an older pyiceberg (schema v0) lacks iceberg_type.
    if (!Exec("SELECT iceberg_type FROM iceberg_tables LIMIT 0").ok()) {
      FLOE_RETURN_NOT_OK(
          Exec("ALTER TABLE iceberg_tables ADD COLUMN iceberg_type VARCHAR(5)"));
    }
    return Status::OK();
  }

  Result<std::string> Get(const TableIdent& ident) override {
    std::lock_guard lock(mu_);
    Stmt st(db_,
            "SELECT metadata_location FROM iceberg_tables WHERE catalog_name=? AND "
            "table_namespace=? AND table_name=? AND (iceberg_type='TABLE' OR "
            "iceberg_type IS NULL)");
    FLOE_RETURN_NOT_OK(st.status);
    st.Bind(1, catalog_).Bind(2, ident.NamespaceString()).Bind(3, ident.name);
    int rc = st.Step();
    if (rc == SQLITE_ROW) {
      const unsigned char* loc = sqlite3_column_text(st.stmt, 0);
      if (loc == nullptr)
        return NotFound("table " + ident.ToString() + " has no metadata location");
      return std::string(reinterpret_cast<const char*>(loc));
    }
    if (rc == SQLITE_DONE)
      return NotFound("table " + ident.ToString() + " does not exist");
    return Error("load pointer of " + ident.ToString());
  }

  Status Create(const TableIdent& ident, const std::string& location) override {
    FLOE_RETURN_NOT_OK(ValidateIdent(ident));
    std::lock_guard lock(mu_);
    FLOE_RETURN_NOT_OK(WritableLocked());
    return CreateLocked(ident, location);
  }

  Status Swap(const TableIdent& ident, const std::string& expected,
              const std::string& desired) override {
    std::lock_guard lock(mu_);
    FLOE_RETURN_NOT_OK(WritableLocked());
    return SwapLocked(ident, expected, desired);
  }

  Status SwapAll(const std::vector<SwapOp>& ops) override {
    for (const auto& op : ops) {
      if (op.expected.empty()) FLOE_RETURN_NOT_OK(ValidateIdent(op.ident));
    }
    std::lock_guard lock(mu_);
    FLOE_RETURN_NOT_OK(WritableLocked());
    // IMMEDIATE: take the write lock up front so no other writer (pyiceberg on the same
    // file) can slip in between our statements.
    int rc = sqlite3_exec(db_, "BEGIN IMMEDIATE", nullptr, nullptr, nullptr);
    if (rc == SQLITE_READONLY) return ReadOnly();
    if (rc != SQLITE_OK)
      return Retriable(std::string("catalog busy: ") + sqlite3_errmsg(db_));
    for (const auto& op : ops) {
      Status st = op.expected.empty() ? CreateLocked(op.ident, op.desired)
                                      : SwapLocked(op.ident, op.expected, op.desired);
      if (!st.ok()) {
        sqlite3_exec(db_, "ROLLBACK", nullptr, nullptr, nullptr);
        return st;
      }
    }
    rc = sqlite3_exec(db_, "COMMIT", nullptr, nullptr, nullptr);
    if (rc == SQLITE_OK) return Status::OK();
    std::string msg = sqlite3_errmsg(db_);
    if (sqlite3_get_autocommit(db_) == 0)
      sqlite3_exec(db_, "ROLLBACK", nullptr, nullptr, nullptr);
    if (rc == SQLITE_BUSY)
      return Retriable("catalog busy while committing a transaction");
    return StateUnknown("catalog transaction commit failed: " + msg);
  }

  Status Rename(const TableIdent& from, const TableIdent& to) override {
    FLOE_RETURN_NOT_OK(ValidateIdent(to));
    std::lock_guard lock(mu_);
    FLOE_RETURN_NOT_OK(WritableLocked());
    Stmt st(db_,
            "UPDATE iceberg_tables SET table_namespace=?, table_name=? WHERE "
            "catalog_name=? AND table_namespace=? AND table_name=?");
    FLOE_RETURN_NOT_OK(st.status);
    st.Bind(1, to.NamespaceString()).Bind(2, to.name).Bind(3, catalog_);
    st.Bind(4, from.NamespaceString()).Bind(5, from.name);
    int rc = st.Step();
    if (rc == SQLITE_DONE) {
      if (sqlite3_changes(db_) == 1) return Status::OK();
      return NotFound("table " + from.ToString() + " does not exist");
    }
    if (sqlite3_extended_errcode(db_) == SQLITE_CONSTRAINT_PRIMARYKEY) {
      return Conflict("table " + to.ToString() + " already exists");
    }
    return Error("rename table " + from.ToString());
  }

  Status Drop(const TableIdent& ident, const std::string& expected) override {
    {
      std::lock_guard lock(mu_);
      FLOE_ASSIGN_OR_RAISE(bool dropped, DropLocked(ident, expected));
      if (dropped) return Status::OK();
    }
    return DropMissed(ident, Get(ident).ok());
  }

  Result<bool> DropLocked(const TableIdent& ident, const std::string& expected) {
    FLOE_RETURN_NOT_OK(WritableLocked());
    Stmt st(db_,
            "DELETE FROM iceberg_tables WHERE catalog_name=? AND table_namespace=? AND "
            "table_name=? AND (?='' OR metadata_location=?)");
    FLOE_RETURN_NOT_OK(st.status);
    st.Bind(1, catalog_).Bind(2, ident.NamespaceString()).Bind(3, ident.name);
    st.Bind(4, expected).Bind(5, expected);
    if (st.Step() != SQLITE_DONE) return Error("drop table " + ident.ToString());
    return sqlite3_changes(db_) != 0;
  }

  Result<std::vector<TableIdent>> ListTables(
      const std::vector<std::string>& ns) override {
    std::lock_guard lock(mu_);
    TableIdent probe{ns, ""};
    Stmt st(db_,
            "SELECT table_name FROM iceberg_tables WHERE catalog_name=? AND "
            "table_namespace=? ORDER BY table_name");
    FLOE_RETURN_NOT_OK(st.status);
    st.Bind(1, catalog_).Bind(2, probe.NamespaceString());
    std::vector<TableIdent> out;
    int rc;
    while ((rc = st.Step()) == SQLITE_ROW) {
      out.push_back(
          TableIdent{ns, reinterpret_cast<const char*>(sqlite3_column_text(st.stmt, 0))});
    }
    if (rc != SQLITE_DONE) return Error("list tables");
    return out;
  }

  Status CreateNamespace(const std::vector<std::string>& ns,
                         const std::map<std::string, std::string>& props) override {
    FLOE_RETURN_NOT_OK(ValidateNamespaceLevels(ns));
    std::lock_guard lock(mu_);
    FLOE_RETURN_NOT_OK(WritableLocked());
    TableIdent probe{ns, ""};
    // The "exists" row first, as a plain insert: of two creators of one namespace exactly
    // one inserts it (the primary key refuses the other), so exactly one succeeds.
    std::vector<std::pair<std::string, std::string>> rows = {{"exists", "true"}};
    for (const auto& [k, v] : props) {
      if (k != "exists") rows.emplace_back(k, v);
    }
    for (size_t i = 0; i < rows.size(); ++i) {
      Stmt st(db_, i == 0 ? "INSERT INTO iceberg_namespace_properties (catalog_name, "
                            "namespace, property_key, property_value) VALUES (?, ?, ?, ?)"
                          : "INSERT OR IGNORE INTO iceberg_namespace_properties "
                            "(catalog_name, namespace, property_key, property_value) "
                            "VALUES (?, ?, ?, ?)");
      FLOE_RETURN_NOT_OK(st.status);
      st.Bind(1, catalog_).Bind(2, probe.NamespaceString()).Bind(3, rows[i].first);
      st.Bind(4, rows[i].second);
      if (st.Step() != SQLITE_DONE) {
        if (i == 0 && sqlite3_extended_errcode(db_) == SQLITE_CONSTRAINT_PRIMARYKEY) {
          return Conflict("namespace " + probe.NamespaceString() + " already exists");
        }
        return Error("create namespace " + probe.NamespaceString());
      }
    }
    return Status::OK();
  }

  Result<bool> NamespaceExists(const std::vector<std::string>& ns) override {
    std::lock_guard lock(mu_);
    TableIdent probe{ns, ""};
    Stmt st(db_,
            "SELECT 1 FROM iceberg_namespace_properties WHERE catalog_name=? AND "
            "namespace=? LIMIT 1");
    FLOE_RETURN_NOT_OK(st.status);
    st.Bind(1, catalog_).Bind(2, probe.NamespaceString());
    int rc = st.Step();
    if (rc == SQLITE_ROW) return true;
    if (rc == SQLITE_DONE) return false;
    return Error("namespace lookup");
  }

  Result<std::vector<std::vector<std::string>>> ListNamespaces() override {
    std::lock_guard lock(mu_);
    Stmt st(db_,
            "SELECT namespace FROM iceberg_namespace_properties WHERE catalog_name=? "
            "UNION SELECT table_namespace FROM iceberg_tables WHERE catalog_name=? "
            "ORDER BY 1");
    FLOE_RETURN_NOT_OK(st.status);
    st.Bind(1, catalog_).Bind(2, catalog_);
    std::vector<std::vector<std::string>> out;
    int rc;
    while ((rc = st.Step()) == SQLITE_ROW) {
      const auto* text = reinterpret_cast<const char*>(sqlite3_column_text(st.stmt, 0));
      if (text == nullptr || *text == '\0') continue;
      out.push_back(SplitNamespaceString(text));
    }
    if (rc != SQLITE_DONE) return Error("list namespaces");
    return out;
  }

  Result<std::map<std::string, std::string>> NamespaceProperties(
      const std::vector<std::string>& ns) override {
    std::lock_guard lock(mu_);
    TableIdent probe{ns, ""};
    Stmt st(db_,
            "SELECT property_key, property_value FROM iceberg_namespace_properties "
            "WHERE catalog_name=? AND namespace=?");
    FLOE_RETURN_NOT_OK(st.status);
    st.Bind(1, catalog_).Bind(2, probe.NamespaceString());
    std::map<std::string, std::string> out;
    bool any = false;
    int rc;
    while ((rc = st.Step()) == SQLITE_ROW) {
      any = true;
      const auto* k = reinterpret_cast<const char*>(sqlite3_column_text(st.stmt, 0));
      const auto* v = reinterpret_cast<const char*>(sqlite3_column_text(st.stmt, 1));
      if (k != nullptr) out[k] = v ? v : "";
    }
    if (rc != SQLITE_DONE) return Error("load namespace " + probe.NamespaceString());
    if (!any) return NotFound("namespace " + probe.NamespaceString() + " does not exist");
    return out;
  }

  Status UpdateNamespaceProperties(const std::vector<std::string>& ns,
                                   const std::map<std::string, std::string>& updates,
                                   const std::vector<std::string>& removals) override {
    std::lock_guard lock(mu_);
    FLOE_RETURN_NOT_OK(WritableLocked());
    TableIdent probe{ns, ""};
    const std::string nss = probe.NamespaceString();
    if (sqlite3_exec(db_, "BEGIN IMMEDIATE", nullptr, nullptr, nullptr) != SQLITE_OK) {
      return Retriable(std::string("catalog busy: ") + sqlite3_errmsg(db_));
    }
    auto fail = [&](const std::string& what) {
      Status err = Error(what);
      sqlite3_exec(db_, "ROLLBACK", nullptr, nullptr, nullptr);
      return err;
    };
    for (const auto& key : removals) {
      Stmt st(db_,
              "DELETE FROM iceberg_namespace_properties WHERE catalog_name=? AND "
              "namespace=? AND property_key=?");
      if (!st.status.ok()) return fail("prepare");
      st.Bind(1, catalog_).Bind(2, nss).Bind(3, key);
      if (st.Step() != SQLITE_DONE) return fail("remove namespace property " + key);
    }
    for (const auto& [k, v] : updates) {
      Stmt st(db_,
              "INSERT INTO iceberg_namespace_properties (catalog_name, namespace, "
              "property_key, property_value) VALUES (?, ?, ?, ?) ON CONFLICT "
              "(catalog_name, namespace, property_key) DO UPDATE SET "
              "property_value=excluded.property_value");
      if (!st.status.ok()) return fail("prepare");
      st.Bind(1, catalog_).Bind(2, nss).Bind(3, k).Bind(4, v);
      if (st.Step() != SQLITE_DONE) return fail("set namespace property " + k);
    }
    // The namespace must keep a row, or it would vanish (SQL catalog convention).
    {
      Stmt st(db_,
              "INSERT OR IGNORE INTO iceberg_namespace_properties (catalog_name, "
              "namespace, property_key, property_value) VALUES (?, ?, 'exists', 'true')");
      if (!st.status.ok()) return fail("prepare");
      st.Bind(1, catalog_).Bind(2, nss);
      if (st.Step() != SQLITE_DONE) return fail("keep namespace " + nss);
    }
    if (sqlite3_exec(db_, "COMMIT", nullptr, nullptr, nullptr) != SQLITE_OK) {
      return fail("commit namespace properties of " + nss);
    }
    return Status::OK();
  }

  Status DropNamespace(const std::vector<std::string>& ns) override {
    std::lock_guard lock(mu_);
    FLOE_RETURN_NOT_OK(WritableLocked());
    TableIdent probe{ns, ""};
    Stmt st(db_,
            "DELETE FROM iceberg_namespace_properties WHERE catalog_name=? AND "
            "namespace=?");
    FLOE_RETURN_NOT_OK(st.status);
    st.Bind(1, catalog_).Bind(2, probe.NamespaceString());
    if (st.Step() != SQLITE_DONE)
      return Error("drop namespace " + probe.NamespaceString());
    if (sqlite3_changes(db_) == 0) {
      return NotFound("namespace " + probe.NamespaceString() + " does not exist");
    }
    return Status::OK();
  }

 private:
  Status CreateLocked(const TableIdent& ident, const std::string& location) {
    Stmt st(db_,
            "INSERT INTO iceberg_tables (catalog_name, table_namespace, table_name, "
            "metadata_location, previous_metadata_location, iceberg_type) "
            "VALUES (?, ?, ?, ?, NULL, 'TABLE')");
    FLOE_RETURN_NOT_OK(st.status);
    st.Bind(1, catalog_)
        .Bind(2, ident.NamespaceString())
        .Bind(3, ident.name)
        .Bind(4, location);
    int rc = st.Step();
    if (rc == SQLITE_DONE) return Status::OK();
    if (sqlite3_extended_errcode(db_) == SQLITE_CONSTRAINT_PRIMARYKEY) {
      return Conflict("table " + ident.ToString() + " already exists");
    }
    return Error("create table " + ident.ToString());
  }

  Status SwapLocked(const TableIdent& ident, const std::string& expected,
                    const std::string& desired) {
    Stmt st(db_,
            "UPDATE iceberg_tables SET metadata_location=?, previous_metadata_location=? "
            "WHERE catalog_name=? AND table_namespace=? AND table_name=? AND "
            "metadata_location=?");
    FLOE_RETURN_NOT_OK(st.status);
    st.Bind(1, desired)
        .Bind(2, expected)
        .Bind(3, catalog_)
        .Bind(4, ident.NamespaceString());
    st.Bind(5, ident.name).Bind(6, expected);
    int rc = st.Step();
    if (rc == SQLITE_DONE) {
      if (sqlite3_changes(db_) == 1) return Status::OK();
      return Conflict("table " + ident.ToString() + " was changed by another writer");
    }
    if (rc == SQLITE_READONLY) return ReadOnly();  // refused before it changed anything
    if (rc == SQLITE_BUSY) {
      // Busy after the timeout: the statement did not run, so nothing was applied.
      return Retriable("catalog busy while committing " + ident.ToString());
    }
    // An autocommit statement that failed is rolled back by SQLite, but an I/O error
    // during the commit itself leaves the outcome unknown to us: the caller reloads and
    // checks.
    return StateUnknown("pointer swap of " + ident.ToString() +
                        " failed: " + sqlite3_errmsg(db_));
  }

  // RAII prepared statement; binds are chained, text is copied (SQLITE_TRANSIENT).
  struct Stmt {
    Stmt(sqlite3* db, const char* sql) {
      if (sqlite3_prepare_v2(db, sql, -1, &stmt, nullptr) != SQLITE_OK) {
        status = Retriable(std::string("catalog: prepare failed: ") + sqlite3_errmsg(db));
      }
    }
    ~Stmt() { sqlite3_finalize(stmt); }
    Stmt& Bind(int i, const std::string& v) {
      sqlite3_bind_text(stmt, i, v.data(), static_cast<int>(v.size()), SQLITE_TRANSIENT);
      return *this;
    }
    int Step() { return sqlite3_step(stmt); }
    sqlite3_stmt* stmt = nullptr;
    Status status;
  };

  Status CheckWritable() override {
    std::lock_guard lock(mu_);
    return WritableLocked();
  }

  // A connection SQLite opened read-only (the file was not writable then) stays
  // read-only: writes reopen it first, so a catalog made writable again is used without
  // a restart. Until then every write fails here, before anything was attempted.
  //
  // A catalog file moved or deleted under an open connection would silently take commits
  // into a file nobody finds again (a restart opens a new empty one at the path): writes
  // wait, kRetriable, until a file is at its path again. A file put back under another
  // inode (restored from a copy) is opened, as a restart would.
  Status WritableLocked() {
    int moved = 0;
    if (sqlite3_file_control(db_, "main", SQLITE_FCNTL_HAS_MOVED, &moved) == SQLITE_OK &&
        moved != 0) {
      struct stat st{};
      sqlite3* fresh = nullptr;
      if (::stat(path_.c_str(), &st) == 0 &&
          sqlite3_open_v2(path_.c_str(), &fresh,
                          SQLITE_OPEN_READWRITE | SQLITE_OPEN_FULLMUTEX,
                          nullptr) == SQLITE_OK) {
        FLOE_LOG_WARN(
            "catalog {}: the file at that path is not the one Floe had open; opened it",
            path_);
        sqlite3_busy_timeout(fresh, kBusyTimeoutMs);
        sqlite3_close(db_);
        db_ = fresh;
      } else {
        sqlite3_close(fresh);
        return Retriable(
            "catalog " + path_ +
            " is gone: the file Floe has open is no longer at that path (moved "
            "or deleted, or its volume unmounted); nothing was changed, commits "
            "are retried until it is back");
      }
    }
    if (sqlite3_db_readonly(db_, "main") != 1) return Status::OK();
    sqlite3* fresh = nullptr;
    int rc = sqlite3_open_v2(path_.c_str(), &fresh,
                             SQLITE_OPEN_READWRITE | SQLITE_OPEN_FULLMUTEX, nullptr);
    if (rc == SQLITE_OK && sqlite3_db_readonly(fresh, "main") == 0) {
      sqlite3_busy_timeout(fresh, kBusyTimeoutMs);
      sqlite3_close(db_);
      db_ = fresh;
      return Status::OK();
    }
    sqlite3_close(fresh);
    return ReadOnly();
  }

  Status ReadOnly() const {
    return Retriable("catalog " + path_ +
                     " is read-only (the file or its directory is not writable); "
                     "nothing was changed, commits are retried until it is writable");
  }

  Status Exec(const char* sql) {
    char* err = nullptr;
    if (sqlite3_exec(db_, sql, nullptr, nullptr, &err) != SQLITE_OK) {
      std::string msg = err ? err : "unknown error";
      sqlite3_free(err);
      return Retriable(std::string("catalog: ") + msg + " (" + sql + ")");
    }
    return Status::OK();
  }

  Status Error(const std::string& what) {
    int code = sqlite3_errcode(db_);
    if (code == SQLITE_READONLY) return ReadOnly();
    std::string msg = "catalog: " + what + ": " + sqlite3_errmsg(db_);
    if (code == SQLITE_BUSY || code == SQLITE_LOCKED || code == SQLITE_IOERR ||
        code == SQLITE_FULL || code == SQLITE_CANTOPEN) {
      return Retriable(msg);
    }
    // Anything else (corruption, an unexpected constraint) is the server's fault, never
    // the request's.
    return Internal(msg);
  }

  std::mutex mu_;
  sqlite3* db_;
  std::string path_;
  std::string catalog_;
};

}  // namespace

Result<std::unique_ptr<PointerStore>> OpenSqliteStore(const std::string& path,
                                                      const std::string& catalog_name) {
  sqlite3* db = nullptr;
  int rc = sqlite3_open_v2(
      path.c_str(), &db,
      SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_FULLMUTEX, nullptr);
  if (rc != SQLITE_OK) {
    std::string msg = db ? sqlite3_errmsg(db) : "out of memory";
    sqlite3_close(db);
    return Retriable("cannot open SQLite catalog " + path + ": " + msg);
  }
  // pyiceberg may write the same file: wait for its locks rather than failing.
  sqlite3_busy_timeout(db, kBusyTimeoutMs);
  auto store = std::make_unique<SqliteStore>(db, path, catalog_name);
  FLOE_RETURN_NOT_OK(store->Init());
  return std::unique_ptr<PointerStore>(std::move(store));
}

}  // namespace floe::catalog
