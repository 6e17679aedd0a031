// Machine descriptions: the shipped files, derived files, the digest and every rejection.
#include <gtest/gtest.h>

#include "arch/machine.hpp"
#include "io/errors.hpp"
#include "io/yaml_reader.hpp"
#include "support/test_support.hpp"

namespace lockstep::arch {
namespace {

std::string load_error(const std::string& source) {
  try {
    load_machine(source);
  } catch (const InputError& e) {
    return e.what();
  }
  ADD_FAILURE() << "accepted " << source;
  return "";
}

TEST(MachineLoader, LoadsTheC600ByName) {
  const MachineDescription m = load_machine("ipu21-c600");
  EXPECT_EQ(m.name, "ipu21-c600");
  EXPECT_EQ(m.tiles, 1472u);
  EXPECT_EQ(m.chip_tiles, 1472u);
  EXPECT_EQ(m.sram_base, 0x4c000u);
  EXPECT_EQ(m.sram_end, 0xe8000u);
  EXPECT_EQ(m.sram_bytes(), 624u * 1024u);
  EXPECT_EQ(m.element_bytes, 0x4000u);
  EXPECT_EQ(m.interleaved_base, 0x80000u);
  EXPECT_EQ(m.interleaved_element_bytes, 0x8000u);
  EXPECT_EQ(m.row_region_end, 0x80000u);
  EXPECT_EQ(m.loader_limit, 0xe7bb0u);
  EXPECT_EQ(m.fetch_lookahead_bytes, 64u);
  EXPECT_DOUBLE_EQ(m.clock_hz, 1.5e9);
  EXPECT_EQ(m.supervisor_cycles_per_instruction, 6u);
  EXPECT_EQ(m.workers, 6u);
  EXPECT_EQ(m.bulk_patch_threshold_words, 24u);
  EXPECT_EQ(m.barrier_latency_cycles, 30u);
  EXPECT_EQ(m.neutral_mux, 0x640u);
  EXPECT_EQ(m.route, RouteTiming{});
  EXPECT_EQ(m.digest.size(), 16u);
  EXPECT_EQ(m.digest.find_first_not_of("0123456789abcdef"), std::string::npos);
}

TEST(MachineLoader, PathAndNameGiveTheSameMachine) {
  const auto by_name = load_machine("ipu21-c600");
  const auto by_path = load_machine(testing::source_path("configs/machines/ipu21-c600.yaml"));
  EXPECT_EQ(by_name, by_path);
  EXPECT_EQ(load_machine("configs/machines/ipu21-c600.yaml"), by_name);  // embedded path
}

TEST(MachineLoader, DerivedMachinesOverrideNameAndTilesOnly) {
  const auto chip = load_machine("ipu21-c600");
  for (const auto& [name, tiles] : std::vector<std::pair<std::string, uint32_t>>{
           {"ipu21-c600-t16", 16}, {"ipu21-c600-t64", 64}, {"ipu21-c600-t256", 256}}) {
    auto m = load_machine(name);
    EXPECT_EQ(m.name, name);
    EXPECT_EQ(m.tiles, tiles);
    EXPECT_NE(m.digest, chip.digest) << name;
    m.name = chip.name;
    m.tiles = chip.tiles;
    m.digest = chip.digest;
    EXPECT_EQ(m, chip) << name;
  }
}

TEST(MachineLoader, DigestCoversEveryField) {
  const auto chip = load_machine("ipu21-c600");
  EXPECT_EQ(machine_digest(chip), chip.digest);
  auto changed = chip;
  changed.route.write_delay_per_row = 3;
  EXPECT_NE(machine_digest(changed), chip.digest);
  changed = chip;
  changed.clock_hz = 1.6e9;
  EXPECT_NE(machine_digest(changed), chip.digest);
  changed = chip;
  changed.barrier_latency_cycles = 31;
  EXPECT_NE(machine_digest(changed), chip.digest);
}

TEST(MachineLoader, CanonicalTextReadsBackEqual) {
  for (const char* name : {"ipu21-c600", "ipu21-c600-t16"}) {
    const auto m = load_machine(name);
    const auto again = parse_machine_yaml(machine_to_yaml(m), "canonical.yaml");
    EXPECT_EQ(again, m) << name;
    EXPECT_EQ(machine_to_yaml(again), machine_to_yaml(m));
  }
}

TEST(MachineLoader, ElementIndicesAreDistinctAcrossRegions) {
  const auto m = load_machine("ipu21-c600");
  EXPECT_EQ(m.element_of(0x4c000), 19u);
  EXPECT_EQ(m.element_of(0x4ffff), 19u);
  EXPECT_EQ(m.element_of(0x50000), 20u);
  EXPECT_EQ(m.element_of(0x7ffff), 31u);
  EXPECT_EQ(m.element_of(0x80000), 32u);  // first 32 KiB interleaved element
  EXPECT_EQ(m.element_of(0x87fff), 32u);
  EXPECT_EQ(m.element_of(0x88000), 33u);
  EXPECT_EQ(m.element_of(0xe7fff), 44u);
  uint32_t previous = m.element_of(m.sram_base);
  for (uint32_t a = m.sram_base; a < m.sram_end; a += 0x1000) {
    const uint32_t e = m.element_of(a);
    ASSERT_TRUE(e == previous || e == previous + 1) << std::hex << a;
    previous = e;
  }
}

TEST(MachineLoader, InSram) {
  const auto m = load_machine("ipu21-c600");
  EXPECT_TRUE(m.in_sram(0x4c000, 4));
  EXPECT_TRUE(m.in_sram(0xe7ffc, 4));
  EXPECT_FALSE(m.in_sram(0xe7ffc, 8));
  EXPECT_FALSE(m.in_sram(0x4bffc, 4));
  EXPECT_FALSE(m.in_sram(0xfffffffc, 0x100000000ull));
}

TEST(MachineLoader, UnknownNameListsTheEmbeddedMachines) {
  const auto error = load_error("ipu99");
  EXPECT_NE(error.find("ipu99: no such machine"), std::string::npos) << error;
  EXPECT_NE(error.find("ipu21-c600-t16"), std::string::npos) << error;
  EXPECT_NE(load_error("/nonexistent/machine.yaml").find("/nonexistent/machine.yaml"), std::string::npos);
}

TEST(MachineLoader, RejectsBadFilesWithFileLineAndKey) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"unknown_key.yaml", ":29: exchange.wire_delay: unknown key"},
      {"missing_key.yaml", ":7: memory.end: missing required key"},
      {"wrong_type.yaml", ":3: tiles: expected an unsigned integer, got 'many'"},
      {"zero_tiles.yaml", ":3: tiles: 0 is outside 1..1472"},
      {"end_below_base.yaml", ":8: memory.end: 0x40000 must be above base 0x4c000"},
      {"element_not_power_of_two.yaml", ":9: memory.element_bytes: 0x3000 is not a power of two"},
      {"base_misaligned.yaml", ":7: memory.base: 0x4c004 is not aligned to element_bytes"},
      {"row_region_above_interleaved.yaml", ":12: memory.row_region_end: 0x90000"},
      {"clock_zero.yaml", ":15: clock_hz: must be a positive number"},
      {"unknown_mapping.yaml", ":5: tile_mapping: 'c700' is not a known mapping"},
      {"neutral_mux_is_a_tile.yaml", ":23: exchange.neutral_mux: 0x100 must name no tile"},
      {"workers_zero.yaml", ":18: supervisor.workers: must be at least 1"},
      {"base_overrides_clock.yaml", ":5: clock_hz: a file with 'base:' may override only name"},
      {"base_too_many_tiles.yaml", ":4: tiles: 2000 is outside 1..1472"},
      {"base_cycle.yaml", ":2: base: 'base_cycle.yaml': bases nest deeper than 8"},
      {"not_a_mapping.yaml", ":2: expected a mapping"},
  };
  for (const auto& [file, expected] : cases) {
    const std::string path = testing::source_path("tests/data/machines/" + file);
    const std::string error = load_error(path);
    EXPECT_EQ(error.rfind(path + expected, 0), 0u) << "got: " << error;
    EXPECT_EQ(error.find('\n'), std::string::npos) << error;
  }
}

TEST(MachineLoader, DerivedFileMayNameItsBaseByPath) {
  const std::string dir = testing::temp_dir("machine_base_path");
  testing::write_file(dir + "/small.yaml", "base: " + testing::source_path("configs/machines/ipu21-c600.yaml") +
                                               "\nname: small\ntiles: 2\n");
  testing::write_file(dir + "/smaller.yaml", "base: small.yaml\nname: smaller\ntiles: 1\n");
  const auto m = load_machine(dir + "/smaller.yaml");
  EXPECT_EQ(m.name, "smaller");
  EXPECT_EQ(m.tiles, 1u);
}

}  // namespace
}  // namespace lockstep::arch
