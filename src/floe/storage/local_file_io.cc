#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "floe/storage/file_io.h"

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

class LocalFileIO : public FileIO {
 public:
  explicit LocalFileIO(std::string root) : root_(std::move(root)) {}

  Result<std::string> Read(const std::string& uri) override {
    FLOE_ASSIGN_OR_RAISE(auto path, Checked(uri));
    int fd = ::open(path.c_str(), O_RDONLY);
    if (fd < 0) return ErrnoStatus("open", path);
    std::string out;
    char buf[1 << 16];
    while (true) {
      ssize_t n = ::read(fd, buf, sizeof(buf));
      if (n < 0) {
        if (errno == EINTR) continue;
        auto st = ErrnoStatus("read", path);
        ::close(fd);
        return st;
      }
      if (n == 0) break;
      out.append(buf, static_cast<size_t>(n));
    }
    ::close(fd);
    return out;
  }

  Status WriteNew(const std::string& uri, std::string_view bytes) override {
    FLOE_ASSIGN_OR_RAISE(auto path, Checked(uri));
    fs::path p(path);
    std::error_code ec;
    fs::create_directories(p.parent_path(), ec);
    if (ec) return Retriable("create directory " + p.parent_path().string() + ": " + ec.message());
    // Write to a unique temporary name, then link() it into place: link fails with EEXIST if
    // the target exists, which gives put-if-absent without ever exposing a partial file.
    std::string tmp = path + ".tmp-" + std::to_string(::getpid()) + "-" +
                      std::to_string(reinterpret_cast<uintptr_t>(&bytes));
    int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL, 0644);
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
    if (::link(tmp.c_str(), path.c_str()) != 0) {
      auto st = ErrnoStatus("publish", path);
      ::unlink(tmp.c_str());
      return st;
    }
    ::unlink(tmp.c_str());
    return FsyncDir(p.parent_path());
  }

  Result<int64_t> Size(const std::string& uri) override {
    FLOE_ASSIGN_OR_RAISE(auto path, Checked(uri));
    struct stat st;
    if (::stat(path.c_str(), &st) != 0) return ErrnoStatus("stat", path);
    return static_cast<int64_t>(st.st_size);
  }

  Result<bool> Exists(const std::string& uri) override {
    FLOE_ASSIGN_OR_RAISE(auto path, Checked(uri));
    struct stat st;
    if (::stat(path.c_str(), &st) == 0) return true;
    if (errno == ENOENT) return false;
    return ErrnoStatus("stat", path);
  }

  Status Delete(const std::string& uri) override {
    FLOE_ASSIGN_OR_RAISE(auto path, Checked(uri));
    if (::unlink(path.c_str()) != 0 && errno != ENOENT) return ErrnoStatus("delete", path);
    return Status::OK();
  }

  Result<std::string> LocalPath(const std::string& uri) override { return Checked(uri); }

  Result<std::vector<FileInfo>> List(const std::string& prefix_uri) override {
    FLOE_ASSIGN_OR_RAISE(auto path, Checked(prefix_uri));
    const size_t slash = path.rfind('/');
    const std::string dir = path.substr(0, slash + 1);
    const std::string name_prefix = path.substr(slash + 1);
    std::vector<FileInfo> out;
    std::error_code ec;
    fs::directory_iterator it(dir, ec);
    if (ec) {
      if (ec == std::errc::no_such_file_or_directory) return out;
      return Retriable("list " + dir + ": " + ec.message());
    }
    for (; it != fs::directory_iterator(); it.increment(ec)) {
      if (ec) return Retriable("list " + dir + ": " + ec.message());
      const std::string name = it->path().filename().string();
      if (name.rfind(name_prefix, 0) != 0 || IsTemporaryName(name)) continue;
      const std::string full = dir + name;
      struct stat st;
      if (::stat(full.c_str(), &st) != 0) {
        if (errno == ENOENT) continue;  // deleted while listing
        return ErrnoStatus("stat", full);
      }
      if (!S_ISREG(st.st_mode)) continue;
      out.push_back({PathToFileUri(full), static_cast<int64_t>(st.st_size),
                     static_cast<int64_t>(st.st_mtim.tv_sec) * 1000 +
                         st.st_mtim.tv_nsec / 1'000'000});
    }
    std::sort(out.begin(), out.end(),
              [](const FileInfo& a, const FileInfo& b) { return a.uri < b.uri; });
    return out;
  }

 private:
  // Every path stays under the warehouse root (ARCHITECTURE.md §3).
  Result<std::string> Checked(const std::string& uri) {
    FLOE_ASSIGN_OR_RAISE(auto path, FileUriToPath(uri));
    auto normal = fs::path(path).lexically_normal().string();
    if (normal != path || path.rfind(root_, 0) != 0 ||
        (path.size() > root_.size() && root_.back() != '/' && path[root_.size()] != '/')) {
      return Status::Invalid("location ", uri, " is outside the warehouse ", root_);
    }
    return path;
  }

  std::string root_;
};

}  // namespace

std::string PathToFileUri(const std::string& absolute_path) { return "file://" + absolute_path; }

Result<std::string> FileUriToPath(const std::string& uri) {
  static constexpr std::string_view kPrefix = "file://";
  if (uri.rfind(kPrefix, 0) == 0 && uri.size() > kPrefix.size() && uri[kPrefix.size()] == '/') {
    return uri.substr(kPrefix.size());
  }
  if (!uri.empty() && uri[0] == '/') return uri;
  return Status::Invalid("not a local file URI: ", uri);
}

std::unique_ptr<FileIO> MakeLocalFileIO(std::string root_uri) {
  auto path = FileUriToPath(root_uri);
  std::string root = path.ok() ? *path : root_uri;
  root = fs::path(root).lexically_normal().string();
  if (root.size() > 1 && root.back() == '/') root.pop_back();
  return std::make_unique<LocalFileIO>(root);
}

}  // namespace floe::storage
