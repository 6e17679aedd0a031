// validate_capture names the phase, the transfer and the field of the first problem.
#include <gtest/gtest.h>

#include <functional>

#include "formats/capture.hpp"
#include "io/errors.hpp"

namespace lockstep::arch {
namespace {

MachineDescription machine16() {
  MachineDescription m;
  m.name = "ipu21-c600-t16";
  m.tiles = 16;
  return m;
}

Capture good() {
  Capture c;
  c.machine_name = "ipu21-c600-t16";
  CapturePhase p;
  p.id = 4;
  p.label = "layer.mlp.up";
  p.iterations = 2;
  p.execution_count = 27;
  Transfer t;
  t.source_tile = 1;
  t.source_addresses = {0x5c000, 0x5d000};
  t.destinations = {{2, 0xa0000}, {3, 0xe7ff0}};
  t.words = 4;
  p.transfers = {t, t};
  c.phases.push_back(p);
  return c;
}

std::string error_of(const Capture& c) {
  try {
    validate_capture(c, machine16(), "x.cap");
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

std::string error_after(const std::function<void(Capture&)>& change) {
  Capture c = good();
  change(c);
  return error_of(c);
}

TEST(CaptureValidate, AcceptsAGoodCapture) { EXPECT_EQ(error_of(good()), ""); }

TEST(CaptureValidate, NamesPhaseTransferAndField) {
  const std::string at = "x.cap: phase 4 (layer.mlp.up): transfer 1: ";
  EXPECT_EQ(error_after([](Capture& c) { c.phases[0].transfers[1].source_tile = 16; }),
            at + "source_tile: 16 is not a tile of ipu21-c600-t16 (16 tiles)");
  EXPECT_EQ(error_after([](Capture& c) { c.phases[0].transfers[1].words = 0; }), at + "words: must be at least 1");
  EXPECT_EQ(error_after([](Capture& c) { c.phases[0].transfers[1].words = 65537; }),
            at + "words: 65537 exceeds the limit of 65536");
  EXPECT_EQ(error_after([](Capture& c) { c.phases[0].transfers[1].source_addresses.pop_back(); }),
            at + "source_addresses: 1 addresses, expected one per iteration (2)");
  EXPECT_EQ(error_after([](Capture& c) { c.phases[0].transfers[1].source_addresses[1] = 0x5d002; }),
            at + "source_addresses[1]: 0x5d002 is not 4-aligned");
  EXPECT_EQ(error_after([](Capture& c) { c.phases[0].transfers[1].source_addresses[1] = 0x5bff8; }),
            at + "source_addresses[1]: span [0x5bff8, 0x5c008) overlaps the exchange-table range "
                 "[0x4c000, 0x5c000)");
  EXPECT_EQ(error_after([](Capture& c) { c.phases[0].transfers[1].destinations[1].address = 0xe7ff4; }),
            at + "destinations[1].address: span [0xe7ff4, 0xe8004) outside SRAM [0x4c000, 0xe8000)");
  EXPECT_EQ(error_after([](Capture& c) { c.phases[0].transfers[1].destinations[0].address = 0x40000; }),
            at + "destinations[0].address: span [0x40000, 0x40010) outside SRAM [0x4c000, 0xe8000)");
  EXPECT_EQ(error_after([](Capture& c) { c.phases[0].transfers[1].destinations[1].tile = 2; }),
            at + "destinations[1].tile: 2 repeats destinations[0]");
  EXPECT_EQ(error_after([](Capture& c) { c.phases[0].transfers[1].destinations[0].tile = 1; }),
            at + "destinations[0].tile: 1 is the source tile");
  EXPECT_EQ(error_after([](Capture& c) { c.phases[0].transfers[1].destinations[0].tile = 99; }),
            at + "destinations[0].tile: 99 is not a tile of ipu21-c600-t16 (16 tiles)");
  EXPECT_EQ(error_after([](Capture& c) { c.phases[0].transfers[1].destinations.clear(); }),
            at + "destinations: a transfer needs at least one");
}

TEST(CaptureValidate, PhaseRules) {
  EXPECT_EQ(error_after([](Capture& c) { c.phases.push_back(c.phases[0]); }),
            "x.cap: phase 4 (layer.mlp.up): id: 4 already used by the phase at index 0");
  EXPECT_EQ(error_after([](Capture& c) { c.phases[0].execution_count = 0; }),
            "x.cap: phase 4 (layer.mlp.up): execution_count: must be at least 1");
  EXPECT_EQ(error_after([](Capture& c) { c.phases[0].iterations = 0; }),
            "x.cap: phase 4 (layer.mlp.up): iterations: must be at least 1");
  EXPECT_EQ(error_after([](Capture& c) { c.phases[0].iterations = 3; }),
            "x.cap: phase 4 (layer.mlp.up): transfer 0: source_addresses: 2 addresses, expected "
            "one per iteration (3)");
}

TEST(CaptureValidate, LastIterationSpanMustFit) {
  // The whole walk counts, not just the first iteration.
  EXPECT_EQ(error_after([](Capture& c) {
              c.phases[0].transfers[0].source_addresses = {0xe7000, 0xe7ff8};
            }),
            "x.cap: phase 4 (layer.mlp.up): transfer 0: source_addresses[1]: span [0xe7ff8, "
            "0xe8008) outside SRAM [0x4c000, 0xe8000)");
}

}  // namespace
}  // namespace lockstep::arch
