// One maintenance pass over one table: row retention, compaction, snapshot expiry,
// manifest rewrite, orphan cleanup. `floe
// maintain` runs it over every table Floe writes; the same code will run inside `floe
// run`.
//
// Threading: a function of its inputs; the Catalog and FileIO are thread-safe.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>

#include "floe/catalog/catalog.h"
#include "floe/common/status.h"
#include "floe/config/config.h"
#include "floe/maintenance/compaction.h"
#include "floe/maintenance/expiry.h"
#include "floe/maintenance/manifest_rewrite.h"
#include "floe/maintenance/orphans.h"
#include "floe/maintenance/references.h"
#include "floe/maintenance/row_retention.h"

namespace floe::maintenance {

struct TableReport {
  catalog::TableIdent ident;
  bool floe_table = false;  // false: not written by Floe, left alone
  RowRetentionReport row_retention;
  std::string row_retention_error;  // it failed (the rest still ran)
  CompactionReport compaction;   // skipped "disabled" when maintenance.compaction.enabled
  std::string compaction_error;  // compaction failed (expiry and orphan cleanup ran)
  ExpiryReport expiry;
  ManifestRewriteReport manifests;
  std::string manifests_error;  // the manifest rewrite failed (orphan cleanup ran)
  References refs;              // counts only (the set is dropped)
  OrphanReport orphans;
};

// Whether Floe writes `metadata`'s table (it carries floe.formats): maintenance touches
// no other table.
bool IsFloeTable(const iceberg::TableMetadata& metadata);

// Drops the rows past the table's row retention (ApplyRowRetention), compacts the table
// (CompactTable) when enabled, expires its snapshots and deletes what
// only they referenced (ExpireTable), drops manifests without live files and merges small
// ones (RewriteTableManifests), then lists its location, reads its references from
// the catalog's current metadata and deletes its orphans (DeleteOrphans) per `settings`.
// A failed compaction is reported in compaction_error and the rest still runs; a catalog
// that cannot take commits fails the table before anything. Errors: the catalog's and the
// store's, and those of CollectReferences (nothing deleted then).
Result<TableReport> MaintainTable(catalog::Catalog& catalog, storage::FileIO& io,
                                  const catalog::TableIdent& ident,
                                  const config::MaintenanceSettings& settings,
                                  int64_t now_ms, bool dry_run,
                                  const std::atomic<bool>* cancel = nullptr);

// Every table of the catalog, namespaces at every depth, sorted.
Result<std::vector<catalog::TableIdent>> AllTables(catalog::Catalog& catalog);

}  // namespace floe::maintenance
