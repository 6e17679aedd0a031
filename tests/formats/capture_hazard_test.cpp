// validate_capture rejects a phase in which one tile sends from and receives into the same
// memory element (docs/ipu21-exchange.md section 7, hazard 2), naming tile, element and the
// first transfers involved; other phases, other tiles and neighbouring elements are fine.
#include <gtest/gtest.h>

#include <string>

#include "arch/machine.hpp"
#include "formats/capture.hpp"
#include "io/errors.hpp"

namespace lockstep::arch {
namespace {

// Tile 2 receives 4 words at `receive` (transfer 0, from tile 1) and sends 4 words from
// `send` (transfer 1, to tile 3), in phase `send_phase` (3 or 5) with two iterations.
std::string capture_yaml(const std::string& receive, const std::string& send, const std::string& send_second,
                         int send_phase) {
  const std::string receive_transfer =
      "      - {source_tile: 1, source_addresses: [0x5c000, 0x5c000], destinations: [{tile: 2, "
      "address: " +
      receive + "}], words: 4, allow_paired: true}\n";
  const std::string send_transfer = "      - {source_tile: 2, source_addresses: [" + send + ", " + send_second +
                                    "], destinations: [{tile: 3, address: 0x70000}], words: 4, allow_paired: true}\n";
  std::string text =
      "version: 1\n"
      "machine: \"ipu21-c600-t16\"\n"
      "phases:\n"
      "  - id: 3\n"
      "    label: \"layer.mlp.reduce\"\n"
      "    execution_count: 27\n"
      "    operation: \"gemm\"\n"
      "    iterations: 2\n"
      "    transfers:\n" +
      receive_transfer + (send_phase == 3 ? send_transfer : "") +
      "  - id: 5\n"
      "    label: \"layer.mlp.scatter\"\n"
      "    execution_count: 27\n"
      "    operation: \"gemm\"\n"
      "    iterations: 2\n"
      "    transfers:\n"
      "      - {source_tile: 4, source_addresses: [0x5c000, 0x5c000], destinations: [{tile: 5, "
      "address: 0x5c000}], words: 4, allow_paired: true}\n" +
      (send_phase == 5 ? send_transfer : "");
  return text;
}

std::string error_of(const std::string& text) {
  const MachineDescription machine = load_machine("ipu21-c600-t16");
  try {
    validate_capture(parse_capture_yaml(text, "hz.yaml"), machine, "hz.yaml");
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

TEST(CaptureHazard, SendAndReceiveInOneElementFails) {
  // 0x60000 and 0x63ff0 are both in element 24 (0x60000 / 0x4000).
  EXPECT_EQ(error_of(capture_yaml("0x63ff0", "0x60000", "0x60000", 3)),
            "hz.yaml: phase 3 (layer.mlp.reduce): tile 2 sends from and receives into memory "
            "element 24 (hazard 2): transfer 1 source / transfer 0 destination");
}

TEST(CaptureHazard, EveryIterationsSourceCounts) {
  // Only the second iteration's source address lands in the received element.
  EXPECT_EQ(error_of(capture_yaml("0x63ff0", "0x6c000", "0x60010", 3)),
            "hz.yaml: phase 3 (layer.mlp.reduce): tile 2 sends from and receives into memory "
            "element 24 (hazard 2): transfer 1 source / transfer 0 destination");
}

TEST(CaptureHazard, InterleavedElementsAreThirtyTwoKiB) {
  // 0x80000 and 0x87ff0 share interleaved element 32; 0x88000 starts element 33.
  EXPECT_EQ(error_of(capture_yaml("0x87ff0", "0x80000", "0x80000", 3)),
            "hz.yaml: phase 3 (layer.mlp.reduce): tile 2 sends from and receives into memory "
            "element 32 (hazard 2): transfer 1 source / transfer 0 destination");
  EXPECT_EQ(error_of(capture_yaml("0x88000", "0x87ff0", "0x87ff0", 3)), "");
}

TEST(CaptureHazard, SpanStraddlingABoundaryCoversBothElements) {
  // 4 words from 0x63ff8 cover elements 24 and 25; the receive is in 25.
  EXPECT_EQ(error_of(capture_yaml("0x64100", "0x63ff8", "0x63ff8", 3)),
            "hz.yaml: phase 3 (layer.mlp.reduce): tile 2 sends from and receives into memory "
            "element 25 (hazard 2): transfer 1 source / transfer 0 destination");
}

TEST(CaptureHazard, NeighbouringElementsOrOtherPhasesAreFine) {
  EXPECT_EQ(error_of(capture_yaml("0x64000", "0x63ff0", "0x63ff0", 3)), "");
  // The same addresses in different phases: no hazard.
  EXPECT_EQ(error_of(capture_yaml("0x63ff0", "0x60000", "0x60000", 5)), "");
}

}  // namespace
}  // namespace lockstep::arch
