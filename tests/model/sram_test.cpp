// A tile's SRAM (one mapping, zero until written) and kernels' inputs read in place
// (kernels::InputArray): what a kernel sees must be what a copy would have given, including
// when its output overlaps its input.
#include "model/sram.hpp"

#include <gtest/gtest.h>

#include <array>
#include <cstdint>
#include <cstring>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "arch/machine.hpp"
#include "io/mapped_file.hpp"
#include "model/kernel_registry.hpp"
#include "model/kernels/tensor_io.hpp"

namespace lockstep::model {
namespace {

const arch::MachineDescription& c600() {
  static const auto m = arch::load_machine("ipu21-c600");
  return m;
}

std::vector<uint8_t> bytes_of(const Sram& m, uint32_t address, uint32_t n) {
  std::vector<uint8_t> out(n);
  m.read(address, n, out.data());
  return out;
}

TEST(Sram, UntouchedMemoryReadsZeroAndWritesReadBack) {
  Sram m(c600());
  const uint32_t base = c600().sram_base, end = c600().sram_end;
  EXPECT_EQ(bytes_of(m, base, 64), std::vector<uint8_t>(64, 0));
  EXPECT_EQ(m.read_word(end - 4), 0u);
  const std::vector<uint8_t> across = {1, 2, 3, 4, 5, 6, 7, 8};
  m.write(base + 0x4000 - 4, 8, across.data());
  EXPECT_EQ(bytes_of(m, base + 0x4000 - 4, 8), across);
  EXPECT_TRUE(m.equal(base + 0x4000 - 4, 8, across.data()));
  EXPECT_EQ(m.read_word(base + 0x4000), 0x08070605u);  // little-endian
  const auto view = m.span(base + 0x4000 - 4, 8);
  EXPECT_EQ(std::vector<uint8_t>(view.begin(), view.end()), across);
}

TEST(Sram, EveryAccessOutsideIsRefusedNamingTheAddress) {
  Sram m(c600());
  const uint32_t base = c600().sram_base, end = c600().sram_end;
  uint8_t b[8] = {};
  EXPECT_THROW(m.read(base - 4, 4, b), std::out_of_range);
  EXPECT_THROW(m.write(end - 4, 8, b), std::out_of_range);
  EXPECT_THROW(m.read_word(end), std::out_of_range);
  EXPECT_THROW((void)m.span(end - 2, 4), std::out_of_range);
  Sram other(c600());
  EXPECT_THROW(m.copy_from(other, end - 4, base, 8), std::out_of_range);
  try {
    m.write_word(end, 1);
    ADD_FAILURE() << "no error";
  } catch (const std::out_of_range& e) {
    EXPECT_NE(std::string(e.what()).find(std::to_string(end)), std::string::npos) << e.what();
  }
}

TEST(Sram, CopyFromAnotherTileAndMoveKeepTheBytes) {
  Sram a(c600()), b(c600());
  const uint32_t base = c600().sram_base;
  std::vector<uint8_t> data(40000);
  std::mt19937 rng(7);
  for (auto& v : data) v = static_cast<uint8_t>(rng());
  a.write(base + 100, static_cast<uint32_t>(data.size()), data.data());
  b.copy_from(a, base + 100, base + 3, static_cast<uint32_t>(data.size()));
  EXPECT_EQ(bytes_of(b, base + 3, static_cast<uint32_t>(data.size())), data);
  Sram moved(std::move(b));
  EXPECT_EQ(bytes_of(moved, base + 3, static_cast<uint32_t>(data.size())), data);
}

// A chip's tiles share one mapping: each slot is a whole SRAM of its own, zero until written,
// and a write at one tile's last byte does not reach the next tile's first.
TEST(SramArena, EachSlotIsAWholeSramOfItsOwn) {
  const uint32_t base = c600().sram_base, end = c600().sram_end;
  SramArena arena(c600(), 3);
  Sram first(c600(), arena, 0), second(c600(), arena, 1), third(c600(), arena, 2);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(arena.slot(1)) % 4096, 0u);  // no page shared between tiles
  const std::vector<uint8_t> ones(8, 0xff);
  first.write(end - 8, 8, ones.data());
  third.write(base, 8, ones.data());
  EXPECT_EQ(bytes_of(second, base, 8), std::vector<uint8_t>(8, 0));
  EXPECT_EQ(bytes_of(second, end - 8, 8), std::vector<uint8_t>(8, 0));
  EXPECT_EQ(bytes_of(first, end - 8, 8), ones);
  EXPECT_EQ(bytes_of(third, base, 8), ones);
  EXPECT_THROW(first.write_word(end, 1), std::out_of_range);  // the slot's end is still refused
  Sram moved(std::move(third));                               // a slot moves without being unmapped
  EXPECT_EQ(bytes_of(moved, base, 8), ones);
}

// While a KeptSramMappings lives, a chip taken down leaves its mapping to the next arena of the
// same size (a sweep worker's next point), which must read as a fresh one: every byte zero,
// wherever the last chip wrote, whether by a plain write, a word, deferred tokens made when
// read, or a populated page. (Where the kernel does not say which pages are in use, the next
// arena maps afresh, and only the zeros are checked.)
TEST(SramArena, TheNextArenaTakesTheLastOnesMappingZeroedAgain) {
  const uint32_t base = c600().sram_base, end = c600().sram_end;
  const KeptSramMappings keep;
  const uint8_t* last_slot = nullptr;
  {
    SramArena arena(c600(), 3);
    Sram first(c600(), arena, 0), third(c600(), arena, 2);
    last_slot = arena.slot(0);
    const std::vector<uint8_t> ones(5000, 0xff);
    first.write(base + 100, static_cast<uint32_t>(ones.size()), ones.data());
    first.write_word(end - 4, 0xdeadbeef);
    third.write_tokens(7, 2, base + 0x8000, 0x3000);  // deferred: made here when read
    EXPECT_NE(third.read_word(base + 0x8000), 0u);
    third.populate(base + 0x10000, 0x4000);
  }
  SramArena again(c600(), 3);
  const bool kernel_says = !arch::pages_in_use(again.slot(0), 4096).empty();
  if (kernel_says) {
    EXPECT_EQ(again.slot(0), last_slot);  // the same mapping, taken again
  }
  const size_t bytes = size_t{end - base};
  for (size_t slot = 0; slot < 3; ++slot) {
    const uint8_t* at = again.slot(slot);
    const std::vector<uint8_t> zeros(bytes, 0);
    EXPECT_EQ(std::memcmp(at, zeros.data(), bytes), 0) << "slot " << slot;
  }
  Sram first(c600(), again, 0);
  EXPECT_EQ(first.read_word(end - 4), 0u);
}

// Mapping pages ahead of a write is only a hint: untouched memory still reads zero, written
// bytes stay, and ranges of any size and alignment are taken.
TEST(Sram, PopulatingPagesChangesNoByte) {
  Sram m(c600());
  const uint32_t base = c600().sram_base, end = c600().sram_end;
  std::vector<uint8_t> data(20000);
  std::mt19937 rng(5);
  for (auto& v : data) v = static_cast<uint8_t>(rng());
  m.write(base + 4096 + 12, static_cast<uint32_t>(data.size()), data.data());
  m.populate(base, end - base);
  m.populate(base + 3, 5);
  m.populate(end - 4, 4);
  EXPECT_EQ(bytes_of(m, base + 4096 + 12, static_cast<uint32_t>(data.size())), data);
  EXPECT_EQ(bytes_of(m, base + 64 * 1024, 64), std::vector<uint8_t>(64, 0));
  EXPECT_THROW(m.populate(end - 4, 8), std::out_of_range);
  std::vector<uint8_t> held = data;
  arch::populate_for_write(held.data(), held.size());
  EXPECT_EQ(held, data);
  std::vector<uint32_t> reserved;
  arch::reserve_populated(reserved, 5000);
  EXPECT_TRUE(reserved.empty());
  EXPECT_GE(reserved.capacity(), 5000u);
  std::vector<uint32_t> sized;
  arch::resize_populated(sized, 5000);
  EXPECT_EQ(sized, std::vector<uint32_t>(5000, 0u));  // a plain vector's resize still zeroes
}

// The loader makes tokens in SRAM's words in place and zeroes zero-fill segments there.
TEST(Sram, WordsInPlaceAreTheLittleEndianWordsAtTheirAddresses) {
  Sram m(c600());
  const uint32_t base = c600().sram_base, end = c600().sram_end;
  const auto words = m.mutable_words(base + 64, 12);
  ASSERT_EQ(words.size(), 3u);
  words[0] = 0x11223344u;
  words[2] = 0xa5a5a5a5u;
  EXPECT_EQ(m.read_word(base + 64), 0x11223344u);
  EXPECT_EQ(bytes_of(m, base + 64, 4), (std::vector<uint8_t>{0x44, 0x33, 0x22, 0x11}));
  EXPECT_EQ(m.read_word(base + 68), 0u);
  EXPECT_EQ(m.read_word(base + 72), 0xa5a5a5a5u);
  m.zero(base + 72, 4);
  EXPECT_EQ(m.read_word(base + 72), 0u);
  EXPECT_EQ(m.read_word(base + 64), 0x11223344u);
  EXPECT_THROW(m.mutable_words(base + 2, 4), std::invalid_argument);
  EXPECT_THROW(m.mutable_words(base, 6), std::invalid_argument);
  EXPECT_THROW(m.mutable_words(end - 4, 8), std::out_of_range);
  EXPECT_THROW(m.zero(end - 4, 8), std::out_of_range);
}

TEST(InputArray, AlignedInputsAreReadInPlaceAndOddOnesCopied) {
  Sram m(c600());
  const uint32_t base = c600().sram_base;
  const std::vector<uint16_t> values = {1, 0x3c00, 0xfbff, 7, 0x7e00};
  m.write(base + 0x100, 10, reinterpret_cast<const uint8_t*>(values.data()));
  m.write(base + 0x201, 10, reinterpret_cast<const uint8_t*>(values.data()));
  const kernels::InputArray<uint16_t> aligned(m, base + 0x100, values.size(), "aligned");
  EXPECT_EQ(aligned.data(), reinterpret_cast<const uint16_t*>(m.span(base + 0x100, 10).data()));
  const kernels::InputArray<uint16_t> odd(m, base + 0x201, values.size(), "odd");
  EXPECT_EQ(std::vector<uint16_t>(aligned.begin(), aligned.end()), values);
  EXPECT_EQ(std::vector<uint16_t>(odd.begin(), odd.end()), values);
  EXPECT_THROW(kernels::InputArray<uint16_t>(m, c600().sram_end - 4, 4, "past the end"), std::out_of_range);
}

// layernorm reads its input in place; written over that input it must give the bits it gives
// into a separate output.
TEST(InputArray, AKernelWrittenOverItsInputGivesTheSameBits) {
  const KernelDefinition* layernorm = find_kernel("layernorm");
  ASSERT_NE(layernorm, nullptr);
  const uint32_t base = c600().sram_base, rows = 3, columns = 200;
  std::vector<uint16_t> x(rows * columns);
  std::mt19937 rng(11);
  for (auto& v : x) v = static_cast<uint16_t>(0x3000 + rng() % 0x1000);  // finite, around 0.1..1
  const auto run = [&](uint32_t out_offset) {
    Sram m(c600());
    m.write(base + 0x1000, rows * columns * 2, reinterpret_cast<const uint8_t*>(x.data()));
    layernorm->execute({base + out_offset, base + 0x1000}, {rows, columns}, m);
    return bytes_of(m, base + out_offset, rows * columns * 2);
  };
  EXPECT_EQ(run(0x1000), run(0x8000));
}

TEST(OutputArray, AnOutputApartFromItsInputsIsWrittenInPlaceOtherwiseAtCommit) {
  Sram m(c600());
  const uint32_t base = c600().sram_base;
  const std::array<arch::SramRange, 2> inputs{{{base + 0x100, base + 0x140}, {base + 0x400, base + 0x420}}};
  kernels::OutputArray<uint32_t> apart(m, base + 0x140, 4, inputs, "apart");  // starts where input 0 ends
  EXPECT_EQ(apart.data(), reinterpret_cast<uint32_t*>(m.mutable_span(base + 0x140, 16).data()));
  apart.data()[1] = 0xdeadbeefu;
  EXPECT_EQ(m.read_word(base + 0x144), 0xdeadbeefu);  // already in SRAM
  apart.commit();
  EXPECT_EQ(m.read_word(base + 0x144), 0xdeadbeefu);

  kernels::OutputArray<uint32_t> over(m, base + 0x3fc, 4, inputs, "over");  // its last words on input 1
  EXPECT_NE(over.data(), reinterpret_cast<uint32_t*>(m.mutable_span(base + 0x3fc, 16).data()));
  over.data()[0] = 0x01020304u;
  EXPECT_EQ(m.read_word(base + 0x3fc), 0u);  // not before commit
  over.commit();
  EXPECT_EQ(m.read_word(base + 0x3fc), 0x01020304u);

  kernels::OutputArray<uint32_t> odd(m, base + 0x802, 2, inputs, "odd");  // apart, but not aligned
  EXPECT_NE(reinterpret_cast<uint8_t*>(odd.data()), m.mutable_span(base + 0x802, 8).data());
  EXPECT_THROW(kernels::OutputArray<uint32_t>(m, c600().sram_end - 4, 2, inputs, "past the end"), std::out_of_range);
}

// The GEMMs and reduce_sum compute in place when their output is apart from their inputs, and
// into a buffer otherwise: written over either input, each must give the bits it gives apart.
struct OverInput {
  const char* kernel;
  std::vector<int64_t> scalars;
  uint32_t output_bytes;
};
class KernelWrittenOverItsInput : public ::testing::TestWithParam<OverInput> {};

TEST_P(KernelWrittenOverItsInput, GivesTheBitsItGivesApart) {
  const KernelDefinition* kernel = find_kernel(GetParam().kernel);
  ASSERT_NE(kernel, nullptr);
  const uint32_t base = c600().sram_base, in = base + 0x1000, second = base + 0x6000, third = base + 0xa000;
  std::mt19937 rng(5);
  std::vector<uint16_t> values(0x3000);  // FP16 around 0.1..1 (F143 bytes where read as bytes)
  for (auto& v : values) v = static_cast<uint16_t>(0x3000 + rng() % 0x1000);
  const auto run = [&](uint32_t out) {
    Sram m(c600());
    for (const uint32_t at : {in, second, third}) {
      m.write(at, 0x4000, reinterpret_cast<const uint8_t*>(values.data()));
    }
    kernel->execute({out, in, second}, GetParam().scalars, m);
    return bytes_of(m, out, GetParam().output_bytes);
  };
  const auto apart = run(base + 0x20000);
  EXPECT_EQ(run(in), apart);
  EXPECT_EQ(run(second), apart);
}

INSTANTIATE_TEST_SUITE_P(
    Kernels, KernelWrittenOverItsInput,
    // 40 rows: more than one register block and chunk of widened rows.
    ::testing::Values(OverInput{"gemm_fp16", {40, 24, 16, 0, 16}, 40 * 24 * 2},  // rows, columns, inner, b^T, out bits
                      OverInput{"gemm_fp16", {40, 24, 16, 0, 32}, 40 * 24 * 4},
                      OverInput{"gemm_fp8", {40, 16, 24, -4, 16}, 40 * 24 * 2},  // rows, k, n, scale, out bits
                      OverInput{"gemm_fp8", {40, 16, 24, -4, 32}, 40 * 24 * 4},
                      OverInput{"reduce_sum", {3, 4, 40, 32}, 4 * 40 * 2},  // parts, rows, columns, part bits
                      OverInput{"reduce_sum", {3, 4, 40, 16}, 4 * 40 * 2}),
    [](const auto& info) {
      return std::string(info.param.kernel) + "_out" + std::to_string(info.param.scalars.back()) + "_" +
             std::to_string(info.index);
    });

}  // namespace
}  // namespace lockstep::model

namespace lockstep::model {
namespace {

// An arena slot's SRAM marks every 4 KiB page a write reaches with the epoch now, whichever
// way it writes; reads and mapping pages ahead mark nothing, and tiles' pages stay apart.
TEST(WriteEpochs, EveryWriteMarksThePagesItReaches) {
  const uint32_t base = c600().sram_base;
  SramArena arena(c600(), 2);
  Sram first(c600(), arena, 0), second(c600(), arena, 1);
  WriteEpochs& epochs = arena.epochs();
  const auto page = [&](const Sram& m, uint32_t address) { return arena.page_of(m.span(address, 1).data()); };
  EXPECT_EQ(epochs.now(), 1u);
  epochs.advance();
  const std::vector<uint8_t> bytes(8, 0x5a);
  first.write(base + 4096 - 4, 8, bytes.data());  // across two pages
  EXPECT_EQ(epochs.last_write(page(first, base)), 2u);
  EXPECT_EQ(epochs.last_write(page(first, base + 4096)), 2u);
  EXPECT_EQ(epochs.last_write(page(first, base + 8192)), 0u);
  EXPECT_EQ(epochs.last_write(page(second, base)), 0u);  // the next slot's first page
  epochs.advance();
  second.write_word(base + 8192, 1);
  second.zero(base + 3 * 4096, 4);
  second.mutable_words(base + 4 * 4096, 8)[0] = 7;
  EXPECT_EQ(epochs.last_write(page(second, base + 8192)), 3u);
  EXPECT_EQ(epochs.last_write(page(second, base + 3 * 4096)), 3u);
  EXPECT_EQ(epochs.last_write(page(second, base + 4 * 4096)), 3u);
  epochs.advance();
  std::vector<uint8_t> out(8);
  first.read(base, 8, out.data());
  first.populate(base, 3 * 4096);
  EXPECT_TRUE(first.equal(base + 4096 - 4, 8, bytes.data()));
  EXPECT_EQ(epochs.last_write(page(first, base)), 2u);
  EXPECT_EQ(epochs.last_write(page(first, base + 8192)), 0u);
  Sram moved(std::move(first));  // a moved SRAM still marks
  moved.write_word(base + 8192, 1);
  EXPECT_EQ(epochs.last_write(page(moved, base + 8192)), 4u);
  Sram own(c600());  // an SRAM of its own mapping has no epochs to mark
  own.write_word(base, 1);
  EXPECT_EQ(own.read_word(base), 1u);
}

}  // namespace
}  // namespace lockstep::model
