// FileIO: the only way Floe touches table storage: data files, manifests, metadata JSON
// and the Delta log. Locations are absolute URIs (file:///... for the local backend,
// memory://... for the in-memory one, s3://bucket/... for S3). Backends sit over
// arrow::fs (storage/arrow_file_io_internal.h), so one interface serves every store.
//
// Threading: implementations are thread-safe; a stream is used by one thread.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "floe/common/status.h"

namespace arrow::io {
class OutputStream;
class RandomAccessFile;
}  // namespace arrow::io

namespace floe::storage {

// One listed object.
struct FileInfo {
  std::string uri;
  int64_t size = 0;
  int64_t mtime_ms = 0;    // last modification, milliseconds since the epoch
  bool temporary = false;  // a WriteNew temporary (ListTree only)
};

class FileIO {
 public:
  virtual ~FileIO() = default;

  // --- streams (data files) ---
  // A new object written as a stream (Parquet data files). The object must not exist yet
  // (names are unique per write attempt); it is complete and durable once Close()
  // returned OK, and only then may a commit reference it. An object whose stream was not
  // closed is never referenced (an orphan at worst).
  virtual Result<std::shared_ptr<::arrow::io::OutputStream>> OpenOutputStream(
      const std::string& uri) = 0;
  // Random access for readers (Parquet footers, Avro manifests). kNotFound if absent.
  virtual Result<std::shared_ptr<::arrow::io::RandomAccessFile>> OpenInputFile(
      const std::string& uri) = 0;

  // --- whole objects (metadata, manifests, the Delta log) ---
  // Create-if-absent: writes the object only if none exists at `uri`, else kConflict; the
  // object is never seen partial. Metadata JSON and Delta log entries rely on it: two
  // writers racing for one name, exactly one wins. The guarantee per backend:
  //   local:  temporary file, fsync, link() into place (atomic, fails with EEXIST), fsync
  //           of the directory: atomic and durable across processes on one filesystem.
  //   memory: checked and written under one lock: atomic within the process.
  //   s3:     a conditional PUT (If-None-Match: *): atomic on the store, for every
  //           writer; SupportsCreateIfAbsent checks that the store honours it.
  virtual Status WriteNew(const std::string& uri, std::string_view bytes) = 0;
  // Replaces the object at `uri` (or creates it) with `bytes`; readers see the old or
  // the new object, never a partial one. For hints that any writer may refresh (the
  // Delta log's _last_checkpoint), never for what two writers race to create.
  //   local: temporary file, fsync, rename() into place, fsync of the directory.
  //   s3:    one plain PUT.
  virtual Status Overwrite(const std::string& uri, std::string_view bytes) = 0;
  // Whole-object read. kNotFound if absent.
  virtual Result<std::string> Read(const std::string& uri);

  // --- metadata operations ---
  // Exact size in bytes. kNotFound if absent.
  virtual Result<int64_t> Size(const std::string& uri) = 0;
  virtual Result<bool> Exists(const std::string& uri) = 0;
  // Deleting an absent object succeeds.
  virtual Status Delete(const std::string& uri) = 0;
  // Delete that says whether there was an object to delete (false: absent, or deleted by
  // someone else meanwhile), for reports that count deletions. By default Exists, then
  // Delete.
  virtual Result<bool> DeleteIfPresent(const std::string& uri);
  // Objects whose URI starts with `prefix_uri`, one level deep (like an S3 listing with
  // delimiter '/'): ".../t/_delta_log/" lists that directory; ".../t/x/0" the names in x/
  // starting with "0". Sorted by URI; empty when nothing matches or the directory does
  // not exist; objects still being written by WriteNew are not listed.
  virtual Result<std::vector<FileInfo>> List(const std::string& prefix_uri) = 0;
  // Every object under the directory `dir_uri` (".../t/"), at any depth, sorted by URI;
  // empty when the directory does not exist. WriteNew temporaries are listed: one that
  // is old was left by a crash, and orphan cleanup, which walks a table's location with
  // this, deletes it like any unreferenced file once past its minimum age.
  virtual Result<std::vector<FileInfo>> ListTree(const std::string& dir_uri) = 0;

  // Bytes an open output stream may hold in memory before they reach the store (S3: one
  // multipart part); writers count them in memory.budget.bytes. 0: written through.
  virtual int64_t MaxStreamBufferBytes() const { return 0; }
};

// file:// URIs under `root_uri` (the warehouse); refuses any location outside it
// (lexically normalized, no `..` escapes). Errors: ENOENT → kNotFound, EEXIST →
// kConflict, everything else (disk full, permissions, I/O) → kRetriable.
std::unique_ptr<FileIO> MakeLocalFileIO(std::string root_uri);

// memory:// URIs, held in process memory (arrow::fs's MockFileSystem): unit tests and
// anything that needs a FileIO without a disk. Same error kinds as the local backend.
std::unique_ptr<FileIO> MakeMemoryFileIO();

// "/a/b" -> "file:///a/b": the warehouse of a config that names a directory.
std::string PathToFileUri(const std::string& absolute_path);

// Where and how the S3 backend reaches its store.
struct S3Settings {
  std::string endpoint;          // "host:port" of an S3-compatible store; "" for AWS
  std::string scheme = "https";  // "http" for a store on loopback
  std::string region = "us-east-1";
  bool path_style = false;  // bucket in the path (host/bucket/key), not the host name
  // Static credentials; all empty: the default AWS chain (environment, ~/.aws profiles,
  // web identity, ECS and EC2 roles), refreshed before temporary ones expire.
  std::string access_key;
  std::string secret_key;
  std::string session_token;
  double connect_timeout_s = 10;
  double request_timeout_s =
      60;  // Floe's own requests (WriteNew); Arrow ignores it on Linux
  // Attempts of one request on faults a retry may fix (5xx, throttling, resets,
  // timeouts), with full-jitter exponential backoff from 100 ms to 20 s.
  int64_t retry_max_attempts = 6;
};

// s3:// URIs under `root_uri` ("s3://bucket/prefix"), over Arrow's S3FileSystem; the
// create-if-absent of WriteNew is a conditional PUT (If-None-Match: *), which Arrow
// cannot send, signed with curl's AWS SigV4. Errors: 404 → kNotFound, 412 → kConflict,
// 5xx/throttling/timeouts → kRetriable, anything else (403, NoSuchBucket, wrong region)
// → an error naming the bucket, the key and the S3 error code.
Result<std::unique_ptr<FileIO>> MakeS3FileIO(std::string root_uri, S3Settings settings);

// Whether `io` keeps create-if-absent under `dir_uri`: writes a probe object, tries to
// write it again (which must be refused) and deletes it. An error when the first write
// fails (credentials, a missing bucket: the store's message, naming bucket and key).
Result<bool> SupportsCreateIfAbsent(FileIO* io, const std::string& dir_uri);

// Shuts Arrow's S3 client down if an S3 backend was made: call once before exit, after
// every S3 FileIO is gone (Arrow refuses it from an atexit handler).
void FinalizeS3();

}  // namespace floe::storage
