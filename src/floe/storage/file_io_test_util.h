// Test fakes around FileIO (header-only; for unit tests of the modules above storage).
#pragma once

#include <arrow/io/interfaces.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "floe/storage/file_io.h"

namespace floe::storage {

// Delegates to another FileIO and fails chosen operations, so tests can check how a
// fault's kind travels up (a storage outage, a vanished or corrupt file, a library
// error):
//  - FailReads(st): every Read and OpenInputFile fails with `st` until FailReads(OK);
//  - FailNext(op, needle, n, st): the next `n` calls of `op` ("WriteNew",
//    "OpenOutputStream", "Read", "OpenInputFile", or "StreamWrite": a write to an open
//    stream, as a full disk fails it) whose URI contains `needle` fail.
// Thread-safe, like the FileIO it wraps.
class FaultyFileIO : public FileIO {
 public:
  explicit FaultyFileIO(std::unique_ptr<FileIO> inner)
      : owned_(std::move(inner)), inner_(owned_.get()) {}
  explicit FaultyFileIO(FileIO* inner) : inner_(inner) {}

  void FailReads(Status fault) {
    std::lock_guard lock(mu_);
    read_fault_ = std::move(fault);
  }
  void FailNext(std::string op, std::string needle, int n, Status st) {
    std::lock_guard lock(mu_);
    rules_.push_back({std::move(op), std::move(needle), n, std::move(st)});
  }
  // Called (outside the lock, on the calling thread) before every operation Check
  // sees, so a test can interleave another thread's work at a chosen read.
  void BeforeEach(std::function<void(const std::string& op, const std::string& uri)> fn) {
    std::lock_guard lock(mu_);
    before_each_ = std::move(fn);
  }
  // Injected failures not used yet (FailNext).
  int failures_left() const {
    std::lock_guard lock(mu_);
    int n = 0;
    for (const auto& r : rules_) n += r.n;
    return n;
  }

  Result<std::shared_ptr<::arrow::io::OutputStream>> OpenOutputStream(
      const std::string& uri) override {
    FLOE_RETURN_NOT_OK(Check("OpenOutputStream", uri));
    FLOE_ASSIGN_OR_RAISE(auto out, inner_->OpenOutputStream(uri));
    return std::make_shared<FaultyStream>(this, std::move(out), uri);
  }
  Result<std::shared_ptr<::arrow::io::RandomAccessFile>> OpenInputFile(
      const std::string& uri) override {
    FLOE_RETURN_NOT_OK(Check("OpenInputFile", uri));
    return inner_->OpenInputFile(uri);
  }
  Status WriteNew(const std::string& uri, std::string_view bytes) override {
    FLOE_RETURN_NOT_OK(Check("WriteNew", uri));
    return inner_->WriteNew(uri, bytes);
  }
  int64_t MaxStreamBufferBytes() const override { return inner_->MaxStreamBufferBytes(); }
  Status Overwrite(const std::string& uri, std::string_view bytes) override {
    FLOE_RETURN_NOT_OK(Check("Overwrite", uri));
    return inner_->Overwrite(uri, bytes);
  }
  Result<std::string> Read(const std::string& uri) override {
    FLOE_RETURN_NOT_OK(Check("Read", uri));
    return inner_->Read(uri);
  }
  Result<int64_t> Size(const std::string& uri) override { return inner_->Size(uri); }
  Result<bool> Exists(const std::string& uri) override { return inner_->Exists(uri); }
  Status Delete(const std::string& uri) override { return inner_->Delete(uri); }
  Result<bool> DeleteIfPresent(const std::string& uri) override {
    return inner_->DeleteIfPresent(uri);
  }
  Result<std::vector<FileInfo>> List(const std::string& prefix_uri) override {
    return inner_->List(prefix_uri);
  }
  Result<std::vector<FileInfo>> ListTree(const std::string& dir_uri) override {
    return inner_->ListTree(dir_uri);
  }

 private:
  // Fails the writes that a "StreamWrite" rule names (after they reach nothing).
  class FaultyStream : public ::arrow::io::OutputStream {
   public:
    FaultyStream(FaultyFileIO* io, std::shared_ptr<::arrow::io::OutputStream> inner,
                 std::string uri)
        : io_(io), inner_(std::move(inner)), uri_(std::move(uri)) {}
    Status Close() override { return inner_->Close(); }
    Status Abort() override { return inner_->Abort(); }
    bool closed() const override { return inner_->closed(); }
    Result<int64_t> Tell() const override { return inner_->Tell(); }
    Status Write(const void* data, int64_t nbytes) override {
      FLOE_RETURN_NOT_OK(io_->Check("StreamWrite", uri_));
      return inner_->Write(data, nbytes);
    }
    using ::arrow::io::OutputStream::Write;
    Status Flush() override { return inner_->Flush(); }

   private:
    FaultyFileIO* io_;
    std::shared_ptr<::arrow::io::OutputStream> inner_;
    std::string uri_;
  };

  struct Rule {
    std::string op, needle;
    int n;
    Status st;
  };
  Status Check(const std::string& op, const std::string& uri) {
    std::function<void(const std::string&, const std::string&)> hook;
    {
      std::lock_guard lock(mu_);
      hook = before_each_;
    }
    if (hook) hook(op, uri);
    std::lock_guard lock(mu_);
    if (!read_fault_.ok() && (op == "Read" || op == "OpenInputFile")) return read_fault_;
    for (auto& r : rules_) {
      if (r.n > 0 && r.op == op && uri.find(r.needle) != std::string::npos) {
        r.n--;
        return r.st;
      }
    }
    return Status::OK();
  }

  std::unique_ptr<FileIO> owned_;
  FileIO* inner_;
  mutable std::mutex mu_;
  Status read_fault_;
  std::vector<Rule> rules_;
  std::function<void(const std::string&, const std::string&)> before_each_;
};

}  // namespace floe::storage
