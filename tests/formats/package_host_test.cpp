// Host phases and the host session: both package forms carry them, the YAML reader refuses what
// it does not know, and every host rule of validate_package has its exact message.
#include <gtest/gtest.h>

#include "arch/machine.hpp"
#include "formats/package.hpp"
#include "formats/package_io.hpp"
#include "io/errors.hpp"
#include "support/package_steps.hpp"
#include "support/test_support.hpp"

namespace lockstep::arch {
namespace {

const MachineDescription& machine() {
  static const MachineDescription m = load_machine("ipu21-c600-t16");
  return m;
}

HostCallSpec call_named(const std::string& name, uint32_t phases) {
  HostCallSpec c;
  c.name = name;
  c.phases = phases;
  return c;
}

Step host_step(std::vector<HostTransfer> transfers) { return Step{HostStep{std::move(transfers)}}; }

// point_to_point.yaml with a host phase before and after: the host writes tile 0's payload,
// then reads tile 1's received words.
Package host_package() {
  Package p = read_package(testing::source_path("tests/data/packages/point_to_point.yaml"));
  auto& t0 = p.tiles[0].steps;
  auto& t1 = p.tiles[1].steps;
  t0.insert(t0.begin(), host_step({{HostDirection::ToTile, 0x50180, 0x1000, 12}}));
  t0.push_back(host_step({}));
  t1.insert(t1.begin(), host_step({}));
  t1.push_back(host_step({{HostDirection::ToHost, 0x60000, 0x2000, 12}}));
  HostCallSpec run = call_named("run", 2);
  run.inputs = {{0x1000, 0, 12}};
  run.outputs = {{0x2000, 0, 12}};
  run.input_batch_ends = {1};
  run.output_batch_ends = {1};
  run.input_bindings = {"payload"};
  run.output_bindings = {"received"};
  p.host = {0x3000, 0, {run}};
  return p;
}

Package from_capnp(const std::string& bytes) {
  return read_package_from_bytes(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size(), "f");
}

std::string read_error(const std::string& yaml) {
  try {
    (void)parse_package_yaml(yaml, "p.yaml");
  } catch (const InputError& e) {
    return e.what();
  }
  return "(read)";
}

std::string error_of(const Package& p) {
  try {
    validate_package(p, machine(), "p.yaml");
  } catch (const InputError& e) {
    return e.what();
  }
  return "(valid)";
}

HostCallSpec& run_call(Package& p) { return p.host.calls[0]; }

using testing::step_of;

TEST(PackageHost, SurvivesBothFormsUnchanged) {
  const Package p = host_package();
  EXPECT_EQ(from_capnp(package_to_capnp_bytes(p)), p);
  const std::string yaml = package_to_yaml(p);
  EXPECT_EQ(parse_package_yaml(yaml, "h.yaml"), p) << yaml;
  EXPECT_EQ(package_to_yaml(from_capnp(package_to_capnp_bytes(parse_package_yaml(yaml, "h.yaml")))), yaml);
  const std::string capnp = package_to_capnp_bytes(p);
  EXPECT_EQ(package_to_capnp_bytes(parse_package_yaml(package_to_yaml(from_capnp(capnp)), "h.yaml")), capnp);
}

TEST(PackageHost, CanonicalYamlShape) {
  const std::string yaml = package_to_yaml(host_package());
  EXPECT_NE(yaml.find("    steps:\n      - host:\n          transfers:\n"
                      "            - {to: tile, tile_address: 0x50180, host_address: 0x1000, bytes: 12}\n"
                      "      - exchange:"),
            std::string::npos)
      << yaml;
  EXPECT_NE(yaml.find("      - host:\n          transfers: []\n"), std::string::npos) << yaml;
  EXPECT_NE(yaml.find("\nhost:\n  arena_bytes: 12288\n  command_address: 0x0\n  calls:\n"
                      "    - name: \"run\"\n      command: 0\n      phases: 2\n      inputs:\n"
                      "        - {host_address: 0x1000, file_offset: 0, bytes: 12}\n      outputs:\n"
                      "        - {host_address: 0x2000, file_offset: 0, bytes: 12}\n"
                      "      input_batch_ends: [1]\n      output_batch_ends: [1]\n"
                      "      input_bindings: [\"payload\"]\n      output_bindings: [\"received\"]\n"),
            std::string::npos)
      << yaml;
  EXPECT_NE(yaml.find("bytes: \"bf38d7fe9dc6460e\"}\nhost:\n"), std::string::npos) << yaml;
  EXPECT_TRUE(yaml.ends_with("      output_bindings: [\"received\"]\n")) << yaml;
}

TEST(PackageHost, NoHostSessionNoKey) {
  const Package p = read_package(testing::source_path("tests/data/packages/point_to_point.yaml"));
  EXPECT_EQ(p.host, HostSession{});
  EXPECT_EQ(package_to_yaml(p).find("host"), std::string::npos);
  Package only_command = p;
  only_command.host.command_address = 8;
  EXPECT_EQ(parse_package_yaml(package_to_yaml(only_command), "c.yaml"), only_command);
  EXPECT_EQ(from_capnp(package_to_capnp_bytes(only_command)), only_command);
}

TEST(PackageHost, HandWrittenYamlDefaults) {
  const std::string yaml = package_to_yaml(host_package());
  const std::string head = yaml.substr(0, yaml.find("\nhost:\n") + 1);
  const Package p = parse_package_yaml(head + "host: {arena_bytes: 0x3000, calls: [{name: run}]}\n", "p.yaml");
  EXPECT_EQ(p.host.command_address, 0u);
  ASSERT_EQ(p.host.calls.size(), 1u);
  EXPECT_EQ(p.host.calls[0], call_named("run", 0));
}

TEST(PackageHost, YamlRefusesUnknownKeysAndDirections) {
  const std::string yaml = package_to_yaml(host_package());
  auto with = [&](const std::string& from, const std::string& to) {
    std::string text = yaml;
    text.replace(text.find(from), from.size(), to);
    return read_error(text);
  };
  EXPECT_NE(with("{to: tile,", "{to: tiles,")
                .find("tiles[0].steps[0].host.transfers[0].to: unknown direction "
                      "'tiles' (expected tile or host)"),
            std::string::npos);
  EXPECT_NE(with("bytes: 12}\n      - exchange", "bytes: 12, size: 4}\n      - exchange")
                .find("tiles[0].steps[0].host.transfers[0].size: unknown key"),
            std::string::npos);
  EXPECT_NE(
      with("          transfers: []", "          transfers: []\n          sync: 1").find(".host.sync: unknown key"),
      std::string::npos);
  EXPECT_NE(with("  command_address: 0x0\n", "  command_address: 0x0\n  pages: 2\n").find("host.pages: unknown key"),
            std::string::npos);
  EXPECT_NE(with("      phases: 2\n", "      phases: 2\n      invocations: 1\n")
                .find("host.calls[0].invocations: unknown key"),
            std::string::npos);
  EXPECT_NE(with("file_offset: 0, bytes: 12}\n      outputs", "file_offset: 0, size: 12}\n      outputs")
                .find("host.calls[0].inputs[0].bytes: "),
            std::string::npos);
  EXPECT_NE(with("- host:\n          transfers: []", "- hostx: {}")
                .find("unknown step kind (expected sync, exchange, "
                      "kernel, repeat, patch or host)"),
            std::string::npos);
  EXPECT_NE(with("input_batch_ends: [1]", "input_batch_ends: [x]").find("host.calls[0].input_batch_ends[0]: "),
            std::string::npos);
}

TEST(PackageHost, CapnpRefusesAnUnknownDirection) {
  Package p = host_package();
  step_of<HostStep>(p, 0, {0}).transfers[0].direction = static_cast<HostDirection>(7);
  try {
    (void)from_capnp(package_to_capnp_bytes(p));
    ADD_FAILURE() << "read";
  } catch (const InputError& e) {
    EXPECT_STREQ(e.what(), "f: tile 0: step 0 (host): transfers[0].direction: 7 unknown");
  }
}

TEST(PackageHost, HostPackageIsValid) { EXPECT_EQ(error_of(host_package()), "(valid)"); }

TEST(PackageHost, HostPhaseOnlyAtTheTopLevel) {
  Package p = host_package();
  Step last = p.tiles[0].steps.back();
  p.tiles[0].steps.back() = Step{RepeatStep{1, {last}, {}}};
  EXPECT_EQ(error_of(p),
            "p.yaml: tile 0: step 3.0 (host): a host phase inside a Repeat (host phases run only at "
            "the top level)");
}

TEST(PackageHost, TransferSizeAndAlignment) {
  for (uint32_t bytes : {0u, 6u}) {
    Package p = host_package();
    step_of<HostStep>(p, 0, {0}).transfers[0].bytes = bytes;
    EXPECT_EQ(error_of(p), "p.yaml: tile 0: step 0 (host): transfers[0].bytes: " + std::to_string(bytes) +
                               " is not a positive multiple of 4");
  }
  Package p = host_package();
  step_of<HostStep>(p, 0, {0}).transfers[0].tile_address = 0x50182;
  EXPECT_EQ(error_of(p), "p.yaml: tile 0: step 0 (host): transfers[0].tile_address: 0x50182 is not 4-aligned");
  p = host_package();
  step_of<HostStep>(p, 1, {4}).transfers[0].host_address = 0x2001;
  EXPECT_EQ(error_of(p), "p.yaml: tile 1: step 4 (host): transfers[0].host_address: 0x2001 is not 4-aligned");
}

// Section 14: a host program sends its packets one way; a host-to-tile transfer outside the
// packet window goes through the 4 KiB staging buffer, clear of its own destination.
TEST(PackageHost, TransfersAreWhatAHostProgramsPacketsCanCarry) {
  Package p = host_package();
  step_of<HostStep>(p, 0, {0}).transfers[0].tile_address = 0x60000;  // staged, then copied
  EXPECT_EQ(error_of(p), "(valid)");
  p = host_package();
  step_of<HostStep>(p, 0, {0}).transfers[0].tile_address = 0x50184;  // not 32-aligned: staged onto itself
  EXPECT_EQ(error_of(p),
            "p.yaml: tile 0: step 0 (host): transfers: lands at 0x50184+12, where this step's staged "
            "bytes are (0x50180..0x5018c)");
  p = host_package();
  p.host.arena_bytes = 0x4000;
  step_of<HostStep>(p, 0, {0}).transfers[0] = {HostDirection::ToTile, 0x60000, 0x1000, 5000};
  EXPECT_EQ(error_of(p),
            "p.yaml: tile 0: step 0 (host): transfers: stages 5000 bytes through the 4096-byte "
            "staging buffer at 0x50180 (one 4 KiB chunk per tile and host phase)");
  p = host_package();
  step_of<HostStep>(p, 0, {0}).transfers.push_back({HostDirection::ToHost, 0x60000, 0x2000, 4});
  EXPECT_EQ(error_of(p),
            "p.yaml: tile 0: step 0 (host): transfers[1].to: goes the other way from transfers[0]: a "
            "host program moves data one way (IPU21-DEVICE.md 14)");
  // From tile memory to the host any 4-aligned address will do.
  p = host_package();
  step_of<HostStep>(p, 1, {4}).transfers[0].tile_address = 0x60004;
  EXPECT_EQ(error_of(p), "(valid)");
}

TEST(PackageHost, TransferRanges) {
  Package p = host_package();
  step_of<HostStep>(p, 0, {0}).transfers[0].tile_address = 0xe7ffc;
  EXPECT_EQ(error_of(p),
            "p.yaml: tile 0: step 0 (host): transfers[0].tile_address: [0xe7ffc, 0xe8008) outside "
            "SRAM [0x4c000, 0xe8000)");
  p = host_package();
  step_of<HostStep>(p, 1, {4}).transfers[0].host_address = 0x2ff8;
  EXPECT_EQ(error_of(p),
            "p.yaml: tile 1: step 4 (host): transfers[0].host_address: [0x2ff8, 0x3004) outside "
            "the host arena [0x0, 0x3000)");
}

TEST(PackageHost, EveryTileHasTheSameHostSteps) {
  Package p = host_package();
  p.tiles[1].steps.pop_back();
  EXPECT_EQ(error_of(p), "p.yaml: tile 1: steps: has 1 host steps but tile 0 has 2");
}

TEST(PackageHost, HostStepsAreBarriersInOrder) {
  Package p = host_package();
  std::swap(p.tiles[1].steps[0], p.tiles[1].steps[1]);
  EXPECT_EQ(error_of(p),
            "p.yaml: tile 1: step 0 (exchange): barrier 0 is exchange of phase 1 but tile 0 has host "
            "phase 0 (tile 0: step 0 (host))");
}

TEST(PackageHost, HostStepsNeedASession) {
  Package p = host_package();
  p.host.arena_bytes = 0;
  EXPECT_EQ(error_of(p), "p.yaml: host.arena_bytes: is 0 but the tiles have 2 host steps each");
  p = host_package();
  p.host.calls.clear();
  EXPECT_EQ(error_of(p), "p.yaml: host.calls: is empty but the tiles have 2 host steps each");
}

TEST(PackageHost, CommandWordInsideTheArena) {
  Package p = host_package();
  p.host.command_address = 0x2ffc;
  EXPECT_EQ(error_of(p), "(valid)");
  p.host.command_address = 0x3000;
  EXPECT_EQ(error_of(p), "p.yaml: host.command_address: [0x3000, 0x3004) outside the host arena [0x0, 0x3000)");
  p.host.command_address = 0x2;
  EXPECT_EQ(error_of(p), "p.yaml: host.command_address: 0x2 is not 4-aligned");
}

TEST(PackageHost, CallNamesNonEmptyAndUnique) {
  Package p = host_package();
  run_call(p).name = "";
  EXPECT_EQ(error_of(p), "p.yaml: host.calls[0]: name: is empty");
  p = host_package();
  HostCallSpec again = run_call(p);
  again.phases = 0;
  p.host.calls.push_back(again);
  EXPECT_EQ(error_of(p), "p.yaml: host.calls[1] ('run'): name: call name listed twice");
}

TEST(PackageHost, CallSlicesInsideTheArena) {
  Package p = host_package();
  run_call(p).inputs[0].host_address = 0x2ffc;
  EXPECT_EQ(error_of(p),
            "p.yaml: host.calls[0] ('run'): inputs[0].host_address: [0x2ffc, 0x3008) outside the host "
            "arena [0x0, 0x3000)");
  p = host_package();
  run_call(p).outputs[0].host_address = 0x3000;
  EXPECT_EQ(error_of(p),
            "p.yaml: host.calls[0] ('run'): outputs[0].host_address: [0x3000, 0x300c) outside the "
            "host arena [0x0, 0x3000)");
}

TEST(PackageHost, BatchEnds) {
  Package p = host_package();
  run_call(p).inputs = {{0x1000, 0, 8}, {0x1008, 8, 4}};
  run_call(p).input_batch_ends = {1, 1};
  EXPECT_EQ(error_of(p),
            "p.yaml: host.calls[0] ('run'): input_batch_ends[1]: 1 does not follow 1 (batch ends "
            "increase strictly from 0)");
  run_call(p).input_batch_ends = {1};
  EXPECT_EQ(error_of(p),
            "p.yaml: host.calls[0] ('run'): input_batch_ends: the last end is 1, not the call's 2 "
            "input slices");
  run_call(p).input_batch_ends = {1, 2};
  EXPECT_EQ(error_of(p), "(valid)");
  run_call(p).output_batch_ends.clear();
  EXPECT_EQ(error_of(p),
            "p.yaml: host.calls[0] ('run'): output_batch_ends: is empty but the call has 1 output "
            "slices");
  run_call(p).outputs.clear();
  EXPECT_EQ(error_of(p), "(valid)");
  run_call(p).output_batch_ends = {0};
  EXPECT_EQ(error_of(p),
            "p.yaml: host.calls[0] ('run'): output_batch_ends[0]: 0 does not follow 0 (batch ends "
            "increase strictly from 0)");
}

TEST(PackageHost, CallBindingsExistWithTheRightKind) {
  Package p = host_package();
  run_call(p).input_bindings = {"x"};
  EXPECT_EQ(error_of(p), "p.yaml: host.calls[0] ('run'): input_bindings[0]: no binding 'x'");
  p = host_package();
  run_call(p).input_bindings = {"received"};
  EXPECT_EQ(error_of(p),
            "p.yaml: host.calls[0] ('run'): input_bindings[0]: binding 'received' is an output, not "
            "an input or weight");
  p = host_package();
  run_call(p).output_bindings = {"payload"};
  EXPECT_EQ(error_of(p),
            "p.yaml: host.calls[0] ('run'): output_bindings[0]: binding 'payload' is an input, not an "
            "output");
}

TEST(PackageHost, SlicesInsideTheCallsFile) {
  Package p = host_package();
  run_call(p).inputs[0].file_offset = 4;
  EXPECT_EQ(error_of(p),
            "p.yaml: host.calls[0] ('run'): inputs[0].file_offset: 12 bytes at 4 reach past the input "
            "file's 12 bytes (its bindings' sizes added up)");
  p = host_package();
  run_call(p).outputs[0].file_offset = UINT64_MAX;
  EXPECT_EQ(error_of(p),
            "p.yaml: host.calls[0] ('run'): outputs[0].file_offset: 12 bytes at "
            "18446744073709551615 reach past the output file's 12 bytes (its bindings' sizes added up)");
  // The file is the bindings back to back: a weight after the payload makes it 20 bytes.
  p = host_package();
  p.bindings.push_back({"w", BindingKind::Weight, {{0, 0x61000, 4}, {0, 0x61008, 4}}, ElementType::Bytes, {}});
  run_call(p).input_bindings.push_back("w");
  run_call(p).inputs = {{0x1000, 0, 12}, {0x100c, 12, 8}};
  run_call(p).input_batch_ends = {2};
  EXPECT_EQ(error_of(p), "(valid)");
  run_call(p).inputs[1].file_offset = 16;
  EXPECT_EQ(error_of(p),
            "p.yaml: host.calls[0] ('run'): inputs[1].file_offset: 8 bytes at 16 reach past the input "
            "file's 20 bytes (its bindings' sizes added up)");
}

TEST(PackageHost, CallPhasesAddUpToTheHostSteps) {
  Package p = host_package();
  run_call(p).phases = 3;
  EXPECT_EQ(error_of(p), "p.yaml: host.calls: their phases add up to 3 but the tiles have 2 host steps each");
  p = read_package(testing::source_path("tests/data/packages/point_to_point.yaml"));
  p.host = {0x1000, 0, {call_named("run", 1)}};
  EXPECT_EQ(error_of(p), "p.yaml: host.calls: their phases add up to 1 but the tiles have 0 host steps each");
}

}  // namespace
}  // namespace lockstep::arch
