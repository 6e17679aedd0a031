// `device import` and `run` of a stack-layout image whose program calls the IPU21 stack's
// kernels by symbol (IPU21-DEVICE.md 8.3 and 10, IPU21-KERNELS.md 4, 7, 8, 14.1): an F16 AMP
// GEMM in AMP-Left and Block-major layouts, the GeLU, the F16 reduction, a six-worker copy,
// bracketed by the runtime's cycle samples. The image is written word by word here; the
// expected outputs come from a plain reference of the documented numerics
// (tests/support/stack_image.hpp).
#include <gtest/gtest.h>

#include <filesystem>

#include "arch/instruction.hpp"
#include "arch/topology.hpp"
#include "sim/device/application.hpp"
#include "support/stack_image.hpp"
#include "support/test_support.hpp"

namespace lockstep::testing {
namespace {

constexpr uint32_t kStart = 0x4c018, kSample = 0x50080, kComplete = 0x500c0, kGemm = 0x50100, kGelu = 0x50140,
                   kReduce = 0x50180, kCopy = 0x501c0, kLinkedEnd = 0x50200, kProgram = 0x5c000;
constexpr uint32_t kLeft = 0x60000, kRight = 0x61000, kProduct = 0x62000, kGelued = 0x62200, kSum = 0x62400,
                   kRemote = 0x63000, kResult = 0x64000;

using namespace stack_image;
using Expected = KernelChain;
Expected reference() { return kernel_chain_reference(); }

arch::Application kernel_image(const Expected& e, const std::vector<uint32_t>& tile0_program) {
  const auto machine = arch::load_machine("ipu21-c600-t16");
  const arch::Topology topology(machine);
  arch::Application app;
  app.compiler_version = "ipu-stack (by hand, from IPU21-DEVICE.md)";
  for (const auto& [name, address] :
       std::vector<std::pair<std::string, uint32_t>>{{"ipu_stack_static_start", kStart},
                                                     {"ipu_stack_static_sample_cycle", kSample},
                                                     {"ipu_stack_static_complete", kComplete},
                                                     {kGemmSymbol, kGemm},
                                                     {"ipu_stack_gelu_tanh_approx_f16", kGelu},
                                                     {"ipu_stack_reduce_sum_f16", kReduce},
                                                     {"ipu_stack_copy_u64", kCopy}}) {
    app.debug_symbols.push_back({name, address});
  }
  app.debug_regions.push_back({arch::kDebugAllTiles, kStart, kLinkedEnd - kStart, "linked executable"});
  for (uint32_t logical = 0; logical < 16; ++logical) {
    const uint32_t physical = topology.physical(logical);
    arch::TileImage image;
    image.physical_tile = physical;
    image.entry_point = 0x4c010;
    image.diagnostic_address = 0x58000;
    image.segments.push_back(words(0x4c010, {setzi(0, kStart), 0x43000000u}, 5));
    arch::AppSegment linked;
    linked.address = kStart;
    linked.memory_size = kLinkedEnd - kStart;
    linked.flags = 5;
    image.segments.push_back(linked);
    std::vector<uint32_t> program = logical == 0 ? tile0_program : std::vector<uint32_t>{};
    program.push_back(setzi(0, kComplete));
    program.push_back(0x43000000u);
    image.segments.push_back(words(kProgram, program, 5));
    image.segments.push_back(words(0x58000, {0}, 3));
    image.segments.back().memory_size = 0x6e0;
    if (logical == 0) {
      image.segments.push_back(segment(kLeft, e.left, 1));
      image.segments.back().memory_size += 16;  // the GEMM's read-ahead tail
      image.segments.push_back(segment(kRight, e.right, 1));
      image.segments.push_back(segment(kRemote, e.remote, 1));
    }
    std::sort(image.segments.begin(), image.segments.end(),
              [](const arch::AppSegment& a, const arch::AppSegment& b) { return a.address < b.address; });
    app.debug_regions.push_back(
        {physical, kProgram, static_cast<uint32_t>(program.size() * 4), "generated tile program"});
    app.tiles.push_back(std::move(image));
  }
  std::sort(app.tiles.begin(), app.tiles.end(),
            [](const arch::TileImage& a, const arch::TileImage& b) { return a.physical_tile < b.physical_tile; });
  const uint32_t tile0 = topology.physical(0);
  app.outputs.push_back({"output.0", "f16", {kElements}, {{tile0, kResult, 0, 2 * kElements}}});
  app.outputs.push_back({"profile.start-cycle", "u32", {1}, {{tile0, 0x58004, 0, 4}}});
  app.outputs.push_back({"profile.end-cycle", "u32", {1}, {{tile0, 0x58008, 0, 4}}});
  app.entry_points.push_back({"run", 0, 0});
  return app;
}

// Section 8.3's compute steps, section 8.6's samples around them.
std::vector<uint32_t> kernel_program() {
  return {
      setzi(2, 0x58004),   call(10, kSample),                                         // start sample
      setzi(2, kProduct),  setzi(3, kLeft),    setzi(4, kRight),    call(10, kGemm),  // GEMM
      setzi(2, kGelued),   setzi(3, kProduct), setzi(4, kElements), call(10, kGelu),  // GeLU
      setzi(2, kSum),      setzi(3, kGelued),  setzi(4, kRemote),   setzi(5, 2),      // reduction
      setzi(6, kElements), call(10, kReduce),  setzi(2, kResult),   setzi(3, kSum),  setzi(4, kElements * 2 / 8 / 6),
      setzi(5, 0),                                                  // copy
      call(10, kCopy),     setzi(2, 0x58008),  call(10, kSample)};  // end sample
}

uint32_t u32_at(const std::string& bytes) {
  uint32_t v = 0;
  for (int b = 3; b >= 0; --b) v = v << 8 | static_cast<uint8_t>(bytes.at(b));
  return v;
}

TEST(DeviceStackKernels, KernelCallsRunTheModelOfEachSymbolBitForBit) {
  const std::string dir = temp_dir("stack_kernels");
  const std::string image = dir + "/stack.ipuexe", package = dir + "/stack.capnp";
  const Expected e = reference();
  arch::write_application(kernel_image(e, kernel_program()), image);
  auto r = run_lockstep({"device", "import", image, "--machine", "ipu21-c600-t16", "-o", package});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  r = run_lockstep({"run", package, "--output-dir", dir + "/out"});
  ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
  const std::string bytes = read_file(dir + "/out/output.0.bin");
  ASSERT_EQ(bytes.size(), 2u * kElements);
  for (uint32_t i = 0; i < kElements; ++i) {
    const uint16_t got =
        static_cast<uint16_t>(static_cast<uint8_t>(bytes[2 * i]) | static_cast<uint8_t>(bytes[2 * i + 1]) << 8);
    ASSERT_EQ(got, e.result[i]) << "element " << i;
  }
  // The samples are the simulated cycle counter: the four kernels' planner costs lie between.
  const uint32_t start = u32_at(read_file(dir + "/out/profile.start-cycle.bin"));
  const uint32_t end = u32_at(read_file(dir + "/out/profile.end-cycle.bin"));
  const uint32_t gemm = 294 + 4 * ((kColumns * kRows + 3) / 4 + (2 * 1063 + 3) / 4);  // 11.2, standard memory
  const uint32_t gelu = 10 * kElements + 11, reduce = 3 * 2 * kElements + 11, copy = 2 * kElements / 8 + 288;
  EXPECT_GT(start, 0u);
  EXPECT_GE(end - start, gemm + gelu + reduce + copy);
  EXPECT_LT(end - start, gemm + gelu + reduce + copy + 1000);
}

uint32_t memory_op(arch::Opcode op, uint32_t reg, uint32_t slot) {  // $m11 + 4 slot
  arch::Instruction in;
  in.op = op;
  (op == arch::Opcode::Ld32 ? in.dest : in.source) = reg;
  in.base = 11;
  in.index = 15;
  in.offset = slot;
  return arch::encode(in).at(0);
}
uint32_t ld32(uint32_t dest, uint32_t slot) { return memory_op(arch::Opcode::Ld32, dest, slot); }
uint32_t st32(uint32_t source, uint32_t slot) { return memory_op(arch::Opcode::St32, source, slot); }
uint32_t add(uint32_t reg, int32_t k) {
  arch::Instruction in;
  in.op = arch::Opcode::Add;
  in.dest = reg;
  in.source = reg;
  in.immediate = k;
  return arch::encode(in).at(0);
}

// Section 8.4's Repeat (one pointer, frame 8 bytes) of two GeLU calls whose operands are the
// pointer (8.3's repeat-pointer address: `ld32` of its slot, then `add` of an offset): each
// iteration turns the next 96 halves at 0x62000 into their GeLU 0x200 bytes further on.
TEST(DeviceStackKernels, RepeatPointerOperandsWithAnOffsetFollowThePointer) {
  const std::string dir = temp_dir("stack_kernels_pointer");
  const std::string image = dir + "/stack.ipuexe", package = dir + "/stack.capnp";
  constexpr uint32_t kLoop = kProgram + 4 * 5, kDone = kProgram + 4 * 19;
  arch::Instruction brz;
  brz.op = arch::Opcode::Brz;
  brz.reg = 0;
  brz.target = kDone;
  const std::vector<uint32_t> program = {
      add(11, -8),   setzi(0, 2), st32(0, 0),   setzi(0, kProduct),      st32(0, 1),      ld32(2, 1),
      add(2, 0x200), ld32(3, 1),  setzi(4, 96), call(10, kGelu),  // loop: GeLU
      ld32(0, 1),    add(0, 192), st32(0, 1),                     // the pointer advances
      ld32(0, 0),    add(0, -1),  st32(0, 0),   arch::encode(brz).at(0), setzi(0, kLoop), 0x43000000u /* br $m0 */,
      add(11, 8)};
  ASSERT_EQ(program.size(), 20u);
  auto app = kernel_image(reference(), program);
  const std::vector<uint16_t> input = random_halves(192, 9);
  for (arch::TileImage& t : app.tiles) {
    if (t.physical_tile != 0) continue;
    t.segments.push_back(segment(kProduct, input, 1));
    std::sort(t.segments.begin(), t.segments.end(),
              [](const arch::AppSegment& a, const arch::AppSegment& b) { return a.address < b.address; });
  }
  app.outputs.push_back({"gelu", "f16", {192}, {{0, kProduct + 0x200, 0, 384}}});
  arch::write_application(app, image);
  auto r = run_lockstep({"device", "import", image, "--machine", "ipu21-c600-t16", "-o", package});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  r = run_lockstep({"run", package, "--output-dir", dir + "/out"});
  ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
  const std::string bytes = read_file(dir + "/out/gelu.bin");
  ASSERT_EQ(bytes.size(), 384u);
  for (uint32_t i = 0; i < 192; ++i) {
    const uint16_t got =
        static_cast<uint16_t>(static_cast<uint8_t>(bytes[2 * i]) | static_cast<uint8_t>(bytes[2 * i + 1]) << 8);
    ASSERT_EQ(got, gelu_reference(input[i])) << "element " << i;
  }
}

TEST(DeviceStackKernels, AnUnknownSymbolIsRefusedNamingTileAddressAndSymbol) {
  const std::string dir = temp_dir("stack_kernels_unknown");
  const std::string image = dir + "/stack.ipuexe";
  auto app = kernel_image(reference(), {setzi(2, kProduct), setzi(3, kLeft), call(10, 0x501f0)});
  app.debug_symbols.push_back({"ipu_stack_frobnicate_f16", 0x501f0});
  arch::write_application(app, image);
  const auto r = run_lockstep({"device", "import", image, "--machine", "ipu21-c600-t16", "-o", dir + "/p.capnp"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("tile 0 (physical 0): address 0x5c000: word 0x19262000: not code Lockstep "
                       "can execute (a call of "
                       "ipu_stack_frobnicate_f16: no kernel of the IPU21 stack by that name"),
            std::string::npos)
      << r.err;
  EXPECT_FALSE(std::filesystem::exists(dir + "/p.capnp"));
}

TEST(DeviceStackKernels, TheDeclaredF8GemmIsRefusedWithTheReason) {
  const std::string dir = temp_dir("stack_kernels_f8");
  const std::string image = dir + "/stack.ipuexe";
  auto app = kernel_image(reference(), {setzi(2, kProduct), setzi(3, kLeft), setzi(4, kRight),
                                        setzi(5, 0xfffffffc & 0xfffff), call(10, 0x501f0)});
  app.debug_symbols.push_back({"ipu_stack_gemm_f8_init", 0x501f0});
  arch::write_application(app, image);
  const auto r = run_lockstep({"device", "import", image, "--machine", "ipu21-c600-t16", "-o", dir + "/p.capnp"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("ipu_stack_gemm_f8_init is declared without device code"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace lockstep::testing
