// FileIO: the only way Floe touches table storage (data files, metadata, manifests).
// Locations are absolute URIs (file:///... today, s3://... later). Implementations are
// thread-safe.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "floe/common/status.h"

namespace floe::storage {

class FileIO {
 public:
  virtual ~FileIO() = default;

  // Whole-object read. kNotFound if absent.
  virtual Result<std::string> Read(const std::string& uri) = 0;
  // Writes the object durably (fsync'd file and directory locally). Fails with kConflict if
  // the object already exists: metadata and log files are never overwritten.
  virtual Status WriteNew(const std::string& uri, std::string_view bytes) = 0;
  // Exact size in bytes. kNotFound if absent.
  virtual Result<int64_t> Size(const std::string& uri) = 0;
  virtual Result<bool> Exists(const std::string& uri) = 0;
  // Deleting an absent object succeeds.
  virtual Status Delete(const std::string& uri) = 0;
  // Local filesystem path for a file:// URI (writers that stream, e.g. Parquet); error for
  // other schemes.
  virtual Result<std::string> LocalPath(const std::string& uri) = 0;
};

// FileIO for file:// URIs rooted anywhere; refuses URIs outside `root_uri` (the warehouse).
std::unique_ptr<FileIO> MakeLocalFileIO(std::string root_uri);

// "/a/b" -> "file:///a/b"; and back. Errors on other schemes.
std::string PathToFileUri(const std::string& absolute_path);
Result<std::string> FileUriToPath(const std::string& uri);

}  // namespace floe::storage
