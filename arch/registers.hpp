#pragma once
// The supervisor's registers and the exchange CSRs by name (IPU21-DEVICE.md sections 3 and 4),
// for the code that writes supervisor instructions and the code that reads them back.
#include <cstdint>

namespace lockstep::arch::registers {

inline constexpr uint32_t kM0 = 0, kM1 = 1, kM2 = 2, kM3 = 3, kM4 = 4, kM5 = 5, kM6 = 6, kM7 = 7, kM8 = 8, kM9 = 9,
                          kM10 = 10, kStack = 11, kZero = 15;
inline constexpr uint32_t kIncomingMux = 0xa0, kIncomingMuxPair = 0xa1, kIncomingFormat = 0xa3, kIncomingBase = 0xa4,
                          kIncomingDcount = 0xa6, kOutgoingBase = 0xa7;

}  // namespace lockstep::arch::registers
