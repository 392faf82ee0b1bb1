// The in-memory backend: arrow::fs's MockFileSystem behind memory:// URIs.
// Create-if-absent is a check and a write under one lock (atomic within the process,
// which is all a process memory can offer).
#include <arrow/filesystem/mockfs.h>
#include <arrow/io/interfaces.h>

#include <chrono>
#include <mutex>

#include "floe/storage/arrow_file_io_internal.h"

namespace floe::storage {
namespace {

constexpr std::string_view kScheme = "memory://";

class MemoryFileIO : public internal::ArrowFileIO {
 public:
  MemoryFileIO()
      : ArrowFileIO(std::make_shared<::arrow::fs::internal::MockFileSystem>(
            std::chrono::system_clock::now())) {}

  Status WriteNew(const std::string& uri, std::string_view bytes) override {
    FLOE_ASSIGN_OR_RAISE(auto path, PathOf(uri));
    std::lock_guard<std::mutex> lock(mu_);
    FLOE_ASSIGN_OR_RAISE(bool exists, Exists(uri));
    if (exists) return Conflict("cannot write " + uri + ": it exists already");
    FLOE_RETURN_NOT_OK(CreateParents(path, uri));
    auto out = fs().OpenOutputStream(path);
    if (!out.ok()) return internal::FromArrow(out.status(), "create " + uri);
    FLOE_RETURN_NOT_OK(
        internal::FromArrow((*out)->Write(bytes.data(), bytes.size()), "write " + uri));
    return internal::FromArrow((*out)->Close(), "close " + uri);
  }

  Status Overwrite(const std::string& uri, std::string_view bytes) override {
    FLOE_ASSIGN_OR_RAISE(auto path, PathOf(uri));
    std::lock_guard<std::mutex> lock(mu_);
    FLOE_RETURN_NOT_OK(CreateParents(path, uri));
    return ArrowFileIO::Overwrite(uri, bytes);
  }

  Result<std::shared_ptr<::arrow::io::OutputStream>> OpenOutputStream(
      const std::string& uri) override {
    FLOE_ASSIGN_OR_RAISE(auto path, PathOf(uri));
    std::lock_guard<std::mutex> lock(mu_);
    FLOE_RETURN_NOT_OK(CreateParents(path, uri));
    return ArrowFileIO::OpenOutputStream(uri);
  }

 protected:
  Result<std::string> PathOf(const std::string& uri) const override {
    if (uri.rfind(kScheme, 0) != 0 || uri.size() == kScheme.size() ||
        uri.find("/../") != std::string::npos || uri.find("/./") != std::string::npos) {
      return Status::Invalid("location ", uri, " is not a memory:// URI");
    }
    return uri.substr(kScheme.size());
  }
  std::string UriOf(const std::string& path) const override {
    return std::string(kScheme) + path;
  }

 private:
  // MockFileSystem needs a file's directories to exist, as a local disk would.
  Status CreateParents(const std::string& path, const std::string& uri) {
    const size_t slash = path.rfind('/');
    if (slash == std::string::npos) return Status::OK();
    return internal::FromArrow(fs().CreateDir(path.substr(0, slash), /*recursive=*/true),
                               "create the directory of " + uri);
  }

  std::mutex mu_;
};

}  // namespace

std::unique_ptr<FileIO> MakeMemoryFileIO() { return std::make_unique<MemoryFileIO>(); }

}  // namespace floe::storage
