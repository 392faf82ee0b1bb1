#include "floe/storage/counting_file_io.h"

#include <arrow/buffer.h>
#include <arrow/io/interfaces.h>

#include <utility>

namespace floe::storage {
namespace {

void Tally(StorageCounters* c, StorageCounters::Op op, const Status& st) {
  c->requests[op].fetch_add(1, std::memory_order_relaxed);
  const ErrorKind kind = KindOf(st);
  if (!st.ok() && kind != ErrorKind::kNotFound && kind != ErrorKind::kConflict) {
    c->errors[op].fetch_add(1, std::memory_order_relaxed);
  }
}

// A stream's upload (S3: its parts, then the completion at Close) is one `upload`
// request, counted when it is closed, and one error when a write or the close fails: a
// data file whose upload fails is a storage error in the metrics, as it is.
class CountingOutputStream : public ::arrow::io::OutputStream {
 public:
  CountingOutputStream(std::shared_ptr<::arrow::io::OutputStream> inner,
                       StorageCounters* c)
      : inner_(std::move(inner)), c_(c) {}
  ~CountingOutputStream() override = default;

  ::arrow::Status Write(const void* data, int64_t nbytes) override {
    return Failed(inner_->Write(data, nbytes));
  }
  ::arrow::Status Write(const std::shared_ptr<::arrow::Buffer>& data) override {
    return Failed(inner_->Write(data));
  }
  ::arrow::Status Flush() override { return Failed(inner_->Flush()); }
  ::arrow::Result<int64_t> Tell() const override { return inner_->Tell(); }
  bool closed() const override { return inner_->closed(); }
  ::arrow::Status Close() override {
    if (inner_->closed()) return inner_->Close();
    ::arrow::Status st = inner_->Close();
    if (!counted_) {
      counted_ = true;
      Tally(c_, StorageCounters::kUpload, st);
    }
    return st;
  }
  ::arrow::Status Abort() override { return inner_->Abort(); }

 private:
  // The first failure of a write ends the upload: counted once, as a failed request.
  ::arrow::Status Failed(::arrow::Status st) {
    if (!st.ok() && !counted_) {
      counted_ = true;
      Tally(c_, StorageCounters::kUpload, st);
    }
    return st;
  }

  std::shared_ptr<::arrow::io::OutputStream> inner_;
  StorageCounters* c_;
  bool counted_ = false;
};

class CountingFileIO : public FileIO {
 public:
  CountingFileIO(std::unique_ptr<FileIO> inner, StorageCounters* counters)
      : inner_(std::move(inner)), c_(counters) {}

  Result<std::shared_ptr<::arrow::io::OutputStream>> OpenOutputStream(
      const std::string& uri) override {
    auto stream = Count(StorageCounters::kOpenOutput, inner_->OpenOutputStream(uri));
    if (!stream.ok()) return stream;
    return std::shared_ptr<::arrow::io::OutputStream>(
        std::make_shared<CountingOutputStream>(std::move(*stream), c_));
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
  Result<bool> DeleteIfPresent(const std::string& uri) override {
    return Count(StorageCounters::kDelete, inner_->DeleteIfPresent(uri));
  }
  Result<std::vector<FileInfo>> List(const std::string& prefix_uri) override {
    return Count(StorageCounters::kList, inner_->List(prefix_uri));
  }
  Result<std::vector<FileInfo>> ListTree(const std::string& dir_uri) override {
    return Count(StorageCounters::kList, inner_->ListTree(dir_uri));
  }
  int64_t MaxStreamBufferBytes() const override { return inner_->MaxStreamBufferBytes(); }

 private:
  Status Count(StorageCounters::Op op, Status st) {
    Tally(c_, op, st);
    return st;
  }
  template <typename T>
  Result<T> Count(StorageCounters::Op op, Result<T> r) {
    Tally(c_, op, r.status());
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
    case kUpload:
      return "upload";
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
