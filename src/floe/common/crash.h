// Test-only crash hook: FLOE_CRASH_AT=<point> makes the process exit immediately (no
// flush, no destructors) when execution reaches that named point, to test recovery at
// every step of a commit. Points: after-parquet-write, after-manifest-write,
// after-metadata-write, before-pointer-swap, after-pointer-swap, before-delta-commit;
// through an external REST catalog (catalog.type rest): before-catalog-commit (the
// request not sent) and after-catalog-commit (the catalog answered, Floe saw nothing);
// for a schema change: before-schema-commit (the rows before it are committed, the new
// schema is not) and after-schema-commit (the Iceberg schema is committed, the Delta
// metaData not yet); for a topic under on.invalid.record: dlq: after-dead-letter-commit
// (the batch's dead letters are committed, its good records not yet); for `floe
// maintain`'s compaction: after-compaction-write (the rewritten files are written),
// before-compaction-commit (the replace snapshot's manifests too) and
// after-compaction-commit (Iceberg has it, the Delta log not yet). Unset in
// production: the check is one branch.
#pragma once

namespace floe {

void CrashPoint(const char* name);

}  // namespace floe
