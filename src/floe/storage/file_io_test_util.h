// Test fakes around FileIO (header-only; for unit tests of the modules above storage).
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "floe/storage/file_io.h"

namespace floe::storage {

// Delegates to another FileIO and, while a read fault is set, fails every Read with it
// (a storage outage, a vanished or corrupt file, an unexpected library error), so tests
// can check how a fault's kind travels up. Thread-safe, like the FileIO it wraps.
class FaultyFileIO : public FileIO {
 public:
  explicit FaultyFileIO(std::unique_ptr<FileIO> inner) : inner_(std::move(inner)) {}

  // OK clears the fault.
  void FailReads(Status fault) {
    std::lock_guard lock(mu_);
    read_fault_ = std::move(fault);
  }

  Result<std::string> Read(const std::string& uri) override {
    {
      std::lock_guard lock(mu_);
      if (!read_fault_.ok()) return read_fault_;
    }
    return inner_->Read(uri);
  }
  Status WriteNew(const std::string& uri, std::string_view bytes) override {
    return inner_->WriteNew(uri, bytes);
  }
  Result<int64_t> Size(const std::string& uri) override { return inner_->Size(uri); }
  Result<bool> Exists(const std::string& uri) override { return inner_->Exists(uri); }
  Status Delete(const std::string& uri) override { return inner_->Delete(uri); }
  Result<std::string> LocalPath(const std::string& uri) override {
    return inner_->LocalPath(uri);
  }
  Result<std::vector<FileInfo>> List(const std::string& prefix_uri) override {
    return inner_->List(prefix_uri);
  }

 private:
  std::unique_ptr<FileIO> inner_;
  std::mutex mu_;
  Status read_fault_;
};

}  // namespace floe::storage
