// The IPU21 stack's data-movement kernels by symbol (model/kernels/stack_copy.cpp and
// stack_layout.cpp) run on a tile's SRAM and compared bit for bit with plain references written
// here from IPU21-KERNELS.md 2, 14.1 and 14.5: the byte and element formulas are written out
// again (no arch::*_index), copies are word loops. Fixed seeds.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "arch/kernel_signatures.hpp"
#include "arch/machine.hpp"
#include "model/kernel_registry.hpp"
#include "model/sram.hpp"
#include "tests/model/kernel_harness.hpp"

namespace lockstep::model {
namespace {

using Bytes = std::vector<uint8_t>;
using Scalars = std::vector<int64_t>;

using kernel_harness::cycles;
using kernel_harness::kEnd;
using kernel_harness::kernel;
using kernel_harness::machine;
using kernel_harness::run;

constexpr uint32_t kOut = 0x50000, kIn = 0x80000;

Bytes random_bytes(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  Bytes b(n);
  for (auto& x : b) x = static_cast<uint8_t>(rng());
  return b;
}

void put(Sram& m, uint32_t address, const Bytes& b) {
  if (!b.empty()) m.write(address, static_cast<uint32_t>(b.size()), b.data());
}

Bytes get(const Sram& m, uint32_t address, size_t n) {
  Bytes b(n);
  if (n != 0) m.read(address, static_cast<uint32_t>(n), b.data());
  return b;
}

// "" when the signature accepts the scalars, else its message.
std::string signature_error(const std::string& symbol, const Scalars& scalars) {
  const arch::KernelSignature* s = arch::find_kernel_signature(symbol);
  if (s == nullptr) return "no signature";
  return s->check_scalars(scalars, kEnd - 0x4c000);
}

void expect_one_line_error(const std::string& error, const std::string& part) {
  EXPECT_NE(error.find(part), std::string::npos) << error;
  EXPECT_EQ(error.find('\n'), std::string::npos) << error;
}

template <typename F>
std::string thrown_out_of_range(F f) {
  try {
    f();
  } catch (const std::out_of_range& e) {
    return e.what();
  }
  return "nothing thrown";
}

// --- copies and fill (14.1) ------------------------------------------------------------------

// A copy as ascending `word`-byte loads and stores over a byte image of SRAM from `base`.
void reference_copy(Bytes& image, uint32_t base, uint32_t dst, uint32_t src, size_t bytes, size_t word) {
  for (size_t i = 0; i < bytes; i += word) {
    for (size_t j = 0; j < word; ++j) image[dst - base + i + j] = image[src - base + i + j];
  }
}

TEST(StackCopy, CopyU64CopiesTheSixWorkerSharesWithRemainderZeroAndFive) {
  for (const Scalars& s : {Scalars{3, 0}, Scalars{3, 5}, Scalars{0, 5}, Scalars{10, 1}}) {
    const size_t bytes = 8 * (6 * s[0] + s[1]);
    Sram m(machine());
    const Bytes src = random_bytes(bytes, 1), before = random_bytes(bytes + 16, 2);
    put(m, kIn, src);
    put(m, kOut - 8, before);
    run("ipu_stack_copy_u64", {kOut, kIn}, s, m);
    EXPECT_EQ(get(m, kOut, bytes), src) << s[0] << " " << s[1];
    EXPECT_EQ(get(m, kOut - 8, 8), Bytes(before.begin(), before.begin() + 8));
    EXPECT_EQ(get(m, kOut + bytes, 8), Bytes(before.end() - 8, before.end()));
  }
}

TEST(StackCopy, OverlappingCopyU64IsAscendingWordsOneAfterAnother) {
  for (const int64_t shift : {16, -8, 0}) {  // destination above, below, equal to the source
    Sram m(machine());
    const uint32_t base = kIn - 64, src = kIn, dst = static_cast<uint32_t>(kIn + shift);
    Bytes image = random_bytes(512, 3);
    put(m, base, image);
    run("ipu_stack_copy_u64", {dst, src}, {4, 5}, m);  // 29 words
    reference_copy(image, base, dst, src, 8 * 29, 8);
    EXPECT_EQ(get(m, base, 512), image) << shift;
  }
}

TEST(StackCopy, CopyStridedU64CopiesRowsAndLeavesTheGaps) {
  struct Case {
    int64_t words, rows, src_stride, dst_stride;
  };
  for (const Case c : {Case{3, 5, 40, 64}, Case{1, 7, 8, 24}, Case{2, 1, 0, 0}, Case{4, 3, 32, 48}}) {
    Sram m(machine());
    Bytes src_image = random_bytes(1024, 4), dst_image = random_bytes(1024, 5);
    put(m, kIn, src_image);
    put(m, kOut, dst_image);
    run("ipu_stack_copy_strided_u64", {kOut, kIn}, {c.words, c.rows, c.src_stride, c.dst_stride}, m);
    for (int64_t r = 0; r < c.rows; ++r) {
      for (int64_t b = 0; b < 8 * c.words; ++b) dst_image[r * c.dst_stride + b] = src_image[r * c.src_stride + b];
    }
    EXPECT_EQ(get(m, kOut, 1024), dst_image) << c.words << " x " << c.rows;
    EXPECT_EQ(get(m, kIn, 1024), src_image);
  }
}

TEST(StackCopy, StaticCopyU32CopiesWordsAndZeroWordsChangesNothing) {
  for (const int64_t words : {0, 1, 13}) {
    Sram m(machine());
    const Bytes src = random_bytes(64, 6), dst = random_bytes(64, 7);
    put(m, kIn, src);
    put(m, kOut, dst);
    run("ipu_stack_static_copy_u32", {kOut + 4, kIn + 12}, {words}, m);
    Bytes expected = dst;
    std::memcpy(expected.data() + 4, src.data() + 12, 4 * words);
    EXPECT_EQ(get(m, kOut, 64), expected) << words;
  }
}

TEST(StackCopy, StaticCopyU16CopiesHalfwordsAtHalfwordAlignment) {
  for (const int64_t halfwords : {1, 7, 30}) {
    Sram m(machine());
    const Bytes src = random_bytes(128, 8), dst = random_bytes(128, 9);
    put(m, kIn, src);
    put(m, kOut, dst);
    run("ipu_stack_static_copy_u16", {kOut + 6, kIn + 2}, {halfwords}, m);
    Bytes expected = dst;
    std::memcpy(expected.data() + 6, src.data() + 2, 2 * halfwords);
    EXPECT_EQ(get(m, kOut, 128), expected) << halfwords;
  }
}

TEST(StackCopy, FillZeroU64ZeroesExactlyItsBytes) {
  for (const Scalars& s : {Scalars{2, 0}, Scalars{2, 5}, Scalars{0, 1}}) {
    const size_t bytes = 8 * (6 * s[0] + s[1]);
    Sram m(machine());
    const Bytes image = random_bytes(bytes + 16, 10);
    put(m, kOut - 8, image);
    run("ipu_stack_fill_zero_u64", {kOut}, s, m);
    Bytes expected = image;
    std::fill(expected.begin() + 8, expected.begin() + 8 + bytes, uint8_t{0});
    EXPECT_EQ(get(m, kOut - 8, bytes + 16), expected) << s[0] << " " << s[1];
  }
}

TEST(StackCopy, CyclesAreTheLocalCopyAndPaddingClearFormulas) {
  // Local copy: ceil(bytes / 8) + 288; padding clear: ceil(bytes / 48) + 11
  // (IPU21-KERNELS.md 14.8).
  EXPECT_EQ(cycles("ipu_stack_copy_u64", {3, 5}), 23u + 288);  // 184 bytes
  EXPECT_EQ(cycles("ipu_stack_copy_u64", {0, 0}), 288u);
  EXPECT_EQ(cycles("ipu_stack_copy_strided_u64", {3, 5, 40, 64}), 15u + 288);
  EXPECT_EQ(cycles("ipu_stack_static_copy_u32", {0}), 288u);
  EXPECT_EQ(cycles("ipu_stack_static_copy_u32", {5}), 3u + 288);  // 20 bytes
  EXPECT_EQ(cycles("ipu_stack_static_copy_u16", {3}), 1u + 288);  // 6 bytes
  EXPECT_EQ(cycles("ipu_stack_fill_zero_u64", {2, 5}), 3u + 11);  // 136 bytes
  EXPECT_EQ(cycles("ipu_stack_fill_zero_u64", {1, 0}), 1u + 11);  // 48 bytes
}

TEST(StackCopy, MisalignedOperandIsRefusedNamingTheOperandAndAlignment) {
  Sram m(machine());
  const Bytes image = random_bytes(256, 11);
  put(m, kOut, image);
  const auto refused = [&](const std::string& symbol, std::vector<uint32_t> operands, const Scalars& s) {
    return thrown_out_of_range([&] { run(symbol, operands, s, m); });
  };
  std::string e = refused("ipu_stack_copy_u64", {kOut + 4, kIn}, {1, 0});
  EXPECT_NE(e.find("operands[0]"), std::string::npos) << e;
  EXPECT_NE(e.find("8-byte aligned"), std::string::npos) << e;
  e = refused("ipu_stack_copy_strided_u64", {kOut, kIn + 4}, {1, 2, 8, 8});
  EXPECT_NE(e.find("operands[1]"), std::string::npos) << e;
  e = refused("ipu_stack_static_copy_u32", {kOut, kIn + 2}, {1});
  EXPECT_NE(e.find("operands[1]"), std::string::npos) << e;
  EXPECT_NE(e.find("4-byte aligned"), std::string::npos) << e;
  e = refused("ipu_stack_static_copy_u16", {kOut + 1, kIn}, {1});
  EXPECT_NE(e.find("2-byte aligned"), std::string::npos) << e;
  e = refused("ipu_stack_fill_zero_u64", {kOut + 4}, {1, 0});
  EXPECT_NE(e.find("operands[0]"), std::string::npos) << e;
  EXPECT_EQ(get(m, kOut, 256), image);
}

TEST(StackCopy, SpanLeavingSramThrowsBeforeWriting) {
  Sram m(machine());
  const Bytes image = random_bytes(64, 12);
  put(m, kOut, image);
  EXPECT_THROW(run("ipu_stack_copy_u64", {kOut, kEnd - 48}, {1, 1}, m), std::out_of_range);
  EXPECT_THROW(run("ipu_stack_copy_strided_u64", {kOut, kEnd - 64}, {1, 3, 32, 8}, m), std::out_of_range);
  EXPECT_THROW(run("ipu_stack_static_copy_u32", {kOut, kEnd - 4}, {2}, m), std::out_of_range);
  EXPECT_THROW(run("ipu_stack_static_copy_u16", {kEnd - 2, kIn}, {2}, m), std::out_of_range);
  EXPECT_THROW(run("ipu_stack_fill_zero_u64", {kEnd - 40}, {1, 0}, m), std::out_of_range);
  EXPECT_EQ(get(m, kOut, 64), image);
}

TEST(StackCopy, SignatureAcceptsGoodScalarsAndRefusesRemainderSix) {
  EXPECT_EQ(signature_error("ipu_stack_copy_u64", {3, 5}), "");
  EXPECT_EQ(signature_error("ipu_stack_fill_zero_u64", {0, 1}), "");
  EXPECT_EQ(signature_error("ipu_stack_copy_strided_u64", {3, 5, 40, 64}), "");
  EXPECT_EQ(signature_error("ipu_stack_static_copy_u32", {0}), "");
  expect_one_line_error(signature_error("ipu_stack_copy_u64", {3, 6}), "remainder workers");
  expect_one_line_error(signature_error("ipu_stack_fill_zero_u64", {1, 6}), "remainder workers");
  // execute refuses them too (a hazard, not a wrong copy).
  Sram m(machine());
  EXPECT_THROW(run("ipu_stack_copy_u64", {kOut, kIn}, {3, 6}, m), std::out_of_range);
}

TEST(StackCopy, CheckCountsPointersAndScalars) {
  arch::KernelStep step;
  step.name = "ipu_stack_copy_strided_u64";
  step.operands = {{kOut, false}, {kIn, false}};
  step.scalars = {1, 2, 8, 8};
  EXPECT_EQ(kernel(step.name).check(step), "");
  step.scalars.pop_back();
  EXPECT_NE(kernel(step.name).check(step), "");
  step.name = "ipu_stack_fill_zero_u64";
  step.operands.pop_back();
  step.scalars = {1, 0};
  EXPECT_EQ(kernel(step.name).check(step), "");
}

// --- rearrange and unpack (14.5) -------------------------------------------------------------

struct Shape {
  uint32_t lr, pr, lc, pc;
};

std::string layout_symbol(bool unpack, uint32_t order, const Shape& s) {
  return std::string(unpack ? "ipu_stack_unpack_amp_to_row_major_f16" : "ipu_stack_rearrange_row_major_to_amp_f16") +
         "_o" + std::to_string(order) + "_r" + std::to_string(s.lr) + "_p" + std::to_string(s.pr) + "_c" +
         std::to_string(s.lc) + "_p" + std::to_string(s.pc);
}

// Destination byte of (r, c) in each target order, from IPU21-KERNELS.md 14.5.
uint64_t rearranged_byte(uint32_t order, uint32_t r, uint32_t c, const Shape& s) {
  if (order == 0) return (c / 16) * s.pr * 32 + r * 32 + (c % 16) * 2;  // AMP-Left
  if (order == 1) return 2 * (((r / 16) * (s.pc / 16) + c / 16) * 256 + (r % 16) * 16 + c % 16);
  if (s.pr == 64) return (c / 16) * 2048 + (r / 16) * 512 + (c % 16) * 32 + (r % 16) * 2;
  const uint64_t panel = (r / 64) * (s.pc / 16) * 4 + (c / 16) * 4 + (r % 64) / 16;  // block {64, 16}
  return 2 * (panel * 256 + (c % 16) * 16 + r % 16);
}

Bytes reference_rearrange(uint32_t order, const Shape& s, const Bytes& src) {
  Bytes out(2 * s.pr * s.pc, 0);
  for (uint32_t r = 0; r < s.lr; ++r) {
    for (uint32_t c = 0; c < s.lc; ++c) {
      const uint64_t to = rearranged_byte(order, r, c, s), from = 2 * (r * s.lc + c);
      out[to] = src[from];
      out[to + 1] = src[from + 1];
    }
  }
  return out;
}

// Run a rearrange on a destination full of noise and compare it with the reference.
void expect_rearrange(uint32_t order, const Shape& s, const std::string& symbol) {
  Sram m(machine());
  const Bytes src = random_bytes(2 * s.lr * s.lc, s.lr * 7 + s.lc), noise = random_bytes(2 * s.pr * s.pc + 8, 13);
  put(m, kIn, src);
  put(m, kOut, noise);
  const int64_t lr = s.lr, pr = s.pr, lc = s.lc, pc = s.pc;
  run(symbol, {kOut, kIn}, {lr, pr, order, lc, pc}, m);
  EXPECT_EQ(get(m, kOut, 2 * s.pr * s.pc), reference_rearrange(order, s, src)) << symbol;
  EXPECT_EQ(get(m, kOut + 2 * s.pr * s.pc, 8), Bytes(noise.end() - 8, noise.end())) << symbol;
  EXPECT_EQ(get(m, kIn, src.size()), src) << symbol;
}

TEST(StackLayout, RearrangeToAmpLeftMatchesTheByteFormula) {
  for (const Shape s :
       {Shape{5, 8, 20, 32}, Shape{16, 16, 16, 16}, Shape{1, 3, 1, 16}, Shape{0, 4, 0, 16}, Shape{37, 40, 47, 48}}) {
    expect_rearrange(0, s, layout_symbol(false, 0, s));
  }
}

TEST(StackLayout, RearrangeToTransposedRightMatchesTheTileFormula) {
  for (const Shape s : {Shape{10, 32, 20, 32}, Shape{64, 64, 16, 16}, Shape{17, 48, 3, 16}}) {
    expect_rearrange(1, s, layout_symbol(false, 1, s));
  }
}

TEST(StackLayout, RearrangeToBlockMajor64x16MatchesTheByteFormula) {
  for (const Shape s : {Shape{50, 64, 30, 48}, Shape{64, 64, 16, 16}, Shape{2, 64, 4, 32}}) {
    expect_rearrange(2, s, layout_symbol(false, 2, s));
  }
}

TEST(StackLayout, RearrangeToBlockMajorOf128RowsMatchesThePanelFormula) {
  for (const Shape s : {Shape{100, 128, 20, 32}, Shape{192, 192, 16, 16}}) {
    expect_rearrange(2, s, layout_symbol(false, 2, s));
  }
}

TEST(StackLayout, CollapsedSymbolTakesLogicalExtentsFromTheRegisters) {
  // Block-major and transposed-right with 64 physical rows name r0 and c0 (14.5).
  expect_rearrange(2, Shape{40, 64, 12, 16}, "ipu_stack_rearrange_row_major_to_amp_f16_o2_r0_p64_c0_p16");
  expect_rearrange(1, Shape{9, 64, 5, 16}, "ipu_stack_rearrange_row_major_to_amp_f16_o1_r0_p64_c0_p16");
}

TEST(StackLayout, SymbolExtentDifferingFromItsRegisterIsRefused) {
  Sram m(machine());
  const std::string e = thrown_out_of_range([&] {
    run(layout_symbol(false, 0, Shape{5, 8, 20, 32}), {kOut, kIn}, {6, 8, 0, 20, 32}, m);
  });
  EXPECT_NE(e.find("scalars[0]: logical rows = 6 differs from the symbol's 5"), std::string::npos) << e;
  EXPECT_THROW(run(layout_symbol(true, 0, Shape{5, 8, 20, 32}), {kOut, kIn}, {1, 5, 8, 20, 48}, m), std::out_of_range);
  EXPECT_EQ(get(m, kOut, 64), Bytes(64, 0));
}

// Source element of (r, c) of one matrix, from IPU21-KERNELS.md 2 and 14.5.
uint64_t packed_element(uint32_t order, uint32_t r, uint32_t c, const Shape& s) {
  if (order == 1) return (r / 16) * s.pc * 16 + c * 16 + r % 16;    // AMP TransposedLeft
  const uint32_t q = (c % 16) / 2, position = (q % 4) * 2 + q / 4;  // AMP Output pairs
  return (c / 16) * s.pr * 16 + r * 16 + position * 2 + c % 2;
}

void expect_unpack(uint32_t order, uint32_t matrices, const Shape& s) {
  const std::string symbol = layout_symbol(true, order, s);
  const size_t matrix = s.pr * s.pc, bytes = 2 * matrices * matrix;
  Sram m(machine());
  const Bytes src = random_bytes(bytes, matrices + s.lc), noise = random_bytes(bytes, 14);
  put(m, kIn, src);
  put(m, kOut, noise);
  run(symbol, {kOut, kIn}, {matrices, s.lr, s.pr, s.lc, s.pc}, m);
  Bytes expected(bytes, 0);
  for (uint32_t i = 0; i < matrices; ++i) {
    for (uint32_t r = 0; r < s.lr; ++r) {
      for (uint32_t c = 0; c < s.lc; ++c) {
        const uint64_t to = 2 * (i * matrix + r * s.pc + c), from = 2 * (i * matrix + packed_element(order, r, c, s));
        expected[to] = src[from];
        expected[to + 1] = src[from + 1];
      }
    }
  }
  EXPECT_EQ(get(m, kOut, bytes), expected) << symbol << " x " << matrices;
}

TEST(StackLayout, UnpackAmpOutputOfSeveralMatricesMatchesThePairFormula) {
  expect_unpack(0, 3, Shape{5, 8, 20, 32});
  expect_unpack(0, 1, Shape{16, 16, 16, 16});
  expect_unpack(0, 4, Shape{7, 7, 9, 16});
}

TEST(StackLayout, UnpackTransposedLeftOfSeveralMatricesMatchesTheFormula) {
  expect_unpack(1, 2, Shape{20, 32, 7, 16});
  expect_unpack(1, 3, Shape{16, 16, 3, 16});
  expect_unpack(1, 1, Shape{30, 48, 40, 48});
}

TEST(StackLayout, CyclesArePlannerPackAndUnpackFormulas) {
  // e = the call's output physical elements (IPU21-KERNELS.md 14.8).
  EXPECT_EQ(cycles(layout_symbol(false, 0, {5, 8, 20, 32}), {5, 8, 0, 20, 32}), 4u * 256 + 11);
  EXPECT_EQ(cycles(layout_symbol(false, 1, {10, 32, 20, 32}), {10, 32, 1, 20, 32}), 3u * 1024 + 11);
  EXPECT_EQ(cycles(layout_symbol(false, 2, {50, 64, 30, 48}), {50, 64, 2, 30, 48}), 4u * 3072 + 4096);
  EXPECT_EQ(cycles(layout_symbol(false, 2, {100, 128, 20, 32}), {100, 128, 2, 20, 32}), 10u * 4096 + 11);
  EXPECT_EQ(cycles(layout_symbol(true, 0, {5, 8, 20, 32}), {3, 5, 8, 20, 32}), 10u * 768 + 11);
  EXPECT_EQ(cycles(layout_symbol(true, 1, {20, 32, 7, 16}), {2, 20, 32, 7, 16}), 10u * 1024 + 11);
}

TEST(StackLayout, OverlappingInputAndOutputAreRefused) {
  const Shape s{8, 8, 16, 16};
  Sram m(machine());
  const Bytes image = random_bytes(1024, 15);
  put(m, kOut, image);
  std::string e = thrown_out_of_range([&] {
    run(layout_symbol(false, 0, s), {kOut, kOut + 200}, {8, 8, 0, 16, 16}, m);
  });
  EXPECT_NE(e.find("overlaps"), std::string::npos) << e;
  e = thrown_out_of_range([&] { run(layout_symbol(true, 0, s), {kOut + 256, kOut}, {2, 8, 8, 16, 16}, m); });
  EXPECT_NE(e.find("overlaps"), std::string::npos) << e;
  EXPECT_EQ(get(m, kOut, 1024), image);
  // Adjacent spans do not overlap.
  run(layout_symbol(false, 0, s), {kOut, kOut + 256}, {8, 8, 0, 16, 16}, m);
}

TEST(StackLayout, SpanLeavingSramThrowsBeforeWriting) {
  const Shape s{16, 16, 16, 16};
  Sram m(machine());
  const Bytes image = random_bytes(512, 16);
  put(m, kOut, image);
  EXPECT_THROW(run(layout_symbol(false, 0, s), {kOut, kEnd - 256}, {16, 16, 0, 16, 16}, m), std::out_of_range);
  EXPECT_THROW(run(layout_symbol(false, 0, s), {kEnd - 256, kIn}, {16, 16, 0, 16, 16}, m), std::out_of_range);
  EXPECT_THROW(run(layout_symbol(true, 0, s), {kOut, kEnd - 512}, {2, 16, 16, 16, 16}, m), std::out_of_range);
  EXPECT_EQ(get(m, kOut, 512), image);
}

TEST(StackLayout, SignatureAcceptsGoodScalarsAndGivesOneLineErrors) {
  const std::string amp_left = layout_symbol(false, 0, {5, 8, 20, 32});
  EXPECT_EQ(signature_error(amp_left, {5, 8, 0, 20, 32}), "");
  EXPECT_EQ(signature_error(layout_symbol(false, 2, {50, 64, 30, 48}), {50, 64, 2, 30, 48}), "");
  EXPECT_EQ(signature_error(layout_symbol(true, 1, {20, 32, 7, 16}), {2, 20, 32, 7, 16}), "");
  expect_one_line_error(signature_error(amp_left, {5, 8, 1, 20, 32}), "target order");
  expect_one_line_error(signature_error(layout_symbol(false, 0, {5, 8, 20, 40}), {5, 8, 0, 20, 40}),
                        "physical columns = 40 is not a multiple of 16");
  expect_one_line_error(signature_error(layout_symbol(true, 0, {5, 8, 20, 24}), {1, 5, 8, 20, 24}),
                        "not a multiple of 16");
  // execute refuses what the signature refuses.
  Sram m(machine());
  EXPECT_THROW(run(amp_left, {kOut, kIn}, {5, 8, 1, 20, 32}, m), std::out_of_range);
}

}  // namespace
}  // namespace lockstep::model
