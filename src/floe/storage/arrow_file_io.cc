#include <arrow/io/interfaces.h>
#include <arrow/util/io_util.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "floe/storage/arrow_file_io_internal.h"

namespace floe::storage {

Result<bool> FileIO::DeleteIfPresent(const std::string& uri) {
  FLOE_ASSIGN_OR_RAISE(bool present, Exists(uri));
  if (!present) return false;
  FLOE_RETURN_NOT_OK(Delete(uri));
  return true;
}

Result<std::string> FileIO::Read(const std::string& uri) {
  FLOE_ASSIGN_OR_RAISE(auto file, OpenInputFile(uri));
  auto size = file->GetSize();
  if (!size.ok()) return internal::FromArrow(size.status(), "size of " + uri);
  std::string out(static_cast<size_t>(*size), '\0');
  int64_t done = 0;
  while (done < *size) {
    auto n = file->ReadAt(done, *size - done, out.data() + done);
    if (!n.ok()) return internal::FromArrow(n.status(), "read " + uri);
    if (*n == 0) return Retriable("read " + uri + ": the object ended early");
    done += *n;
  }
  (void)file->Close();
  return out;
}

namespace internal {

Status FromArrow(const Status& st, const std::string& what) {
  // A status that already carries Floe's kind (and context) passes through; Arrow's own
  // get the operation, the path and the errno, and a kind.
  if (st.ok()) return st;
  if (st.detail() && std::string(st.detail()->type_id()) == "floe") return st;
  std::string msg = what + ": " + st.message();
  if (st.IsIOError()) {
    const int e = ::arrow::internal::ErrnoFromStatus(st);
    // Arrow keeps the errno in the status detail, which message() leaves out.
    if (e != 0) msg += " (errno " + std::to_string(e) + ": " + std::strerror(e) + ")";
    if (e == ENOENT) return NotFound(msg);
    if (e == EEXIST) return Conflict(msg);
    return Retriable(msg);
  }
  return st.WithMessage(msg);
}

Result<std::shared_ptr<::arrow::io::OutputStream>> ArrowFileIO::OpenOutputStream(
    const std::string& uri) {
  FLOE_ASSIGN_OR_RAISE(auto path, PathOf(uri));
  auto info = fs_->GetFileInfo(path);
  if (!info.ok()) return Classify(info.status(), "stat " + uri);
  if (info->type() != ::arrow::fs::FileType::NotFound) {
    return Conflict("cannot write " + uri + ": it exists already");
  }
  auto out = fs_->OpenOutputStream(path);
  if (!out.ok()) return Classify(out.status(), "create " + uri);
  return std::move(*out);
}

Status ArrowFileIO::Overwrite(const std::string& uri, std::string_view bytes) {
  FLOE_ASSIGN_OR_RAISE(auto path, PathOf(uri));
  auto out = fs_->OpenOutputStream(path);
  if (!out.ok()) return Classify(out.status(), "create " + uri);
  Status st = (*out)->Write(bytes.data(), static_cast<int64_t>(bytes.size()));
  if (st.ok()) st = (*out)->Close();
  if (!st.ok()) {
    (void)(*out)->Abort();
    return Classify(st, "write " + uri);
  }
  return Status::OK();
}

Result<std::shared_ptr<::arrow::io::RandomAccessFile>> ArrowFileIO::OpenInputFile(
    const std::string& uri) {
  FLOE_ASSIGN_OR_RAISE(auto path, PathOf(uri));
  auto info = fs_->GetFileInfo(path);
  if (!info.ok()) return Classify(info.status(), "stat " + uri);
  if (info->type() != ::arrow::fs::FileType::File) return NotFound("no object at " + uri);
  auto in = fs_->OpenInputFile(*info);
  if (!in.ok()) return Classify(in.status(), "open " + uri);
  return std::move(*in);
}

Result<int64_t> ArrowFileIO::Size(const std::string& uri) {
  FLOE_ASSIGN_OR_RAISE(auto path, PathOf(uri));
  auto info = fs_->GetFileInfo(path);
  if (!info.ok()) return Classify(info.status(), "stat " + uri);
  if (info->type() != ::arrow::fs::FileType::File) return NotFound("no object at " + uri);
  return info->size();
}

Result<bool> ArrowFileIO::Exists(const std::string& uri) {
  FLOE_ASSIGN_OR_RAISE(auto path, PathOf(uri));
  auto info = fs_->GetFileInfo(path);
  if (!info.ok()) return Classify(info.status(), "stat " + uri);
  return info->type() == ::arrow::fs::FileType::File;
}

Status ArrowFileIO::Delete(const std::string& uri) {
  return DeleteIfPresent(uri).status();
}

Result<bool> ArrowFileIO::DeleteIfPresent(const std::string& uri) {
  FLOE_ASSIGN_OR_RAISE(auto path, PathOf(uri));
  auto info = fs_->GetFileInfo(path);
  if (!info.ok()) return Classify(info.status(), "stat " + uri);
  if (info->type() == ::arrow::fs::FileType::NotFound) return false;
  Status st = fs_->DeleteFile(path);
  if (st.ok()) return true;
  st = Classify(st, "delete " + uri);
  if (KindOf(st) == ErrorKind::kNotFound) return false;  // deleted meanwhile
  return st;
}

Result<std::vector<FileInfo>> ArrowFileIO::List(const std::string& prefix_uri) {
  FLOE_ASSIGN_OR_RAISE(auto prefix, PathOf(prefix_uri));
  const size_t slash = prefix.rfind('/');
  const std::string dir = slash == std::string::npos ? "" : prefix.substr(0, slash);
  const std::string name_prefix =
      prefix.substr(slash == std::string::npos ? 0 : slash + 1);
  ::arrow::fs::FileSelector selector;
  selector.base_dir = dir;
  selector.allow_not_found = true;
  selector.recursive = false;
  return ListSelected(selector, name_prefix, /*with_temporaries=*/false,
                      "list " + prefix_uri);
}

Result<std::vector<FileInfo>> ArrowFileIO::ListTree(const std::string& dir_uri) {
  FLOE_ASSIGN_OR_RAISE(auto dir, PathOf(dir_uri));
  while (!dir.empty() && dir.back() == '/') dir.pop_back();
  ::arrow::fs::FileSelector selector;
  selector.base_dir = dir;
  selector.allow_not_found = true;
  selector.recursive = true;
  return ListSelected(selector, "", /*with_temporaries=*/true,
                      "list the tree " + dir_uri);
}

Result<std::vector<FileInfo>> ArrowFileIO::ListSelected(
    const ::arrow::fs::FileSelector& selector, const std::string& name_prefix,
    bool with_temporaries, const std::string& what) {
  auto listed = fs_->GetFileInfo(selector);
  if (!listed.ok()) return Classify(listed.status(), what);
  std::vector<FileInfo> out;
  for (const auto& info : *listed) {
    if (info.type() != ::arrow::fs::FileType::File) continue;
    const std::string name = info.base_name();
    if (name.rfind(name_prefix, 0) != 0) continue;
    const bool temporary = IsTemporary(name);
    if (temporary && !with_temporaries) continue;
    const auto mtime = std::chrono::duration_cast<std::chrono::milliseconds>(
        info.mtime().time_since_epoch());
    out.push_back({UriOf(info.path()), info.size(), static_cast<int64_t>(mtime.count()),
                   temporary});
  }
  std::sort(out.begin(), out.end(),
            [](const FileInfo& a, const FileInfo& b) { return a.uri < b.uri; });
  return out;
}

}  // namespace internal
}  // namespace floe::storage
