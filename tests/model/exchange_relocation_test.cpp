// relocate_phase against execute_phase: every later Repeat iteration of compiled phases (rows
// rewritten as the Repeat patch list rewrites them) must give exactly the full execution's
// outcome, and anything but a moved send address must refuse relocation.
#include <gtest/gtest.h>

#include <set>
#include <tuple>
#include <vector>

#include "compiler/compile.hpp"
#include "compiler/phase_schedule.hpp"
#include "formats/capture.hpp"
#include "model/exchange_phase.hpp"
#include "support/test_support.hpp"
#include "workload/synth.hpp"

namespace lockstep::model {
namespace {

const arch::MachineDescription& chip() { return testing::c600_machine(); }
const arch::Topology& topology() { return testing::c600_topology(); }

// The phase's tiles at `iteration`: every address field's word set to that iteration's value.
std::vector<PhaseTile> tiles_at(const compiler::ScheduledPhase& phase, uint32_t iteration) {
  std::vector<PhaseTile> tiles;
  for (const compiler::TileRow& row : phase.rows) {
    PhaseTile t;
    t.logical = row.tile;
    t.physical = topology().physical(row.tile);
    t.has_row = true;
    t.row_address = arch::kTableReservedBegin;
    t.row_words = row.words;
    t.incoming_base = row.incoming_base;
    for (const compiler::AddressField& field : row.address_fields) {
      if (field.values.size() > iteration) t.row_words[field.word_index] = field.values[iteration];
    }
    tiles.push_back(std::move(t));
  }
  return tiles;
}

auto write_key(const WriteRun& w) {
  return std::tie(w.receiver, w.sender, w.address, w.source_address, w.bytes, w.item_bytes, w.first_write_event,
                  w.first_mux_event, w.run, w.source_offset, w.last_run);
}

void expect_same(const PhaseOutcome& relocated, const PhaseOutcome& full) {
  EXPECT_EQ(relocated.tile_horizon, full.tile_horizon);
  EXPECT_EQ(relocated.horizon, full.horizon);
  EXPECT_EQ(relocated.final_mux, full.final_mux);
  EXPECT_EQ(relocated.final_paired_mux, full.final_paired_mux);
  ASSERT_EQ(relocated.writes.size(), full.writes.size());
  for (size_t k = 0; k < full.writes.size(); ++k) {
    ASSERT_TRUE(write_key(relocated.writes[k]) == write_key(full.writes[k])) << "write " << k;
  }
}

// Phases of the transformer family under a Word32 and a Paired64 policy; their Repeat
// transfers carry one source address per layer.
std::vector<compiler::ScheduledPhase> repeated_phases() {
  workload::SynthOptions synth;
  synth.family = workload::SynthFamily::Transformer;
  synth.tiles = 64;
  synth.seed = 11;
  synth.phases = 20;  // the first phases are the embedding's, outside the layer Repeat
  const arch::Capture capture = workload::synthesize_capture(synth, chip());
  std::vector<compiler::ScheduledPhase> out;
  for (const char* config : {"B256", "latency+paired"}) {
    uint32_t taken = 0;
    for (const arch::CapturePhase& phase : capture.phases) {
      if (phase.iterations < 2 || ++taken > 3) continue;
      out.push_back(compiler::schedule_phase(phase, chip(), topology(), compiler::parse_config(config)));
    }
  }
  return out;
}

// The earlier outcome relocated to `tiles` (a copy: relocate_phase works in place).
std::optional<PhaseOutcome> relocated_to(const std::vector<PhaseTile>& earlier, const PhaseOutcome& outcome,
                                         const std::vector<PhaseTile>& tiles) {
  PhaseOutcome moved = outcome;
  if (!relocate_phase(chip(), earlier, moved, tiles)) return std::nullopt;
  return moved;
}

TEST(ExchangeRelocation, EveryIterationMatchesTheFullExecution) {
  uint32_t relocated_iterations = 0;
  for (const compiler::ScheduledPhase& phase : repeated_phases()) {
    SCOPED_TRACE("phase " + std::to_string(phase.phase));
    std::vector<PhaseTile> earlier = tiles_at(phase, 0);
    PhaseOutcome earlier_outcome = execute_phase(chip(), topology(), earlier);
    ASSERT_TRUE(earlier_outcome.hazards.empty());
    for (uint32_t iteration = 1; iteration < 5; ++iteration) {
      const std::vector<PhaseTile> tiles = tiles_at(phase, iteration);
      const PhaseOutcome full = execute_phase(chip(), topology(), tiles);
      ASSERT_TRUE(full.hazards.empty());
      const auto relocated = relocated_to(earlier, earlier_outcome, tiles);
      const bool pointers_move = std::any_of(phase.rows.begin(), phase.rows.end(), [](const auto& row) {
        return std::any_of(row.address_fields.begin(), row.address_fields.end(), [](const auto& f) {
          return f.kind == compiler::AddressField::Kind::PicPointer && f.values.size() > 1;
        });
      });
      if (pointers_move) {
        EXPECT_FALSE(relocated) << "a moved PIC pointer changes write addresses";
        continue;
      }
      ASSERT_TRUE(relocated) << "iteration " << iteration;
      expect_same(*relocated, full);
      // The copies move only with the writes listed as moved: every write whose source
      // changed must be among them.
      const std::set<uint32_t> listed(relocated->moved_writes.begin(), relocated->moved_writes.end());
      for (uint32_t k = 0; k < full.writes.size(); ++k) {
        if (relocated->writes[k].source_address != earlier_outcome.writes[k].source_address) {
          EXPECT_TRUE(listed.count(k)) << "write " << k << " moved unlisted";
        }
      }
      ++relocated_iterations;
      earlier = tiles;
      earlier_outcome = *relocated;
    }
  }
  EXPECT_GT(relocated_iterations, 8u);  // otherwise the test proves nothing
}

TEST(ExchangeRelocation, RefusesAnythingButMovedSendAddresses) {
  const std::vector<compiler::ScheduledPhase> phases = repeated_phases();
  ASSERT_FALSE(phases.empty());
  const compiler::ScheduledPhase& phase = phases.front();
  const std::vector<PhaseTile> earlier = tiles_at(phase, 0);
  const PhaseOutcome outcome = execute_phase(chip(), topology(), earlier);
  // Identical rows relocate to the same outcome.
  ASSERT_TRUE(relocated_to(earlier, outcome, earlier));

  std::vector<PhaseTile> changed = earlier;
  changed[0].row_words[0] ^= 1u;  // the leading instruction's own fields
  EXPECT_FALSE(relocated_to(earlier, outcome, changed));

  changed = earlier;
  changed[1].incoming_base += 4;
  EXPECT_FALSE(relocated_to(earlier, outcome, changed));

  // A send moved onto its own row (hazard 1): the full execution must report it.
  changed = tiles_at(phase, 1);
  bool moved_onto_row = false;
  for (size_t i = 0; i < phase.rows.size() && !moved_onto_row; ++i) {
    for (const compiler::AddressField& field : phase.rows[i].address_fields) {
      if (field.kind != compiler::AddressField::Kind::SendAddress || field.values.size() < 2) continue;
      const uint32_t word = changed[i].row_words[field.word_index];
      // send: item address in bits 3..20 (word address); point it at the row itself.
      const uint32_t row_item = arch::kTableReservedBegin / 4;
      const uint32_t moved = (word & ~(0x3ffffu << 3)) | ((row_item & 0x3ffffu) << 3);
      if (moved == word) continue;
      changed[i].row_words[field.word_index] = moved;
      moved_onto_row = true;
      break;
    }
  }
  ASSERT_TRUE(moved_onto_row);
  EXPECT_FALSE(relocated_to(earlier, outcome, changed));
  EXPECT_FALSE(execute_phase(chip(), topology(), changed).hazards.empty());
}

}  // namespace
}  // namespace lockstep::model
