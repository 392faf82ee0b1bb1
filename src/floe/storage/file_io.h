// FileIO: the only way Floe touches table storage (data files, metadata, manifests).
// Locations are absolute URIs (file:///... today, s3://... later). Implementations are
// thread-safe.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "floe/common/status.h"

namespace floe::storage {

// One listed object.
struct FileInfo {
  std::string uri;
  int64_t size = 0;
  int64_t mtime_ms = 0;  // last modification, milliseconds since the epoch
};

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
  // Objects whose URI starts with `prefix_uri`, one level deep (like an S3 listing with
  // delimiter '/'): "file:///t/_delta_log/" lists that directory; "file:///t/x/0" the
  // names in x/ starting with "0". Sorted by URI; empty when nothing matches or the
  // directory does not exist; objects still being written are not listed. The default
  // (for implementations and fakes that need no listing) fails with NotImplemented.
  virtual Result<std::vector<FileInfo>> List(const std::string& prefix_uri) {
    return Status::NotImplemented("listing ", prefix_uri,
                                  " is not supported by this FileIO");
  }
};

// FileIO for file:// URIs rooted anywhere; refuses URIs outside `root_uri` (the warehouse).
std::unique_ptr<FileIO> MakeLocalFileIO(std::string root_uri);

// "/a/b" -> "file:///a/b"; and back. Errors on other schemes.
std::string PathToFileUri(const std::string& absolute_path);
Result<std::string> FileUriToPath(const std::string& uri);

}  // namespace floe::storage
