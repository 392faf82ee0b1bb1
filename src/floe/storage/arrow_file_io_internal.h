// ArrowFileIO: FileIO over an arrow::fs::FileSystem (the shape of iceberg-cpp's
// ArrowFileSystemFileIO). A backend maps its URIs to the filesystem's paths and supplies
// the operations arrow::fs cannot express portably: create-if-absent, and what "durable"
// means for a stream.
#pragma once

#include <arrow/filesystem/filesystem.h>

#include <memory>
#include <string>

#include "floe/storage/file_io.h"

namespace floe::storage::internal {

// An arrow::fs / arrow::io status as a Floe error of the right kind, naming what failed:
// ENOENT → kNotFound, EEXIST → kConflict, any other I/O error → kRetriable (systemic:
// retried with backoff); a status that already carries a Floe kind keeps it.
Status FromArrow(const Status& st, const std::string& what);

class ArrowFileIO : public FileIO {
 public:
  Result<std::shared_ptr<::arrow::io::OutputStream>> OpenOutputStream(
      const std::string& uri) override;
  Result<std::shared_ptr<::arrow::io::RandomAccessFile>> OpenInputFile(
      const std::string& uri) override;
  // One write of a whole object over arrow::fs (S3: a plain PUT); the local backend
  // overrides it with a rename, the memory one takes its lock around it.
  Status Overwrite(const std::string& uri, std::string_view bytes) override;
  Result<int64_t> Size(const std::string& uri) override;
  Result<bool> Exists(const std::string& uri) override;
  Status Delete(const std::string& uri) override;
  Result<bool> DeleteIfPresent(const std::string& uri) override;
  Result<std::vector<FileInfo>> List(const std::string& prefix_uri) override;
  Result<std::vector<FileInfo>> ListTree(const std::string& dir_uri) override;

 protected:
  explicit ArrowFileIO(std::shared_ptr<::arrow::fs::FileSystem> fs)
      : fs_(std::move(fs)) {}
  // The filesystem path of a URI this backend serves; an error for any other URI.
  virtual Result<std::string> PathOf(const std::string& uri) const = 0;
  // The URI of a path (inverse of PathOf).
  virtual std::string UriOf(const std::string& path) const = 0;
  // An arrow::fs status as a Floe error (FromArrow); a backend may refine the kind.
  virtual Status Classify(const Status& st, const std::string& what) const {
    return FromArrow(st, what);
  }
  // Whether a listed name is a create-if-absent temporary, hidden from List.
  virtual bool IsTemporary(const std::string& /*name*/) const { return false; }

  ::arrow::fs::FileSystem& fs() const { return *fs_; }

 private:
  // `with_temporaries`: IsTemporary names too.
  Result<std::vector<FileInfo>> ListSelected(const ::arrow::fs::FileSelector& selector,
                                             const std::string& name_prefix,
                                             bool with_temporaries,
                                             const std::string& what);

  std::shared_ptr<::arrow::fs::FileSystem> fs_;
};

}  // namespace floe::storage::internal
