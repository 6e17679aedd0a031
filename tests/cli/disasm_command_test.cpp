// `lockstep disasm` and `lockstep machine` end to end.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "arch/machine.hpp"
#include "formats/package.hpp"
#include "support/test_support.hpp"

namespace lockstep::testing {
namespace {

TEST(DisasmCommand, PrintsOneInstructionPerLine) {
  const auto r = run_lockstep({"disasm", "--words", "41800003", "0x7fec0003", "f26c0802", "048d9000", "43a00000"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out,
            "     0  41800003           sync zone=3\n"
            "     4  7fec0003           send words=64 address=0x18000 sctl=3\n"
            "     8  f26c0802 048d9000  sendpicp words=20 address=0x18100 sctl=2 ps=0 xpic=0x123 "
            "(tile 291) xpic_paired=0 pic=0x19000\n"
            "    16  43a00000           br $m10\n");
}

TEST(DisasmCommand, JsonUsesTheSpecFieldNames) {
  const auto r = run_lockstep({"disasm", "--json", "--words", "40a00086", "64008640", "70e0c001", "40a00000",
                               "f26c0802", "048d9000", "43a00000"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  // sendpicp must sit at an even word index: the delay 1 before it keeps it there.
  ASSERT_EQ(j.size(), 6u);
  EXPECT_EQ(j[0], nlohmann::json::parse(R"({"offset":0,"words":["40a00086"],"op":"delay","fields":{"events":135}})"));
  EXPECT_EQ(j[1]["fields"], nlohmann::json::parse(R"({"events":3,"selector":0,"value":1600})"));
  EXPECT_EQ(j[2]["fields"], nlohmann::json::parse(R"({"words":200,"delta":0,"sctl":1})"));
  EXPECT_EQ(j[3]["fields"], nlohmann::json::parse(R"({"events":1})"));
  EXPECT_EQ(j[4]["offset"], 16);
  EXPECT_EQ(j[4]["words"], nlohmann::json::parse(R"(["f26c0802","048d9000"])"));
  EXPECT_EQ(j[4]["op"], "sendpicp");
  EXPECT_EQ(j[4]["fields"], nlohmann::json::parse(
                                R"({"words":20,"address":98560,"sctl":2,"ps":0,"xpic":291,
                                    "xpic_paired":0,"pic":102400})"));
  EXPECT_EQ(j[5], nlohmann::json::parse(R"({"offset":24,"words":["43a00000"],"op":"br","fields":{}})"));
}

TEST(DisasmCommand, BadWordsAreBadInputWithTheirOffset) {
  auto r = run_lockstep({"disasm", "--words", "41800003", "zz"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("byte offset 4"), std::string::npos) << r.err;
  r = run_lockstep({"disasm", "--words", "41800003", "40a00000", "7fe00001", "12345678"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("byte offset 12"), std::string::npos) << r.err;
  r = run_lockstep({"disasm", "--words", "41800003", "f26c0802", "048d9000"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("byte offset 4"), std::string::npos) << r.err;
  r = run_lockstep({"disasm", "--words", "123456789"});
  EXPECT_EQ(r.exit_code, 2);
  r = run_lockstep({"disasm"});
  EXPECT_EQ(r.exit_code, 2);
}

// IPU21-DEVICE.md 8.2: the active exchange step's supervisor words.
TEST(DisasmCommand, PrintsSupervisorWords) {
  const auto r = run_lockstep({"disasm", "--words", "19870000", "438080a4", "43f080a7", "18714000", "19800001",
                               "438080a6", "41800003", "18a18000", "22bbffe0", "01b8f001", "43000000", "43a00000"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out,
            "     0  19870000           setzi reg=$m8 immediate=0x70000\n"
            "     4  438080a4           put csr=0xa4 reg=$m8\n"
            "     8  43f080a7           put csr=0xa7 reg=$m15\n"
            "    12  18714000           call reg=$m7 target=0x50000\n"
            "    16  19800001           setzi reg=$m8 immediate=0x1\n"
            "    20  438080a6           put csr=0xa6 reg=$m8\n"
            "    24  41800003           sync zone=3\n"
            "    28  18a18000           call reg=$m10 target=0x60000\n"
            "    32  22bbffe0           add dest=$m11 source=$m11 immediate=-32\n"
            "    36  01b8f001           ld32 dest=$m8 base=$m11 index=$m15 offset=1\n"
            "    40  43000000           br reg=$m0\n"
            "    44  43a00000           br $m10\n");

  const auto j = run_lockstep({"disasm", "--json", "--words", "22bbffe0", "438080a4"});
  ASSERT_EQ(j.exit_code, 0) << j.err;
  EXPECT_EQ(nlohmann::json::parse(j.out)[0]["fields"],
            nlohmann::json::parse(R"({"dest":11,"source":11,"immediate":-32})"));
  EXPECT_EQ(nlohmann::json::parse(j.out)[1]["fields"], nlohmann::json::parse(R"({"csr":164,"reg":8})"));

  const auto help = run_lockstep({"disasm", "--help"});
  EXPECT_NE(help.out.find("supervisor words"), std::string::npos) << help.out;
}

// A package whose tile 1 holds a row for phase 2 inside a Repeat, and tile 0 is idle in it.
std::string write_test_package() {
  using namespace arch;
  const MachineDescription machine = load_machine("ipu21-c600-t16");
  Package p;
  p.machine_name = machine.name;
  p.machine_digest = machine.digest;
  p.phases.push_back(Phase{2, "test.phase", 2, "copy"});
  const std::vector<uint32_t> row = {0x40a00086, 0x78400001, 0xf26c0802, 0x048d9000, 0x43a00000, 0xdeadbeef};
  TileProgram t1;
  t1.tile = 1;
  Segment seg;
  seg.address = 0x4c000;
  seg.size = static_cast<uint32_t>(row.size() * 4);
  seg.fill = FillKind::Bytes;
  for (const uint32_t w : row) {
    for (int b = 0; b < 4; ++b) seg.bytes.push_back(static_cast<uint8_t>(w >> (8 * b)));
  }
  t1.segments.push_back(seg);
  t1.table = TableRegion{0x4c000, seg.size};
  ExchangeStep exchange;
  exchange.phase = 2;
  exchange.row_address = 0x4c000;
  RepeatStep repeat;
  repeat.count = 2;
  repeat.body.push_back(Step{exchange});
  t1.steps.push_back(Step{SyncStep{}});
  t1.steps.push_back(Step{repeat});
  // Tile 2's row holds a supervisor word: a row may not.
  TileProgram t2 = t1;
  t2.tile = 2;
  const std::vector<uint32_t> bad_row = {0x40a00086, 0x19870000, 0x43a00000, 0x00000000};
  t2.segments[0].bytes.clear();
  for (const uint32_t w : bad_row) {
    for (int b = 0; b < 4; ++b) t2.segments[0].bytes.push_back(static_cast<uint8_t>(w >> (8 * b)));
  }
  t2.segments[0].size = static_cast<uint32_t>(bad_row.size() * 4);
  t2.table = TableRegion{0x4c000, t2.segments[0].size};
  TileProgram t0;
  t0.tile = 0;
  ExchangeStep idle;
  idle.phase = 2;
  t0.steps.push_back(Step{idle});
  p.tiles = {t0, t1, t2};
  const std::string path = temp_dir("disasm_package") + "/package.yaml";
  write_package_yaml(p, path);
  return path;
}

TEST(DisasmCommand, ReadsARowOutOfAPackage) {
  const std::string path = write_test_package();
  auto r = run_lockstep({"disasm", path, "--tile", "1", "--phase", "2"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out,
            "# tile 1 phase 2: row at 0x0004c000, 20 bytes\n"
            "     0  40a00086           delay events=135\n"
            "     4  78400001           send words=3 address=0x0 sctl=1\n"
            "     8  f26c0802 048d9000  sendpicp words=20 address=0x18100 sctl=2 ps=0 xpic=0x123 "
            "(tile 291) xpic_paired=0 pic=0x19000\n"
            "    16  43a00000           br $m10\n");

  r = run_lockstep({"disasm", path, "--tile", "1", "--phase", "2", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  ASSERT_EQ(j.size(), 4u);
  EXPECT_EQ(j[1]["op"], "send");

  r = run_lockstep({"disasm", path, "--tile", "0", "--phase", "2", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "[]\n");

  r = run_lockstep({"disasm", path, "--tile", "2", "--phase", "2"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("byte offset 4: word 19870000: setzi is supervisor code"), std::string::npos) << r.err;

  r = run_lockstep({"disasm", path, "--tile", "1", "--phase", "3"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("phase 3"), std::string::npos) << r.err;
  r = run_lockstep({"disasm", path, "--tile", "5", "--phase", "2"});
  EXPECT_EQ(r.exit_code, 2);
  r = run_lockstep({"disasm", path, "--tile", "1"});
  EXPECT_EQ(r.exit_code, 2);
}

TEST(MachineCommand, PrintsTheDescriptionAndDigest) {
  const auto m = arch::load_machine("ipu21-c600-t16");
  auto r = run_lockstep({"machine", "ipu21-c600-t16"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out.rfind(arch::machine_to_yaml(m) + "digest: " + m.digest + "\n", 0), 0u) << r.out;

  r = run_lockstep({"machine", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["name"], "ipu21-c600");
  EXPECT_EQ(j["tiles"], 1472);
  EXPECT_EQ(j["memory"]["base"], 0x4c000);
  EXPECT_EQ(j["exchange"]["ttm_offset"], -34);
  EXPECT_EQ(j["digest"], arch::load_machine("ipu21-c600").digest);

  r = run_lockstep({"machine", source_path("tests/data/machines/unknown_key.yaml")});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("exchange.wire_delay: unknown key"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace lockstep::testing

namespace lockstep::testing {
namespace {

// The code the model executes for repeat27's receiver: runtime labels, the Repeat and the
// steps' sequences, every word listed in the JSON form decoding to what the text form shows.
TEST(DisasmCommand, ShowsATilesSupervisorCode) {
  const std::string path = std::string(LOCKSTEP_SOURCE_DIR) + "/tests/integration/packages/repeat27.yaml";
  auto r = run_lockstep({"disasm", path, "--tile", "1", "--code"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  for (const char* text :
       {"lockstep_patch_word:\n", "lockstep_kernel_checksum_2:  (intrinsic: the model's kernel checksum)",
        "; step: repeat x27", "sync zone=3    ; barrier of phase 1",
        "call reg=$m10 target=0x50000    ; the exchange row", "br reg=$m15    ; halt"}) {
    EXPECT_NE(r.out.find(text), std::string::npos) << text << "\n" << r.out;
  }
  r = run_lockstep({"disasm", path, "--tile", "1", "--code", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  ASSERT_GT(j.size(), 60u);
  EXPECT_EQ(j.back()["op"], "br");
  r = run_lockstep({"disasm", path, "--tile", "1", "--code", "--phase", "1"});
  EXPECT_EQ(r.exit_code, 2);
  r = run_lockstep({"disasm", path, "--tile", "7", "--code"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("tile 7: the package has no program for this tile"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace lockstep::testing
