#include "compiler/shared_rows.hpp"

#include <algorithm>
#include <map>
#include <set>

namespace lockstep::compiler {

bool varies_per_iteration(const AddressField& field) {
  return std::any_of(field.values.begin(), field.values.end(), [&](uint32_t v) { return v != field.values.front(); });
}

namespace {

// Two rows may share storage when their words agree outside the address fields and the
// address fields sit at the same positions (a patch rewrites whole words).
struct ShareKey {
  std::vector<uint32_t> masked_words;
  std::vector<uint32_t> field_positions;
  bool operator<(const ShareKey& other) const {
    return std::tie(masked_words, field_positions) < std::tie(other.masked_words, other.field_positions);
  }
};

ShareKey key_of(const TileRow& row) {
  ShareKey key{row.words, {}};
  key.field_positions.reserve(row.address_fields.size());
  for (const AddressField& field : row.address_fields) {
    if (field.word_index < key.masked_words.size()) key.masked_words[field.word_index] = 0;
    key.field_positions.push_back(field.word_index);
  }
  return key;
}

// Word indices whose value is not one constant over every use and every iteration.
std::vector<uint32_t> patched_positions(const std::vector<const TileRow*>& uses) {
  std::vector<uint32_t> result;
  const TileRow& first = *uses.front();
  for (size_t f = 0; f < first.address_fields.size(); ++f) {
    const uint32_t position = first.address_fields[f].word_index;
    const uint32_t reference = first.words[position];
    bool constant = true;
    for (const TileRow* row : uses) {
      for (uint32_t value : row->address_fields[f].values) constant = constant && value == reference;
      constant = constant && row->words[position] == reference;
    }
    if (!constant) result.push_back(position);
  }
  return result;
}

}  // namespace

TileTable build_tile_table(uint32_t tile, const std::vector<const TileRow*>& rows_by_phase, bool share) {
  TileTable table;
  table.tile = tile;
  table.row_of_phase.assign(rows_by_phase.size(), -1);
  std::map<ShareKey, int32_t> index_of_key;
  std::vector<std::vector<const TileRow*>> use_rows;
  for (size_t p = 0; p < rows_by_phase.size(); ++p) {
    const TileRow* row = rows_by_phase[p];
    if (row == nullptr) continue;
    table.unshared_bytes += row_bytes_aligned(row->words.size());
    int32_t index = -1;
    if (share) {
      auto [it, inserted] = index_of_key.emplace(key_of(*row), static_cast<int32_t>(table.rows.size()));
      if (!inserted) index = it->second;
    }
    if (index < 0) {
      index = static_cast<int32_t>(table.rows.size());
      table.rows.push_back(StoredRow{row->words, {}, {}, 0});
      use_rows.emplace_back();
    }
    table.rows[index].uses.push_back(static_cast<uint32_t>(p));
    use_rows[index].push_back(row);
    table.row_of_phase[p] = index;
  }
  uint32_t offset = 0;
  for (size_t i = 0; i < table.rows.size(); ++i) {
    StoredRow& stored = table.rows[i];
    stored.patched_words = patched_positions(use_rows[i]);
    stored.offset = offset;
    offset += row_bytes_aligned(stored.words.size());
  }
  table.bytes = offset;
  return table;
}

}  // namespace lockstep::compiler
