// reduce_sum runs on a tile's SRAM and is compared bit for bit with the deliberately simple
// reference of tests/model/gemm_reference.hpp (every round-once done on exact integers). Fixed
// seeds.
#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <vector>

#include "tests/model/gemm_reference.hpp"

namespace lockstep::model {
namespace {

using namespace gemm_reference;  // NOLINT(google-build-using-namespace): the tests' own helpers

std::vector<uint16_t> reference_reduce(const std::vector<float>& parts, const std::vector<uint16_t>& bias,
                                       uint32_t count, uint32_t rows, uint32_t columns) {
  std::vector<uint16_t> out(size_t{rows} * columns);
  for (uint32_t r = 0; r < rows; ++r) {
    for (uint32_t c = 0; c < columns; ++c) {
      const size_t i = size_t{r} * columns + c;
      // fl16(parts[0]) is fl16(parts[0] + -0).
      uint16_t acc = reference_round_add(parts[i], 0x8000);
      for (uint32_t p = 1; p < count; ++p) acc = reference_round_add(parts[p * size_t{rows} * columns + i], acc);
      out[i] = reference_round_add(static_cast<float>(value16(bias[c])), acc);
    }
  }
  return out;
}

std::vector<uint16_t> run_reduce(const std::vector<float>& parts, const std::vector<uint16_t>& bias, uint32_t count,
                                 uint32_t rows, uint32_t columns) {
  return run_kernel<uint16_t>("reduce_sum", parts, bias, {count, rows, columns, 32}, size_t{rows} * columns);
}

TEST(ReduceSum, RandomPartsBitExactAgainstTheReference) {
  std::mt19937 rng(23);
  for (const Shape& shape : std::vector<Shape>{{1, 1, 1}, {1, 3, 7}, {4, 2, 9}, {13, 4, 38}, {7, 5, 64}}) {
    const uint32_t count = shape.k, rows = shape.rows, columns = shape.n;
    // FP16-exact partials, as the lowering writes them, plus arbitrary FP32 values.
    const auto codes = random_fp16(rng, size_t{count} * rows * columns);
    std::vector<float> parts;
    for (uint16_t h : codes) parts.push_back(static_cast<float>(value16(h)));
    for (size_t i = 0; i < parts.size(); i += 3) {
      parts[i] = std::ldexp(static_cast<float>(rng() % (1u << 24)), static_cast<int>(rng() % 40) - 60) *
                 (rng() % 2 ? -1.0f : 1.0f);
    }
    const auto bias = random_fp16(rng, columns);
    EXPECT_EQ(run_reduce(parts, bias, count, rows, columns), reference_reduce(parts, bias, count, rows, columns))
        << count << " parts " << rows << "x" << columns;
  }
}

// FP16 parts (part_bits 16) give the bits FP32 parts holding the same values give.
TEST(ReduceSum, Fp16PartsEqualFp32PartsOfTheSameValues) {
  std::mt19937 rng(31);
  for (const Shape& shape : std::vector<Shape>{{1, 1, 1}, {3, 46, 36}, {5, 11, 26}}) {
    const uint32_t count = shape.k, rows = shape.rows, columns = shape.n;
    const auto codes = random_fp16(rng, size_t{count} * rows * columns);
    std::vector<float> wide;
    for (uint16_t h : codes) wide.push_back(static_cast<float>(value16(h)));
    const auto bias = random_fp16(rng, columns);
    const std::vector<int64_t> scalars{count, rows, columns, 16};
    EXPECT_EQ(run_kernel<uint16_t>("reduce_sum", codes, bias, scalars, size_t{rows} * columns),
              run_reduce(wide, bias, count, rows, columns));
    // The cycle model charges F16 partial bytes either way.
    EXPECT_EQ(kernel("reduce_sum").cycles(scalars, machine()),
              kernel("reduce_sum").cycles({count, rows, columns, 32}, machine()));
  }
}

// Part 0 at `first` and the values from `skip` on at `parts`: FP16 codes, or their FP32 values.
void put_parts(Sram& m, uint32_t first, uint32_t parts, const std::vector<uint16_t>& codes,
               const std::vector<float>& wide, size_t part, size_t skip, int64_t bits) {
  if (bits == 16) {
    put(m, first, std::vector<uint16_t>(codes.begin(), codes.begin() + part));
    put(m, parts, std::vector<uint16_t>(codes.begin() + skip, codes.end()));
  } else {
    put(m, first, std::vector<float>(wide.begin(), wide.begin() + part));
    put(m, parts, std::vector<float>(wide.begin() + skip, wide.end()));
  }
}

// With a fourth operand, part 0 is read from there (K 7's first partial) and `parts` holds the
// others: the bits of the three-operand form over the same parts in the same order, FP16 and
// FP32 parts; the second operand then spans one part less.
TEST(ReduceSum, FirstPartApartGivesTheBitsOfThePartsInOrder) {
  std::mt19937 rng(37);
  constexpr uint32_t kFirst = kBase + 0x30000;
  for (const Shape& shape : std::vector<Shape>{{1, 1, 1}, {2, 3, 8}, {18, 41, 43}}) {
    const uint32_t count = shape.k, rows = shape.rows, columns = shape.n;
    const size_t part = size_t{rows} * columns;
    const auto codes = random_fp16(rng, count * part);
    const auto bias = random_fp16(rng, columns);
    for (const int64_t bits : {16, 32}) {
      Sram m(machine());
      std::vector<float> wide;
      for (uint16_t h : codes) wide.push_back(static_cast<float>(value16(h)));
      put_parts(m, kFirst, kIn, codes, wide, part, part, bits);
      put(m, kWeights, bias);
      const std::vector<int64_t> scalars{count, rows, columns, bits};
      EXPECT_EQ(check("reduce_sum", 4, scalars), "");
      kernel("reduce_sum").execute({kOut, kIn, kWeights, kFirst}, scalars, m);
      EXPECT_EQ(get<uint16_t>(m, kOut, part), reference_reduce(wide, bias, count, rows, columns))
          << count << " parts " << rows << "x" << columns << " bits " << bits;
    }
    const auto* signature = arch::find_kernel_signature("reduce_sum");
    ASSERT_NE(signature, nullptr);
    EXPECT_EQ(signature->operand_bytes({count, rows, columns, 16}, 4),
              (std::vector<uint64_t>{2 * part, (count - 1) * 2 * part, 2 * uint64_t{columns}, 2 * part}));
  }
  EXPECT_EQ(check("reduce_sum", 5, {1, 1, 1, 16}), "kernel reduce_sum takes 3 operand(s), got 5");
}

// Many parts are summed a block of elements at a time (about 64 Ki floats of parts a block):
// blocks that end inside a row, with part 0 apart or not, FP16 and FP32 parts, give the bits of
// the sums taken element by element.
TEST(ReduceSum, ManyPartsOverSeveralBlocksGiveTheReferenceBits) {
  std::mt19937 rng(41);
  constexpr uint32_t kSum = kBase, kBias = 0x50000, kParts = 0x54000;
  for (const Shape& shape : std::vector<Shape>{{20, 64, 55}, {9, 130, 61}}) {  // rows, parts, columns
    const uint32_t count = shape.k, rows = shape.rows, columns = shape.n;
    const size_t part = size_t{rows} * columns;
    const auto codes = random_fp16(rng, count * part);
    std::vector<float> wide;
    for (uint16_t h : codes) wide.push_back(static_cast<float>(value16(h)));
    const auto bias = random_fp16(rng, columns);
    const auto expected = reference_reduce(wide, bias, count, rows, columns);
    for (const int64_t bits : {16, 32}) {
      for (const bool apart : {false, true}) {
        Sram m(machine());
        const size_t skip = apart ? part : 0;
        const auto kFirst = static_cast<uint32_t>(kParts + (count * part * bits / 8 + 63) / 64 * 64);
        put_parts(m, kFirst, kParts, codes, wide, part, skip, bits);
        put(m, kBias, bias);
        std::vector<uint32_t> operands{kSum, kParts, kBias};
        if (apart) operands.push_back(kFirst);
        kernel("reduce_sum").execute(operands, {count, rows, columns, bits}, m);
        EXPECT_EQ(get<uint16_t>(m, kSum, part), expected)
            << count << " parts " << rows << "x" << columns << " bits " << bits << (apart ? " apart" : "");
      }
    }
  }
}

TEST(ReduceSum, PortableAndAvx2AgreeWithTheReference) {
  std::mt19937 rng(29);
  for (const Shape& shape : std::vector<Shape>{{1, 1, 1}, {3, 46, 36}, {5, 2, 13}}) {
    const uint32_t count = shape.k, rows = shape.rows, columns = shape.n;
    std::vector<float> parts;
    for (uint16_t h : random_fp16(rng, size_t{count} * rows * columns)) parts.push_back(static_cast<float>(value16(h)));
    const auto bias16 = random_fp16(rng, columns);
    const auto want = reference_reduce(parts, bias16, count, rows, columns);
    for (amp::Isa isa : {amp::Isa::Portable, amp::Isa::Avx2, amp::Isa::Avx512}) {
      if (!amp::isa_available(isa)) continue;
      std::vector<float> bias;
      for (uint32_t r = 0; r < rows; ++r)
        for (uint16_t h : bias16) bias.push_back(static_cast<float>(value16(h)));
      std::vector<uint16_t> got(size_t{rows} * columns);
      amp::reduce(parts.data(), count, got.size(), bias.data(), got.data(), isa);
      EXPECT_EQ(got, want) << "isa " << static_cast<int>(isa);
    }
  }
}

TEST(ReduceSum, OrderSignsOverflowAndNaN) {
  const float inf = std::numeric_limits<float>::infinity();
  // Column 0: 2048 + 1 + 1 in F16 stays 2048 (each +1 ties to even); column 1: -0 + -0 + -0
  // is -0; column 2: 60000 + 60000 overflows, - 65504 keeps infinity; column 3: inf - inf.
  const std::vector<float> parts{2048, -0.0f, 60000, inf, 1, -0.0f, 60000, -inf, 1, -0.0f, -65504, 1};
  const std::vector<uint16_t> bias{0x0000, 0x8000, 0x0000, 0x0000};
  EXPECT_EQ(run_reduce(parts, bias, 3, 1, 4), (std::vector<uint16_t>{0x6800, 0x8000, 0x7c00, 0x7e00}));
  // Every add rounds to F16, the bias last: 1 + 2048 ties to 2048, + 1 again; the exact 2050
  // would be representable.
  EXPECT_EQ(run_reduce({1, 2048}, {0x3c00}, 2, 1, 1), (std::vector<uint16_t>{0x6800}));
}

}  // namespace
}  // namespace lockstep::model
