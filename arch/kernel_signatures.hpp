#pragma once
// What a package may ask of each compute kernel: operand and scalar counts, the range of
// every scalar and the bytes each operand spans. validate_package checks kernel steps with
// this table; model/kernels/ implements exactly these names (a test holds the two equal).
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace lockstep::arch {

struct KernelSignature {
  std::string name;
  std::vector<size_t> operand_counts;  // the allowed numbers of operands
  size_t scalars;
  // "" when the scalars are in range, else "scalars[i]: what is wrong" (one line).
  std::function<std::string(const std::vector<int64_t>& scalars, uint64_t sram_bytes)> check_scalars;
  // Bytes each operand spans (only called once check_scalars passed).
  std::function<std::vector<uint64_t>(const std::vector<int64_t>& scalars, size_t operands)> operand_bytes;
  // Bit j set: scalar j may be negative, so a kernel reads its register as a signed 32-bit
  // value (the rest are unsigned; supervisor/supervisor_code.hpp passes scalars in registers).
  uint32_t signed_scalars = 0;
};

// nullptr for an unknown name. Lockstep's kernels by name, and the IPU21 stack's by symbol
// (arch/stack_kernels.hpp).
const KernelSignature* find_kernel_signature(const std::string& name);
const std::vector<KernelSignature>& kernel_signatures();  // Lockstep's own, sorted by name
std::string kernel_signature_names();                     // "add, cast, ..." for messages

}  // namespace lockstep::arch
