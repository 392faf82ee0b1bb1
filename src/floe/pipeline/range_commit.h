// RangeCommit: the commit side of the loop. The ranges a table's translators took
// (translator.h) become one snapshot of the table through table::Committer, after the
// topic's dead letters; then the Delta log follows, the commit metrics are recorded and
// the consumer group's offsets are set for monitoring tools. It never seeks Kafka or
// reloads a table: a failed commit is returned for the loop to act on (TableFaults, or
// a fence lost).
//
// Threading: used by the pipeline thread only.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "floe/catalog/table_ident.h"
#include "floe/common/status.h"
#include "floe/pipeline/pipeline.h"
#include "floe/pipeline/translator.h"
#include "floe/schema/evolution.h"
#include "floe/table/committer.h"

namespace floe::kafka {
class RecordSource;
}
namespace floe::table {
class DeltaMirror;
}

namespace floe::pipeline {

struct TopicState;
class DeadLetters;

// One commit request for ranges of one table (the ranges of several translators commit
// together, in one snapshot): their files, and per partition the position its range
// started from (the fence: absent when the table had none) and the one it ends at.
table::CommitRequest RequestFor(const catalog::TableIdent& ident,
                                const std::vector<TranslatedRange>& ranges);

class RangeCommit {
 public:
  // Every pointer must outlive this.
  RangeCommit(table::Committer* committer, table::DeltaMirror* delta,
              DeadLetters* dead_letters, kafka::RecordSource* source, const Clock* clock)
      : committer_(committer),
        delta_(delta),
        dead_letters_(dead_letters),
        source_(source),
        clock_(clock) {}

  struct Options {
    std::string cluster_id;
    // Background maintenance expires snapshots and deletes their files; the commit's
    // own expiry then only bounds the metadata (table::CommitRequest).
    int expire_age_factor = 1;
    // Every record fetched so far was taken, so the consumer's position (past
    // transaction markers and aborted records) may end the range (ARCHITECTURE.md §2:
    // b = last delivered + 1, or the consumer position if larger).
    bool batch_done = false;
  };

  // Commits what the topic's translator read: true when a commit was made, false when
  // nothing moved. kConflict when another writer moved the table's (or the dead-letter
  // table's) positions; other errors are the table's (the files are deleted unless the
  // outcome is unknown). Either way the loop reads again from the table's positions.
  Result<bool> Commit(TopicState& ts, Translator& translator, const Options& options);

  // A schema change a translator found (Verdict kEvolve), committed on its own once the
  // records before it are (`where` names the record that brought it). A lost race on
  // the schema is not an error: the table is loaded again with the other writer's.
  Status CommitSchema(TopicState& ts, const schema::Evolution& evolution,
                      const std::string& where);
  // The table loaded again after its schema changed: the translator's decoders and
  // writer go (its partitions keep their ranges), and the Delta log follows.
  Status ReloadTable(TopicState& ts);

  // Delta follows Iceberg; a failure is logged and the topic's Delta retry scheduled with
  // backoff (repaired by a later sync, at every commit, at the next start), never by
  // committing Iceberg again.
  void SyncDelta(TopicState& ts);

 private:
  void AdvanceToConsumer(TopicState& ts);

  table::Committer* committer_;
  table::DeltaMirror* delta_;
  DeadLetters* dead_letters_;
  kafka::RecordSource* source_;
  const Clock* clock_;
};

}  // namespace floe::pipeline
