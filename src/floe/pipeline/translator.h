// Translator: the record path of one table for the partitions one reader holds. A record
// goes through the topic's skip rules and the SchemaResolver into the TableWriter (or
// the dead-letter buffer), or comes back as a Verdict that the loop acts on between
// batches: the translator never commits, never reloads the table and never seeks Kafka.
// Take() ends its work in a TranslatedRange, an immutable value the commit side
// (range_commit.h) commits; ranges of several translators of one table commit together
// in one snapshot.
//
// A translator owns the partitions' ranges, the writer and its builders, the decoders
// and the counters of its TopicState, and shares nothing with another translator, so
// translators can run on threads of their own without a lock on the per-record path.
// One translator per table per reader (not per partition): one data file per table per
// commit interval, whatever the number of partitions a reader holds.
//
// Threading: one thread per translator.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "floe/common/status.h"
#include "floe/iceberg/data_file.h"
#include "floe/kafka/consumer.h"
#include "floe/pipeline/pipeline.h"

namespace floe::pipeline {

struct TopicState;
class SchemaResolver;
class DeadLetters;

// What the loop does after a record the translator could not take.
struct Verdict {
  enum class Kind {
    kTaken,    // a row, a dead letter, skipped or a tombstone: read on
    kSuspend,  // commit what came before the record, then suspend the topic at it
    kPause,    // commit what came before the record, then pause; read again from it
    kEvolve,   // commit what came before, commit ts.evolution, take the record again
    kFault,    // the table's storage or catalog failed (TableFaults)
  };
  Kind kind = Kind::kTaken;
  std::string reason;  // kSuspend, kPause
  Status fault;        // kFault
  int schema_id = -1;  // kSuspend: the value schema that is the cause (-1: none)

  bool taken() const { return kind == Kind::kTaken; }
};

// One partition's part of a range: [start, end), ARCHITECTURE.md §2.
struct PartitionRange {
  int64_t start = 0;
  bool start_recorded = false;  // false: the table has no position for the partition
  int64_t end = 0;
};

// What a translator read since its last commit: the partitions that moved, and the data
// files holding their rows.
struct TranslatedRange {
  std::string topic;
  std::map<int32_t, PartitionRange> partitions;
  std::vector<iceberg::DataFile> files;
  int64_t records = 0;
  int64_t newest_timestamp_ms = -1;  // the newest Kafka timestamp among the rows

  bool empty() const { return partitions.empty(); }
};

class Translator {
 public:
  // `ts` is this translator's state (one topic's table, the partitions it reads); every
  // pointer must outlive the translator.
  Translator(TopicState* ts, SchemaResolver* resolver, DeadLetters* dead_letters,
             const Clock* clock)
      : ts_(ts), resolver_(resolver), dead_letters_(dead_letters), clock_(clock) {}

  // Takes one record of a partition this translator reads (others, and offsets already
  // covered, are passed over).
  Verdict Add(const kafka::Record& r);
  // Ends the range read so far: the writer's files and each moved partition's [start,
  // end). The storage error of a failed file close.
  Result<TranslatedRange> Take();
  // The range is committed: its partitions start again at their ends.
  void Committed(const TranslatedRange& range);

 private:
  Verdict Invalid(const kafka::Record& r, const Status& why, const char* stage);
  Verdict UnknownSchema(const kafka::Record& r, const Status& why);

  TopicState* ts_;
  SchemaResolver* resolver_;
  DeadLetters* dead_letters_;
  const Clock* clock_;
};

}  // namespace floe::pipeline
