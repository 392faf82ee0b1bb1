#include "floe/storage/counting_file_io.h"

#include <utility>

namespace floe::storage {
namespace {

class CountingFileIO : public FileIO {
 public:
  CountingFileIO(std::unique_ptr<FileIO> inner, StorageCounters* counters)
      : inner_(std::move(inner)), c_(counters) {}

  Result<std::shared_ptr<::arrow::io::OutputStream>> OpenOutputStream(
      const std::string& uri) override {
    return Count(StorageCounters::kOpenOutput, inner_->OpenOutputStream(uri));
  }
  Result<std::shared_ptr<::arrow::io::RandomAccessFile>> OpenInputFile(
      const std::string& uri) override {
    return Count(StorageCounters::kOpenInput, inner_->OpenInputFile(uri));
  }
  Status WriteNew(const std::string& uri, std::string_view bytes) override {
    return Count(StorageCounters::kWriteNew, inner_->WriteNew(uri, bytes));
  }
  Status Overwrite(const std::string& uri, std::string_view bytes) override {
    return Count(StorageCounters::kOverwrite, inner_->Overwrite(uri, bytes));
  }
  Result<std::string> Read(const std::string& uri) override {
    return Count(StorageCounters::kRead, inner_->Read(uri));
  }
  Result<int64_t> Size(const std::string& uri) override {
    return Count(StorageCounters::kSize, inner_->Size(uri));
  }
  Result<bool> Exists(const std::string& uri) override {
    return Count(StorageCounters::kExists, inner_->Exists(uri));
  }
  Status Delete(const std::string& uri) override {
    return Count(StorageCounters::kDelete, inner_->Delete(uri));
  }
  Result<std::vector<FileInfo>> List(const std::string& prefix_uri) override {
    return Count(StorageCounters::kList, inner_->List(prefix_uri));
  }
  Result<std::vector<FileInfo>> ListTree(const std::string& dir_uri) override {
    return Count(StorageCounters::kList, inner_->ListTree(dir_uri));
  }
  int64_t MaxStreamBufferBytes() const override { return inner_->MaxStreamBufferBytes(); }

 private:
  void Tally(StorageCounters::Op op, const Status& st) {
    c_->requests[op].fetch_add(1, std::memory_order_relaxed);
    const ErrorKind kind = KindOf(st);
    if (!st.ok() && kind != ErrorKind::kNotFound && kind != ErrorKind::kConflict) {
      c_->errors[op].fetch_add(1, std::memory_order_relaxed);
    }
  }
  Status Count(StorageCounters::Op op, Status st) {
    Tally(op, st);
    return st;
  }
  template <typename T>
  Result<T> Count(StorageCounters::Op op, Result<T> r) {
    Tally(op, r.status());
    return r;
  }

  std::unique_ptr<FileIO> inner_;
  StorageCounters* c_;
};

}  // namespace

const char* StorageCounters::Name(Op op) {
  switch (op) {
    case kOpenOutput:
      return "open_output";
    case kOpenInput:
      return "open_input";
    case kWriteNew:
      return "write_new";
    case kOverwrite:
      return "overwrite";
    case kRead:
      return "read";
    case kSize:
      return "size";
    case kExists:
      return "exists";
    case kDelete:
      return "delete";
    case kList:
      return "list";
    case kOpCount:
      break;
  }
  return "unknown";
}

std::unique_ptr<FileIO> CountRequests(std::unique_ptr<FileIO> inner,
                                      StorageCounters* counters) {
  return std::make_unique<CountingFileIO>(std::move(inner), counters);
}

}  // namespace floe::storage
