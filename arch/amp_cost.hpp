#pragma once
// What an F16 AMP GEMM costs (IPU21-KERNELS.md 11.2) at the call block Lockstep's kernels use:
// one shape-specialised call, K block = K and C block = the columns, each rounded up to 16, as
// K §6 allows parallel-reduction grids ("any multiple-of-16 local K and C per call") and K §9.1
// does for materialised attention (K = the padded head dimension, C = the padded key count).
// Shared by the kernels' cycle model (model/kernels) and the lowering's split ranking
// (workload/lower_gemm.cpp). The column-group cost is K 11.1's 1063 for weights in standard
// memory and 940 for weights in interleaved memory (or staged there): the `_interleaved`
// kernels, whose weights must lie in interleaved memory.
#include <array>
#include <cstdint>

namespace lockstep::arch {

inline constexpr uint64_t kAmpGroupCostStandard = 1063, kAmpGroupCostInterleaved = 940;

//   call = 294 + (Kb/16) x (ceil(Cb x rows / 4) + ceil((Cb/16) x G / 4)),  Kb = ceil16(K),
//   Cb = ceil16(columns), G the column-group cost; nothing to multiply costs nothing.
inline uint64_t amp_f16_gemm_cycles(uint64_t rows, uint64_t k, uint64_t columns,
                                    uint64_t group_cost = kAmpGroupCostStandard) {
  constexpr uint64_t kCallOverhead = 294;
  if (rows == 0 || k == 0 || columns == 0) return 0;
  const uint64_t k_block = (k + 15) / 16 * 16, column_block = (columns + 15) / 16 * 16;
  return kCallOverhead + k_block / 16 * ((column_block * rows + 3) / 4 + (column_block / 16 * group_cost + 3) / 4);
}

// The same call as three terms (the call, the row blocks, the column groups) whose sum with
// weights 294, 1, 1 it is: the cost model calibration fits (docs/calibration.md).
inline std::array<double, 3> amp_f16_gemm_terms(uint64_t rows, uint64_t k, uint64_t columns,
                                                uint64_t group_cost = kAmpGroupCostStandard) {
  if (rows == 0 || k == 0 || columns == 0) return {0, 0, 0};
  const uint64_t k_block = (k + 15) / 16 * 16, column_block = (columns + 15) / 16 * 16;
  return {1.0, static_cast<double>(k_block / 16 * ((column_block * rows + 3) / 4)),
          static_cast<double>(k_block / 16 * ((column_block / 16 * group_cost + 3) / 4))};
}

}  // namespace lockstep::arch
