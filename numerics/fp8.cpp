// The F143 decode table at scale 0 (built at compile time) and the per-scale tables.
#include "numerics/fp8.hpp"

#include <limits>

namespace lockstep::arch {
namespace {

// (sign) 2^(E - 8) * (1 + M/8) for exponent field E > 0, (sign) 2^-7 * M/8 for E == 0.
constexpr double f143_value_at_scale_zero(uint8_t code) {
  if (code == kF143NaN) return std::numeric_limits<double>::quiet_NaN();
  const int field = (code >> kF143MantissaBits) & 0xf;
  const int fraction = code & 0x7;
  const double magnitude = field == 0 ? fraction * detail::power_of_two(kF143MinExponent - kF143MantissaBits)
                                      : (8 + fraction) * detail::power_of_two(field - 8 - kF143MantissaBits);
  return (code & 0x80) ? -magnitude : magnitude;
}

constexpr std::array<double, 256> make_f143_table() {
  std::array<double, 256> table{};
  for (uint32_t c = 0; c < table.size(); ++c) table[c] = f143_value_at_scale_zero(static_cast<uint8_t>(c));
  return table;
}

static_assert(std::bit_cast<uint64_t>(240.0) == detail::kF143MaxFiniteBits);
static_assert(f143_value_at_scale_zero(kF143MaxFinite) == 240.0);
static_assert(f143_value_at_scale_zero(0x01) == 1.0 / 1024);

}  // namespace

namespace detail {
constinit const std::array<double, 256> kF143ToDouble = make_f143_table();
}  // namespace detail

std::array<float, 256> f143_float_table(int8_t scale) {
  std::array<float, 256> table{};
  for (uint32_t c = 0; c < table.size(); ++c) table[c] = f143_to_float(static_cast<uint8_t>(c), scale);
  return table;
}

std::array<uint16_t, 256> f143_fp16_table(int8_t scale) {
  std::array<uint16_t, 256> table{};
  for (uint32_t c = 0; c < table.size(); ++c) table[c] = f143_to_fp16(static_cast<uint8_t>(c), scale);
  return table;
}

}  // namespace lockstep::arch
