// The fp16 -> float table, built at compile time (constinit: safe to use from any static
// initialiser). Few statements per entry, to stay inside compilers' constexpr step limits.
#include "numerics/fp16.hpp"

#include <bit>

namespace lockstep::arch {
namespace {

constexpr uint32_t kFloatQuietBit = 0x00400000;

// fraction * 2^-24 = 2^(lead - 24) * (fraction / 2^lead), lead = the top set bit (fraction != 0).
constexpr uint32_t subnormal_to_float_bits(uint32_t fraction) {
  const int lead = static_cast<int>(std::bit_width(fraction)) - 1;
  return (static_cast<uint32_t>(lead - 24 + 127) << 23) | ((fraction << (23 - lead)) & 0x7fffff);
}

// The binary32 bits of an fp16 value: exact, since float's range and precision contain fp16's.
constexpr uint32_t fp16_to_float_bits(uint32_t h) {
  const uint32_t field = (h >> kFp16MantissaBits) & 0x1f;
  const uint32_t fraction = h & 0x3ff;
  const uint32_t magnitude = field == 0x1f   ? 0x7f800000 | (fraction << 13) | (fraction != 0 ? kFloatQuietBit : 0)
                             : field != 0    ? ((field - 15 + 127) << 23) | (fraction << 13)
                             : fraction == 0 ? 0
                                             : subnormal_to_float_bits(fraction);
  return ((h & kFp16SignBit) << 16) | magnitude;
}

constexpr detail::Fp16FloatTable make_fp16_table() {
  detail::Fp16FloatTable table{};
  for (uint32_t h = 0; h < 65536; ++h) table.value[h] = std::bit_cast<float>(fp16_to_float_bits(h));
  return table;
}

static_assert(std::bit_cast<uint64_t>(65520.0) == detail::kFp16OverflowBits);

}  // namespace

namespace detail {
constinit const Fp16FloatTable kFp16ToFloat = make_fp16_table();
}  // namespace detail

}  // namespace lockstep::arch
