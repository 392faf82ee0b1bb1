#include "floe/cli/maintain_command.h"

#include <fmt/format.h>

#include <cstdio>
#include <iostream>

#include "floe/cli/catalog_stack.h"
#include "floe/common/util.h"
#include "floe/maintenance/maintain.h"

namespace floe::cli {

int MaintainCommand(const config::Config& config,
                    const std::optional<catalog::TableIdent>& table, bool dry_run) {
  auto stack = OpenCatalogStack(config, {.serve_rest = false});
  if (!stack.ok()) {
    std::fprintf(stderr, "floe: %s\n", stack.status().message().c_str());
    return KindOf(stack.status()) == ErrorKind::kInvalidConfig ? 2 : 1;
  }
  std::vector<catalog::TableIdent> tables;
  if (table) {
    tables.push_back(*table);
  } else {
    auto all = maintenance::AllTables(*stack->catalog);
    if (!all.ok()) {
      std::fprintf(stderr, "floe: listing the catalog's tables: %s\n",
                   all.status().message().c_str());
      return 1;
    }
    tables = std::move(*all);
  }
  int failed = 0;
  for (const auto& ident : tables) {
    auto r = maintenance::MaintainTable(*stack->catalog, *stack->io, ident,
                                        config.maintenance, NowMs(), dry_run);
    if (!r.ok()) {
      std::fprintf(stderr, "floe: table %s: %s\n", ident.ToString().c_str(),
                   r.status().message().c_str());
      ++failed;
      continue;
    }
    if (!r->floe_table) {
      if (table)
        std::cout << "table " << ident.ToString()
                  << ": not written by Floe, left alone\n";
      continue;
    }
    const auto& rr = r->row_retention;
    if (!r->row_retention_error.empty()) {
      std::fprintf(stderr, "floe: table %s: row retention failed: %s\n",
                   ident.ToString().c_str(), r->row_retention_error.c_str());
      ++failed;
    } else if (rr.retention_ms > 0) {
      std::cout << fmt::format(
          "table {}: row retention {} ms: {}\n", ident.ToString(), rr.retention_ms,
          !rr.skipped.empty()
              ? rr.skipped
              : fmt::format("{} {} files whole and {} {} straddling it ({} rows){}",
                            dry_run ? "would remove" : "removed", rr.dropped_files,
                            dry_run ? "would rewrite" : "rewrote", rr.rewritten_files,
                            rr.rows_dropped,
                            dry_run ? "" : fmt::format(", snapshot {}", rr.snapshot_id)));
    }
    const auto& c = r->compaction;
    if (!r->compaction_error.empty()) {
      std::fprintf(stderr, "floe: table %s: compaction failed: %s\n",
                   ident.ToString().c_str(), r->compaction_error.c_str());
      ++failed;
    } else if (c.skipped.empty()) {
      std::cout << fmt::format(
          "table {}: compaction {} {} small files of {} ({} bytes){}\n", ident.ToString(),
          dry_run ? "would rewrite" : "rewrote", c.candidates, c.live_files, c.bytes_in,
          dry_run
              ? ""
              : fmt::format(
                    " into {} files ({} bytes, {} rows; {} inputs copied by row group) "
                    "in "
                    "{} CPU-ms, snapshot {}{}",
                    c.written, c.bytes_out, c.rows, c.copied, c.cpu_ms, c.snapshot_id,
                    c.delta_error.empty() ? ""
                                          : "; Delta not updated yet: " + c.delta_error));
    } else {
      std::cout << "table " << ident.ToString() << ": no compaction (" << c.skipped
                << ")\n";
    }
    const auto& e = r->expiry;
    std::cout << fmt::format(
        "table {}: {} {} snapshots{}, {} files only they reached{}; {} metadata files "
        "past "
        "the metadata log{}\n",
        ident.ToString(), dry_run ? "would expire" : "expired", e.expired,
        e.postponed > 0 ? fmt::format(" ({} more next run)", e.postponed) : "", e.files,
        dry_run ? " would be deleted" : fmt::format(", {} deleted", e.deleted),
        e.metadata_files, dry_run ? " would be deleted" : " deleted");
    const auto& m = r->manifests;
    if (!r->manifests_error.empty()) {
      std::fprintf(stderr, "floe: table %s: manifest rewrite failed: %s\n",
                   ident.ToString().c_str(), r->manifests_error.c_str());
      ++failed;
    } else if (m.snapshot_id != 0) {
      std::cout << fmt::format(
          "table {}: manifests: {} without live files dropped, {} small ones merged into "
          "{}, {} kept; snapshot {}\n",
          ident.ToString(), m.dropped, m.replaced, m.created, m.kept, m.snapshot_id);
    } else {
      std::cout << "table " << ident.ToString() << ": no manifest rewrite (" << m.skipped
                << ")\n";
    }
    const auto& o = r->orphans;
    std::cout << fmt::format(
        "table {}: {} files, {} referenced ({} snapshots, {} manifests, {} data files, "
        "{} "
        "Delta paths); {} unreferenced but younger than {} ms, kept; {} orphans{}\n",
        ident.ToString(), o.listed, o.referenced, r->refs.snapshots, r->refs.manifests,
        r->refs.data_files, r->refs.delta_paths, o.too_young,
        config.maintenance.orphan_min_age_ms, o.orphans,
        dry_run ? " would be deleted"
                : fmt::format(", {} deleted ({} bytes)", o.deleted, o.deleted_bytes));
    if (dry_run) {
      for (const auto& f : o.candidates) std::cout << "  would delete " << f.uri << "\n";
    }
  }
  return failed == 0 ? 0 : 1;
}

}  // namespace floe::cli
