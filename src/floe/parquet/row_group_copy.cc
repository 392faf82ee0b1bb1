#include "floe/parquet/row_group_copy.h"

#include <arrow/buffer.h>
#include <arrow/io/interfaces.h>
#include <arrow/util/key_value_metadata.h>
#include <parquet/exception.h>
#include <parquet/file_writer.h>
#include <parquet/index_location.h>
#include <parquet/metadata.h>
#include <parquet/page_index.h>
#include <parquet/properties.h>
#include <parquet/schema.h>
#include <parquet/statistics.h>

#include <algorithm>
#include <map>
#include <set>

#include "floe/parquet/bounds.h"

namespace floe::parquet {
namespace {

constexpr int64_t kCopyChunkBytes = int64_t{4} << 20;
constexpr char kMagic[] = "PAR1";

// Where a column chunk's bytes begin: its dictionary page when it has one.
int64_t ChunkStart(const ::parquet::ColumnChunkMetaData& cc) {
  if (cc.has_dictionary_page() && cc.dictionary_page_offset() > 0) {
    return std::min(cc.dictionary_page_offset(), cc.data_page_offset());
  }
  return cc.data_page_offset();
}

// Whether a column holds no value a bound could describe (only nulls, or NaN).
bool NoBoundedValues(const iceberg::DataFile& f, int id) {
  auto v = f.value_counts.find(id);
  auto n = f.null_value_counts.find(id);
  if (v == f.value_counts.end() || n == f.null_value_counts.end()) return false;
  auto nan = f.nan_value_counts.find(id);
  return v->second == n->second + (nan == f.nan_value_counts.end() ? 0 : nan->second);
}

// Counts known in both, added up.
void AddCounts(std::map<int, int64_t>* acc, const std::map<int, int64_t>& in) {
  for (auto it = acc->begin(); it != acc->end();) {
    auto other = in.find(it->first);
    if (other == in.end()) {
      it = acc->erase(it);
    } else {
      it->second += other->second;
      ++it;
    }
  }
}

}  // namespace

Result<std::unique_ptr<RowGroupCopier>> RowGroupCopier::Open(
    std::shared_ptr<::arrow::io::OutputStream> out, std::string file_uri,
    const ::arrow::Schema& arrow_schema, const iceberg::Schema& schema,
    std::string iceberg_schema_json, const DataFileWriterOptions& options) {
  std::unique_ptr<RowGroupCopier> c(new RowGroupCopier());
  c->out_ = std::move(out);
  c->file_uri_ = std::move(file_uri);
  c->schema_ = schema;
  c->schema_json_ = std::move(iceberg_schema_json);
  FLOE_ASSIGN_OR_RAISE(c->descr_, ParquetSchemaOf(arrow_schema, options));
  // The footer records each chunk's codec from these properties: zstd, as Floe writes
  // (Refusal() takes no other).
  c->builder_ = ::parquet::FileMetaDataBuilder::Make(
      c->descr_.get(), ::parquet::WriterProperties::Builder()
                           .compression(::parquet::Compression::ZSTD)
                           ->build());
  c->metrics_.file_path = c->file_uri_;
  Status st = c->out_->Write(kMagic, 4);
  if (!st.ok()) return WithContext(st, "writing data file " + c->file_uri_);
  c->position_ = 4;
  return c;
}

RowGroupCopier::~RowGroupCopier() {
  if (!closed_ && out_) (void)out_->Abort();
}

namespace {

// The byte range [start, end) of row group `r`'s column chunks, when they lie back to
// back inside the file's data (between the leading magic and `data_end`); else why not.
std::string RowGroupRange(const ::parquet::RowGroupMetaData& rg, int r, int64_t data_end,
                          int64_t* start, int64_t* end) {
  *start = ChunkStart(*rg.ColumnChunk(0));
  *end = *start;
  for (int c = 0; c < rg.num_columns(); ++c) {
    auto cc = rg.ColumnChunk(c);
    if (ChunkStart(*cc) != *end || cc->total_compressed_size() < 0) {
      return "row group " + std::to_string(r) +
             " does not hold its column chunks back to back";
    }
    *end += cc->total_compressed_size();
  }
  if (*start < 4 || *end > data_end) {
    return "row group " + std::to_string(r) + " spans bytes " + std::to_string(*start) +
           ".." + std::to_string(*end) + ", outside the file's data (4.." +
           std::to_string(data_end) + ")";
  }
  return "";
}

// Where a file's row groups end: before its footer, its length and the closing magic.
int64_t DataEnd(const ::parquet::FileMetaData& footer, int64_t file_size) {
  return file_size - 8 - static_cast<int64_t>(footer.size());
}

std::string RefusalOf(const ::parquet::SchemaDescriptor& target,
                      const ::parquet::FileMetaData& footer, int64_t file_size) {
  if (footer.is_encryption_algorithm_set()) return "it is encrypted";
  // Another writer's quirks (which readers recognize by created_by) would be attributed
  // to Arrow's writer under the new footer.
  if (footer.writer_version().application_ != "parquet-cpp-arrow") {
    return "it was written by " + footer.created_by() + ", not Arrow's Parquet writer";
  }
  const ::parquet::SchemaDescriptor& theirs = *footer.schema();
  // Equals compares the leaves' names, types, repetitions, levels and field ids.
  if (!theirs.Equals(target)) return "its Parquet schema is not the table's current one";
  for (int r = 0; r < footer.num_row_groups(); ++r) {
    auto rg = footer.RowGroup(r);
    if (rg->num_columns() != target.num_columns()) {
      return "row group " + std::to_string(r) + " has " +
             std::to_string(rg->num_columns()) + " columns, not " +
             std::to_string(target.num_columns());
    }
    for (int c = 0; c < rg->num_columns(); ++c) {
      auto cc = rg->ColumnChunk(c);
      // The encodings of the new footer are rebuilt from these, as version 1 data pages.
      if (cc->encoding_stats().empty()) return "it records no page encoding statistics";
      for (const auto& s : cc->encoding_stats()) {
        if (s.page_type == ::parquet::PageType::DATA_PAGE_V2)
          return "it has v2 data pages";
      }
      if (cc->crypto_metadata() != nullptr) return "a column is encrypted";
      if (cc->compression() != ::parquet::Compression::ZSTD) {
        return "column " + target.Column(c)->path()->ToDotString() +
               " is not zstd-compressed";
      }
    }
    int64_t start = 0, end = 0;
    std::string bad = RowGroupRange(*rg, r, DataEnd(footer, file_size), &start, &end);
    if (!bad.empty()) return bad;
  }
  return "";
}

}  // namespace

std::string CopyRefusal(const ::parquet::SchemaDescriptor& target,
                        const ::parquet::FileMetaData& footer, int64_t file_size) {
  try {
    return RefusalOf(target, footer, file_size);
  } catch (const std::exception& e) {  // ::parquet::ParquetException from the footer
    return std::string("its footer cannot be read: ") + e.what();
  }
}

std::string RowGroupCopier::Refusal(const ::parquet::FileMetaData& footer,
                                    int64_t file_size) const {
  return CopyRefusal(*descr_, footer, file_size);
}

Status RowGroupCopier::CopyBytes(::arrow::io::RandomAccessFile& in, int64_t from,
                                 int64_t length, const std::string& uri) {
  // One buffer for the whole copy: a fresh aligned block per chunk fragments malloc's
  // heap, which then holds tens of MiB that nothing uses (measured on W1 compactions).
  if (buffer_.empty() && length > 0) buffer_.resize(static_cast<size_t>(kCopyChunkBytes));
  while (length > 0) {
    const int64_t n = std::min(length, kCopyChunkBytes);
    auto got = in.ReadAt(from, n, buffer_.data());
    if (!got.ok()) return WithContext(got.status(), "reading data file " + uri);
    if (*got != n) {
      return InvalidInput(uri + ": ends at byte " + std::to_string(from + *got) +
                          " inside a row group its footer places up to byte " +
                          std::to_string(from + length));
    }
    Status st = out_->Write(buffer_.data(), n);
    if (!st.ok()) return WithContext(st, "writing data file " + file_uri_);
    position_ += n;
    from += n;
    length -= n;
  }
  return Status::OK();
}

Status RowGroupCopier::Append(::arrow::io::RandomAccessFile& in,
                              const ::parquet::FileMetaData& footer,
                              const iceberg::DataFile& metrics, const std::string& uri) {
  FLOE_RETURN_NOT_OK(broken_);
  if (closed_) return Internal("row-group copier for " + file_uri_ + ": closed");
  Status st;
  try {
    st = AppendRowGroups(in, footer, metrics, uri);
  } catch (const std::exception& e) {  // ::parquet::ParquetException from the footer
    st = InvalidInput(uri + ": " + e.what());
  }
  if (!st.ok()) broken_ = st;
  return st;
}

Status RowGroupCopier::AppendRowGroups(::arrow::io::RandomAccessFile& in,
                                       const ::parquet::FileMetaData& footer,
                                       const iceberg::DataFile& metrics,
                                       const std::string& uri) {
  FLOE_ASSIGN_OR_RAISE(const int64_t size, in.GetSize());
  const std::string refusal = Refusal(footer, size);
  if (!refusal.empty()) {
    return InvalidInput(uri + ": its row groups cannot be copied: " + refusal);
  }
  if (footer.num_rows() != metrics.record_count) {
    return InvalidInput(uri + ": its footer holds " + std::to_string(footer.num_rows()) +
                        " rows, its manifest entry " +
                        std::to_string(metrics.record_count));
  }
  {
    int64_t rows = 0;
    for (int r = 0; r < footer.num_row_groups(); ++r) {
      auto rg = footer.RowGroup(r);
      const int n = rg->num_columns();
      int64_t start = 0, end = 0;
      (void)RowGroupRange(*rg, r, DataEnd(footer, size), &start, &end);  // checked above
      const int64_t placed = position_;
      FLOE_RETURN_NOT_OK(CopyBytes(in, start, end - start, uri));
      const int64_t shift = placed - start;
      ::parquet::RowGroupMetaDataBuilder* out_rg = builder_->AppendRowGroup();
      out_rg->set_num_rows(rg->num_rows());
      for (int c = 0; c < n; ++c) {
        auto cc = rg->ColumnChunk(c);
        ::parquet::ColumnChunkMetaDataBuilder* out_cc = out_rg->NextColumnChunk();
        if (cc->is_stats_set()) {
          // Read statistics do not say whether the column sorts signed, which decides
          // whether the legacy min/max fields (older readers' only ones) are written.
          ::parquet::EncodedStatistics stats = *cc->encoded_statistics();
          stats.set_is_signed(descr_->Column(c)->sort_order() ==
                              ::parquet::SortOrder::SIGNED);
          out_cc->SetStatistics(stats);
        }
        if (auto sizes = cc->size_statistics()) out_cc->SetSizeStatistics(*sizes);
        std::map<::parquet::Encoding::type, int32_t> dict_pages, data_pages;
        bool plain_data = false;
        for (const auto& s : cc->encoding_stats()) {
          if (s.page_type == ::parquet::PageType::DICTIONARY_PAGE) {
            dict_pages[s.encoding] += s.count;
          } else if (s.page_type == ::parquet::PageType::DATA_PAGE ||
                     s.page_type == ::parquet::PageType::DATA_PAGE_V2) {
            data_pages[s.encoding] += s.count;
            plain_data = plain_data || s.encoding == ::parquet::Encoding::PLAIN;
          }
        }
        const bool dict = cc->has_dictionary_page() && cc->dictionary_page_offset() > 0;
        out_cc->Finish(cc->num_values(), dict ? cc->dictionary_page_offset() + shift : 0,
                       /*index_page_offset=*/-1, cc->data_page_offset() + shift,
                       cc->total_compressed_size(), cc->total_uncompressed_size(), dict,
                       /*dictionary_fallback=*/dict && plain_data, dict_pages,
                       data_pages);
        CarryPageIndex(in, *cc, start, end, shift, c);
      }
      out_rg->Finish(rg->total_byte_size(),
                     row_groups_ < 32767 ? static_cast<int16_t>(row_groups_) : -1);
      ++row_groups_;
      split_offsets_.push_back(placed);
      rows += rg->num_rows();
    }
    rows_ += rows;
    MergeMetrics(metrics);
    return Status::OK();
  }
}

void RowGroupCopier::MergeMetrics(const iceberg::DataFile& in) {
  iceberg::DataFile& acc = metrics_;
  if (!merged_any_) {
    acc.value_counts = in.value_counts;
    acc.null_value_counts = in.null_value_counts;
    acc.nan_value_counts = in.nan_value_counts;
    acc.lower_bounds = in.lower_bounds;
    acc.upper_bounds = in.upper_bounds;
    merged_any_ = true;
    return;
  }
  // Bounds first: whether a side held any bounded value is judged on its counts.
  auto merge = [&](std::map<int, std::string>* mine,
                   const std::map<int, std::string>& theirs, int keep_sign) {
    std::set<int> ids;
    for (const auto& [id, v] : *mine) ids.insert(id);
    for (const auto& [id, v] : theirs) ids.insert(id);
    std::map<int, std::string> out;
    for (int id : ids) {
      auto a = mine->find(id);
      auto b = theirs.find(id);
      if (a != mine->end() && b != theirs.end()) {
        const iceberg::NestedField* field = schema_.FindField(id);
        if (field == nullptr || !field->type->is_primitive()) continue;
        const int cmp = CompareBounds(field->type->id, b->second, a->second);
        out[id] = keep_sign * cmp < 0 ? b->second : a->second;
      } else if (a != mine->end()) {
        if (NoBoundedValues(in, id)) out[id] = a->second;
      } else if (NoBoundedValues(acc, id)) {
        out[id] = b->second;
      }
    }
    *mine = std::move(out);
  };
  merge(&acc.lower_bounds, in.lower_bounds, +1);
  merge(&acc.upper_bounds, in.upper_bounds, -1);
  AddCounts(&acc.value_counts, in.value_counts);
  AddCounts(&acc.null_value_counts, in.null_value_counts);
  AddCounts(&acc.nan_value_counts, in.nan_value_counts);
}

void RowGroupCopier::CarryPageIndex(::arrow::io::RandomAccessFile& in,
                                    const ::parquet::ColumnChunkMetaData& cc,
                                    int64_t start, int64_t end, int64_t shift,
                                    int column) {
  // Both indexes or neither: a column index without page locations helps no reader.
  auto ci = cc.GetColumnIndexLocation();
  auto oi = cc.GetOffsetIndexLocation();
  if (!ci || !oi || ci->length <= 0 || oi->length <= 0) return;
  auto column_index = in.ReadAt(ci->offset, ci->length);
  auto offset_index = in.ReadAt(oi->offset, oi->length);
  if (!column_index.ok() || !offset_index.ok() || (*column_index)->size() != ci->length ||
      (*offset_index)->size() != oi->length) {
    return;  // unreadable: the copy goes without it
  }
  std::unique_ptr<::parquet::OffsetIndex> pages;
  try {
    pages = ::parquet::OffsetIndex::Make((*offset_index)->data(), oi->length,
                                         ::parquet::default_reader_properties());
  } catch (const std::exception&) {  // ::parquet::ParquetException: a corrupt index
    return;
  }
  auto moved = ::parquet::OffsetIndexBuilder::Make();
  const auto& unencoded = pages->unencoded_byte_array_data_bytes();
  const auto& locations = pages->page_locations();
  for (size_t i = 0; i < locations.size(); ++i) {
    const auto& page = locations[i];
    if (page.offset < start || page.offset + page.compressed_page_size > end) return;
    std::optional<int64_t> bytes;
    if (i < unencoded.size()) bytes = unencoded[i];
    moved->AddPage(page.offset, page.compressed_page_size, page.first_row_index, bytes);
  }
  moved->Finish(shift);  // every page where its bytes now are
  PageIndex index;
  index.chunk = {row_groups_, column};
  index.column_index = (*column_index)->ToString();
  index.offset_index = std::move(moved);
  page_indexes_.push_back(std::move(index));
}

Status RowGroupCopier::WritePageIndexes() {
  ::parquet::IndexLocations column_indexes, offset_indexes;
  for (const PageIndex& index : page_indexes_) {
    Status st = out_->Write(index.column_index.data(),
                            static_cast<int64_t>(index.column_index.size()));
    if (!st.ok()) return WithContext(st, "writing data file " + file_uri_);
    column_indexes.emplace_back(
        index.chunk, ::parquet::IndexLocation{
                         position_, static_cast<int32_t>(index.column_index.size())});
    position_ += static_cast<int64_t>(index.column_index.size());
  }
  for (const PageIndex& index : page_indexes_) {
    index.offset_index->WriteTo(out_.get());
    FLOE_ASSIGN_OR_RAISE(const int64_t now, out_->Tell());
    offset_indexes.emplace_back(
        index.chunk,
        ::parquet::IndexLocation{position_, static_cast<int32_t>(now - position_)});
    position_ = now;
  }
  builder_->SetIndexLocations(::parquet::IndexKind::kColumnIndex, column_indexes);
  builder_->SetIndexLocations(::parquet::IndexKind::kOffsetIndex, offset_indexes);
  page_indexes_.clear();
  return Status::OK();
}

Result<iceberg::DataFile> RowGroupCopier::Close() {
  FLOE_RETURN_NOT_OK(broken_);
  if (closed_) return Internal("row-group copier for " + file_uri_ + ": closed");
  closed_ = true;
  std::shared_ptr<::parquet::FileMetaData> footer;
  try {
    Status indexes = WritePageIndexes();
    if (!indexes.ok()) {
      (void)out_->Abort();
      return indexes;
    }
    footer = builder_->Finish(
        ::arrow::key_value_metadata({kIcebergSchemaKey}, {schema_json_}));
    ::parquet::WriteFileMetaData(*footer, out_.get());
  } catch (const std::exception& e) {  // ::parquet::ParquetException
    (void)out_->Abort();
    return Internal("writing the footer of " + file_uri_ + ": " + e.what());
  }
  auto size = out_->Tell();
  Status st = size.ok() ? out_->Close() : size.status();
  if (!st.ok()) {
    (void)out_->Abort();
    return WithContext(st, "closing data file " + file_uri_);
  }
  iceberg::DataFile df = std::move(metrics_);
  df.file_path = file_uri_;
  df.file_format = "PARQUET";
  df.record_count = rows_;
  df.file_size_in_bytes = *size;
  df.split_offsets = split_offsets_;
  for (int r = 0; r < footer->num_row_groups(); ++r) {
    auto rg = footer->RowGroup(r);
    for (int c = 0; c < rg->num_columns(); ++c) {
      const int id = descr_->Column(c)->schema_node()->field_id();
      df.column_sizes[id] += rg->ColumnChunk(c)->total_compressed_size();
    }
  }
  return df;
}

}  // namespace floe::parquet
