// What a table's metadata references, and where: the rules purge and the commit path
// share so that purging one table never deletes a file another table references.
#pragma once

#include <cstddef>
#include <set>
#include <string>
#include <vector>

#include "floe/common/status.h"
#include "floe/iceberg/table_metadata.h"
#include "floe/iceberg/table_update.h"
#include "floe/storage/file_io.h"

namespace floe::catalog {

// Whether `uri` names something strictly inside directory `root`: `root` + "/" + a rest
// with no empty, "." or ".." segment (FileIO takes URIs literally: no percent-decoding).
bool LiesUnder(const std::string& uri, const std::string& root);

// Whether a failure to read a file another table references means "it references
// nothing readable" (missing or not a manifest: skipped) rather than an outage that
// hides what it references (then purge must not guess).
bool Unreadable(const Status& st);

// Every file `md` references: metadata log, manifest lists, manifests, data and delete
// files. With `root` set, only manifest lists and manifests under it are read (the rule
// of purge: never follow a reference out of the table's own location); each reference
// not followed counts in `*skipped`.
Status CollectReferences(storage::FileIO& io, const iceberg::TableMetadata& md,
                         const std::string& root, std::set<std::string>* out,
                         size_t* skipped);

// The files outside `root` (the committing table's location) that the snapshots added by
// `updates` newly reference: manifests their manifest list names and their parent's
// (in `base`, null for a new table) does not, and the live entries of those manifests.
// Another table's purge may delete such a file, so a commit checks they still exist
// under the purge lock (StoreCatalog). Missing or unreadable manifest lists and
// manifests contribute nothing; an outage is returned.
Result<std::vector<std::string>> ForeignReferencesAdded(
    storage::FileIO& io, const iceberg::TableMetadata* base,
    const std::vector<iceberg::TableUpdate>& updates, const std::string& root);

}  // namespace floe::catalog
