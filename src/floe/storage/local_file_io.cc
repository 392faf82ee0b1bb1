// The local backend: arrow::fs::LocalFileSystem for reads, listing and deletes; POSIX
// calls where durability and atomicity need them (create-if-absent by link(), fsync of
// streams).
#include <arrow/filesystem/localfs.h>
#include <arrow/io/file.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <filesystem>

#include "floe/storage/arrow_file_io_internal.h"

namespace floe::storage {
namespace {

namespace fs = std::filesystem;

Status ErrnoStatus(const std::string& what, const std::string& path) {
  int e = errno;
  std::string msg = what + " " + path + ": " + std::strerror(e);
  if (e == ENOENT) return NotFound(msg);
  if (e == EEXIST) return Conflict(msg);
  // Disk full, permissions, I/O errors: systemic, retried by the caller with backoff.
  return Retriable(msg);
}

Status FsyncDir(const fs::path& dir) {
  int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY);
  if (fd < 0) return ErrnoStatus("open directory", dir.string());
  int rc = ::fsync(fd);
  ::close(fd);
  if (rc != 0) return ErrnoStatus("fsync directory", dir.string());
  return Status::OK();
}

Status MakeParent(const fs::path& p) {
  std::error_code ec;
  fs::create_directories(p.parent_path(), ec);
  if (ec)
    return Retriable("create directory " + p.parent_path().string() + ": " +
                     ec.message());
  return Status::OK();
}

// WriteNew's in-flight temporaries: "<name>.tmp-<pid>-<n>".
bool IsTemporaryName(const std::string& name) {
  size_t pos = name.rfind(".tmp-");
  if (pos == std::string::npos) return false;
  std::string_view rest(name);
  rest.remove_prefix(pos + 5);
  size_t dash = rest.find('-');
  if (dash == 0 || dash == std::string_view::npos || dash + 1 == rest.size()) {
    return false;
  }
  auto digits = [](std::string_view v) {
    return std::all_of(v.begin(), v.end(), [](char c) { return c >= '0' && c <= '9'; });
  };
  return digits(rest.substr(0, dash)) && digits(rest.substr(dash + 1));
}

// A data file's stream: Arrow's file stream over a descriptor opened with O_EXCL (a name
// is never written twice), made durable on Close() (fsync of the file and of its
// directory) so a commit never references a file a power loss could empty.
class DurableFileStream : public ::arrow::io::OutputStream {
 public:
  DurableFileStream(std::shared_ptr<::arrow::io::FileOutputStream> inner, fs::path path)
      : inner_(std::move(inner)), path_(std::move(path)) {}
  ~DurableFileStream() override {
    if (!inner_->closed()) (void)inner_->Close();
  }

  Status Close() override {
    if (inner_->closed()) return Status::OK();
    if (::fsync(inner_->file_descriptor()) != 0) {
      Status st = ErrnoStatus("fsync", path_.string());
      (void)inner_->Close();
      return st;
    }
    FLOE_RETURN_NOT_OK(internal::FromArrow(inner_->Close(), "close " + path_.string()));
    return FsyncDir(path_.parent_path());
  }
  bool closed() const override { return inner_->closed(); }
  Result<int64_t> Tell() const override { return inner_->Tell(); }
  Status Write(const void* data, int64_t nbytes) override {
    return internal::FromArrow(inner_->Write(data, nbytes), "write " + path_.string());
  }
  using ::arrow::io::OutputStream::Write;
  Status Flush() override {
    return internal::FromArrow(inner_->Flush(), "write " + path_.string());
  }

 private:
  std::shared_ptr<::arrow::io::FileOutputStream> inner_;
  fs::path path_;
};

// `bytes` in a new, fsync'd temporary file beside `path` (hidden from List); its name.
Result<std::string> WriteTemporary(const std::string& path, std::string_view bytes) {
  FLOE_RETURN_NOT_OK(MakeParent(fs::path(path)));
  static std::atomic<uint64_t> counter{0};
  std::string tmp = path + ".tmp-" + std::to_string(::getpid()) + "-" +
                    std::to_string(counter.fetch_add(1));
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0) return ErrnoStatus("create", tmp);
  size_t off = 0;
  while (off < bytes.size()) {
    ssize_t n = ::write(fd, bytes.data() + off, bytes.size() - off);
    if (n < 0) {
      if (errno == EINTR) continue;
      auto st = ErrnoStatus("write", tmp);
      ::close(fd);
      ::unlink(tmp.c_str());
      return st;
    }
    off += static_cast<size_t>(n);
  }
  if (::fsync(fd) != 0) {
    auto st = ErrnoStatus("fsync", tmp);
    ::close(fd);
    ::unlink(tmp.c_str());
    return st;
  }
  ::close(fd);
  return tmp;
}

class LocalFileIO : public internal::ArrowFileIO {
 public:
  explicit LocalFileIO(std::string root)
      : ArrowFileIO(std::make_shared<::arrow::fs::LocalFileSystem>()),
        root_(std::move(root)) {}

  Result<std::shared_ptr<::arrow::io::OutputStream>> OpenOutputStream(
      const std::string& uri) override {
    FLOE_ASSIGN_OR_RAISE(auto path, PathOf(uri));
    FLOE_RETURN_NOT_OK(MakeParent(path));
    int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (fd < 0) return ErrnoStatus("create", path);
    auto inner = ::arrow::io::FileOutputStream::Open(fd);
    if (!inner.ok()) {
      ::close(fd);
      return internal::FromArrow(inner.status(), "open " + path);
    }
    return std::make_shared<DurableFileStream>(std::move(*inner), fs::path(path));
  }

  Status WriteNew(const std::string& uri, std::string_view bytes) override {
    FLOE_ASSIGN_OR_RAISE(auto path, PathOf(uri));
    fs::path p(path);
    // A complete temporary file, then link() into place: link fails with EEXIST if the
    // target exists, which gives put-if-absent without ever exposing a partial file.
    FLOE_ASSIGN_OR_RAISE(std::string tmp, WriteTemporary(path, bytes));
    if (::link(tmp.c_str(), path.c_str()) != 0) {
      auto st = ErrnoStatus("publish", path);
      ::unlink(tmp.c_str());
      return st;
    }
    ::unlink(tmp.c_str());
    return FsyncDir(p.parent_path());
  }

  Status Overwrite(const std::string& uri, std::string_view bytes) override {
    FLOE_ASSIGN_OR_RAISE(auto path, PathOf(uri));
    FLOE_ASSIGN_OR_RAISE(std::string tmp, WriteTemporary(path, bytes));
    if (::rename(tmp.c_str(), path.c_str()) != 0) {
      auto st = ErrnoStatus("replace", path);
      ::unlink(tmp.c_str());
      return st;
    }
    return FsyncDir(fs::path(path).parent_path());
  }

 protected:
  // Every path stays under the warehouse root (ARCHITECTURE.md §3).
  Result<std::string> PathOf(const std::string& uri) const override {
    static constexpr std::string_view kPrefix = "file://";
    std::string path;
    if (uri.rfind(kPrefix, 0) == 0 && uri.size() > kPrefix.size() &&
        uri[kPrefix.size()] == '/') {
      path = uri.substr(kPrefix.size());
    } else {
      return Status::Invalid("location ", uri, " is not a file:// URI of the warehouse ",
                             root_);
    }
    auto normal = fs::path(path).lexically_normal().string();
    if (normal != path || path.rfind(root_, 0) != 0 ||
        (path.size() > root_.size() && root_.back() != '/' &&
         path[root_.size()] != '/')) {
      return Status::Invalid("location ", uri, " is outside the warehouse ", root_);
    }
    return path;
  }
  std::string UriOf(const std::string& path) const override {
    return PathToFileUri(path);
  }
  bool IsTemporary(const std::string& name) const override {
    return IsTemporaryName(name);
  }

 private:
  std::string root_;
};

}  // namespace

std::string PathToFileUri(const std::string& absolute_path) {
  return "file://" + absolute_path;
}

std::unique_ptr<FileIO> MakeLocalFileIO(std::string root_uri) {
  std::string root = root_uri.rfind("file://", 0) == 0 ? root_uri.substr(7) : root_uri;
  root = fs::path(root).lexically_normal().string();
  if (root.size() > 1 && root.back() == '/') root.pop_back();
  return std::make_unique<LocalFileIO>(root);
}

}  // namespace floe::storage
