// `lockstep run` on the hand-written packages of tests/integration/packages: every clean
// package proves its own payload through expectations; every hazard package must stop
// with its class. Cycle counts asserted here were computed by hand (see each comment).
#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <sstream>

#include "support/test_support.hpp"

namespace lockstep::testing {
namespace {

using testing::integration_package;

nlohmann::json run_json(const std::string& name) {
  const auto r = run_lockstep({"run", integration_package(name), "--json"});
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  return nlohmann::json::parse(r.out);
}

class CleanPackage : public ::testing::TestWithParam<std::string> {};

TEST_P(CleanPackage, RunsWithoutHazardsAndMeetsItsExpectations) {
  const auto r = run_lockstep({"run", integration_package(GetParam())});
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("\nok\n"), std::string::npos) << r.out;
}

INSTANTIATE_TEST_SUITE_P(Packages, CleanPackage,
                         ::testing::Values("p2p_1w", "p2p_3w", "p2p_64w", "p2p_300w", "p2p_far", "section9_a",
                                           "section9_b", "section9_c", "section9_d", "multicast", "paired",
                                           "back_to_back", "repeat27"),
                         [](const auto& info) { return info.param; });

struct HazardCase {
  std::string package;
  std::string kind;
  uint32_t exception = 0;  // what the chip would raise (IPU21-DEVICE.md 16); 0: nothing
  uint32_t receive_error = 0;
};

class HazardPackage : public ::testing::TestWithParam<HazardCase> {};

TEST_P(HazardPackage, StopsWithItsClass) {
  const auto r = run_lockstep({"run", integration_package(GetParam().package)});
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_NE(r.out.find("hazard " + GetParam().kind + ":"), std::string::npos) << r.out;
}

TEST_P(HazardPackage, JsonNamesTheClassFirst) {
  const auto r = run_lockstep({"run", integration_package(GetParam().package), "--json", "--keep-going"});
  EXPECT_EQ(r.exit_code, 1) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  bool found = false;
  for (const auto& h : j["hazards"]) {
    if (h["kind"] != GetParam().kind || found) continue;
    found = true;
    // The class as the chip reports it (docs/device.md, "Hazards as the chip reports them").
    if (GetParam().exception == 0) {
      EXPECT_TRUE(h["chip"].is_null()) << h.dump();
    } else {
      EXPECT_EQ(h["chip"]["exception"], GetParam().exception) << h.dump();
      EXPECT_EQ(h["chip"]["receive_error"], GetParam().receive_error) << h.dump();
    }
  }
  EXPECT_TRUE(found) << r.out;
  EXPECT_FALSE(j["ok"].get<bool>());
}

INSTANTIATE_TEST_SUITE_P(Packages, HazardPackage,
                         ::testing::Values(HazardCase{"hazard_row_fetch_conflict", "row-fetch-conflict", 13, 2},
                                           HazardCase{"hazard_send_receive_conflict", "send-receive-conflict", 6, 0},
                                           HazardCase{"hazard_instruction_access", "instruction-access", 13, 1},
                                           HazardCase{"hazard_write_out_of_range", "write-out-of-range", 13, 3},
                                           HazardCase{"hazard_mux_left_open", "mux-left-open"},
                                           HazardCase{"hazard_no_pointer", "no-pointer"},
                                           HazardCase{"hazard_overlapping_receives", "overlapping-receives"},
                                           HazardCase{"hazard_control_at_message_start", "control-at-message-start"},
                                           HazardCase{"hazard_paired", "paired", 7, 0},
                                           HazardCase{"hazard_encoding", "encoding", 12, 0},
                                           HazardCase{"hazard_stream_conflict", "stream-conflict"},
                                           HazardCase{"hazard_double_write", "double-write"}),
                         [](const auto& info) { return info.param.package; });

// Section 9 vector A on the full chip: both tiles spend 9 supervisor instructions (54
// cycles) before the sync, the barrier releases 30 cycles later at 84, and the receive
// row ends at event 173 (the spec's trace), so the run ends at 84 + 173 = 257.
TEST(Cycles, Section9VectorA) {
  const auto j = run_json("section9_a");
  EXPECT_EQ(j["total_cycles"], 257);
  ASSERT_EQ(j["executions"].size(), 1u);
  EXPECT_EQ(j["executions"][0]["release_cycle"], 84);
  EXPECT_EQ(j["executions"][0]["horizon"], 173);
}

// --exchange-detail FILE: one JSON line per phase execution.
std::vector<nlohmann::json> detail_lines(const std::string& name) {
  const std::string file = temp_dir("exchange_detail") + "/" + name + ".jsonl";
  const auto r = run_lockstep({"run", integration_package(name), "--json", "--exchange-detail", file});
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_FALSE(nlohmann::json::parse(r.out)["executions"][0].contains("tiles"));  // the summary stays small
  std::vector<nlohmann::json> lines;
  std::istringstream in(read_file(file));
  for (std::string line; std::getline(in, line);) lines.push_back(nlohmann::json::parse(line));
  return lines;
}

// --exchange-detail lists every tile's row end and received runs with their first and last
// write events, so a schedule can be held against a device trace: vector A writes at 165..167.
TEST(Cycles, ExchangeDetailGivesRowEndsAndWriteEventsPerTile) {
  const auto lines = detail_lines("section9_a");
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_EQ(lines[0]["release_cycle"], 84);
  const auto& tiles = lines[0]["tiles"];
  ASSERT_EQ(tiles.size(), 2u);
  EXPECT_EQ(tiles[0]["tile"], 0);
  EXPECT_EQ(tiles[0]["row_end"], 138);
  EXPECT_TRUE(tiles[0]["received"].empty());
  EXPECT_EQ(tiles[1]["tile"], 1286);
  EXPECT_EQ(tiles[1]["row_end"], 173);
  ASSERT_EQ(tiles[1]["received"].size(), 1u);
  const auto& run = tiles[1]["received"][0];
  EXPECT_EQ(run["from_tile"], 0);
  EXPECT_EQ(run["address"], 0x70000);
  EXPECT_EQ(run["source_address"], 0x60000);
  EXPECT_EQ(run["bytes"], 12);
  EXPECT_EQ(run["first_write_event"], 165);
  EXPECT_EQ(run["last_write_event"], 167);
  // Vector D: a send and a sendoff land as one run of 4148 words, 165..4312.
  const auto d = detail_lines("section9_d")[0]["tiles"][0]["received"];  // L32 -> L0
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[0]["bytes"], 4148 * 4);
  EXPECT_EQ(d[0]["first_write_event"], 165);
  EXPECT_EQ(d[0]["last_write_event"], 4312);
}

// Receiver row ends 6 events after the last write: B 230, C 235, D 4318 (spec's trace).
TEST(Cycles, Section9VectorsBCD) {
  EXPECT_EQ(run_json("section9_b")["executions"][0]["horizon"], 230);
  EXPECT_EQ(run_json("section9_c")["executions"][0]["horizon"], 235);
  EXPECT_EQ(run_json("section9_d")["executions"][0]["horizon"], 4318);
}

// L0 -> L1, 3 words: ttm = -28 so the send issues at 28 and word 0 reaches the mux at 1;
// writes at 53..55 (W = 52), the row ends at 61; total 84 + 61.
TEST(Cycles, PointToPointThreeWords) {
  const auto j = run_json("p2p_3w");
  EXPECT_EQ(j["executions"][0]["horizon"], 61);
  EXPECT_EQ(j["total_cycles"], 145);
}

// Repeat of 27, as machine code (docs/timing.md, "Supervisor code"; 6 cycles an
// instruction). The receiver arrives last: Repeat entry 54 (frame 3 + two pointer slots
// 3 each), patch_word 48 (4 + 4 in the helper), exchange setup 54 (8 + sync 3) -> first
// arrival at 156, release at 186. Its loop sets the period: row 62 events; checksum 36
// (two indirect operands 2 each, one setzi, the call) + 18 (launch) + 228 (16 bytes);
// loop overhead 84 (two pointers 4 each, counter and branch 6); patch 48; setup 54;
// barrier 30 = 560. The last release is at 186 + 26 * 560 = 14746; the receiver ends at
// 14746 + 62 + 282 + 78 (last loop overhead: 8 + 4 + the frame pop) = 15168.
TEST(Cycles, Repeat27) {
  const auto j = run_json("repeat27");
  ASSERT_EQ(j["executions"].size(), 27u);
  for (size_t k = 0; k < 27; ++k) {
    EXPECT_EQ(j["executions"][k]["iteration"], k);
    EXPECT_EQ(j["executions"][k]["release_cycle"], 186 + 560 * k);
    EXPECT_EQ(j["executions"][k]["horizon"], 62);
  }
  EXPECT_EQ(j["total_cycles"], 15168);
}

TEST(RunCommand, WritesOutputBindingsAndRejectsBadInput) {
  const std::string dir = temp_dir("run_command");
  const std::string yaml = read_file(integration_package("p2p_3w")) +
                           "bindings:\n"
                           "  - {name: received, kind: output, slices: [{tile: 1, address: 0x70000, bytes: 12}]}\n"
                           "  - {name: source, kind: input, slices: [{tile: 0, address: 0x60000, bytes: 12}]}\n";
  // Bindings must come before expectations in the file only by taste; YAML maps are unordered.
  const std::string path = dir + "/bound.yaml";
  write_file(path, yaml);
  auto r = run_lockstep({"run", path, "--output-dir", dir});
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_EQ(read_file(dir + "/received.bin").size(), 12u);

  write_file(dir + "/in.bin", std::string(12, '\x01'));
  r = run_lockstep({"run", path, "--input", "source=" + dir + "/in.bin"});
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;  // the tokens the package expects are overwritten
  EXPECT_NE(r.out.find("expectation failed: tile 1 address 0x70000: expected 00800140"), std::string::npos) << r.out;

  write_file(dir + "/short.bin", std::string(8, '\x01'));
  EXPECT_EQ(run_lockstep({"run", path, "--input", "source=" + dir + "/short.bin"}).exit_code, 2);
  EXPECT_EQ(run_lockstep({"run", path, "--input", "nothing=" + dir + "/in.bin"}).exit_code, 2);
  EXPECT_EQ(run_lockstep({"run", path, "--input", "source=" + dir + "/missing.bin"}).exit_code, 2);
  EXPECT_EQ(run_lockstep({"run", dir + "/no-such-package.yaml"}).exit_code, 2);
}

// A binding's name is escaped to one file name: "../../escaped" and "a/b" stay inside the
// folder (security: a name used as a path once wrote next to it).
TEST(RunCommand, OutputDirKeepsEveryBindingNameInsideTheFolder) {
  const std::string dir = temp_dir("run_output_names");
  const std::string yaml = read_file(integration_package("p2p_3w")) +
                           "bindings:\n"
                           "  - {name: ../../escaped, kind: output, slices: [{tile: 1, address: 0x70000, bytes: 12}]}\n"
                           "  - {name: a/b, kind: output, slices: [{tile: 1, address: 0x70000, bytes: 4}]}\n";
  const std::string path = dir + "/names.yaml";
  write_file(path, yaml);
  const std::string out = dir + "/out/inner";
  std::filesystem::create_directory(dir + "/out");  // folder outputs are made one level deep
  const auto r = run_lockstep({"run", path, "--output-dir", out});
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_EQ(read_file(out + "/%2E.%2F..%2Fescaped.bin").size(), 12u);
  EXPECT_EQ(read_file(out + "/a%2Fb.bin").size(), 4u);
  EXPECT_FALSE(std::filesystem::exists(dir + "/escaped.bin"));
  EXPECT_FALSE(std::filesystem::exists(dir + "/out/escaped.bin"));
  size_t files = 0;
  for ([[maybe_unused]] const auto& e : std::filesystem::directory_iterator(out)) ++files;
  EXPECT_EQ(files, 2u);
}

}  // namespace
}  // namespace lockstep::testing

namespace lockstep::testing {
namespace {

// The base of a tile's supervisor code area, from `disasm --code`'s header line.
uint32_t code_base(const std::string& package_path, uint32_t tile) {
  const auto r = run_lockstep({"disasm", package_path, "--tile", std::to_string(tile), "--code"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  const size_t at = r.out.find("supervisor code at 0x");
  EXPECT_NE(at, std::string::npos) << r.out;
  return static_cast<uint32_t>(std::stoul(r.out.substr(at + 21, 8), nullptr, 16));
}

bool has_code_hazard(const std::string& package_path, const std::string& detail) {
  const auto r = run_lockstep({"run", package_path, "--json", "--keep-going"});
  EXPECT_EQ(r.exit_code, 1) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  for (const auto& h : j["hazards"]) {
    if (h["kind"] == "instruction-access" && h["detail"].get<std::string>().find(detail) != std::string::npos)
      return true;
  }
  ADD_FAILURE() << r.out;
  return false;
}

std::string hex_text(uint32_t v) {
  char text[16];
  std::snprintf(text, sizeof text, "0x%x", v);
  return text;
}

// Receives and kernel operands are known only at run time; one that lands on the code a
// tile executes is reported (docs/supervisor-code.md, placement).
TEST(SupervisorCodeArea, AReceiveOrAKernelOnTheCodeIsAHazard) {
  const std::string dir = temp_dir("code_area");
  const std::string original = read_file(integration_package("p2p_3w"));
  const std::string path = dir + "/p2p.yaml";
  write_file(path, original);
  const uint32_t base = code_base(path, 1);
  std::string yaml = original;
  const std::string from = "incoming_base: 0x70000";
  yaml.replace(yaml.find(from), from.size(), "incoming_base: " + hex_text(base + 8));
  write_file(path, yaml);
  EXPECT_TRUE(has_code_hazard(path, "land in the tile's supervisor code area"));

  // Tile 1 fills 16 bytes through a pointer that holds an address inside its code.
  yaml = original;
  const std::string steps = "      - exchange: {phase: 1, row: 0x50000, incoming_base: 0x70000}\n";
  yaml.replace(yaml.find(steps), steps.size(),
               steps + "      - kernel: {name: fill, operands: [{pointer: 0x68000}], scalars: [16, 0]}\n");
  const std::string segment = "      - {address: 0x50000, words: [64000000, 64008640, 61800000, 40a00007, 43a00000]}\n";
  yaml.replace(yaml.find(segment), segment.size(), segment + "      - {address: 0x68000, words: [12345678]}\n");
  write_file(path, yaml);
  const uint32_t kernel_base = code_base(path, 1);
  char word[16];
  std::snprintf(word, sizeof word, "%08x", kernel_base + 16);
  yaml.replace(yaml.find("12345678"), 8, word);
  write_file(path, yaml);
  EXPECT_TRUE(has_code_hazard(path, "overlaps the supervisor code area"));
}

}  // namespace
}  // namespace lockstep::testing
