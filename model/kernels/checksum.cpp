// checksum and checksum_xxh3: operands [src, dst], scalars [bytes]. Write a 64-bit digest of
// src..src+bytes as 8 little-endian bytes at dst: FNV-1a 64 (checksum) or XXH3 64
// (checksum_xxh3, what the compiler's payload proof emits). Both are Lockstep's own
// instrumentation (no stack kernel does their job; a device export needs worker code for
// them, docs/device.md), and are charged the same cycles [decision]:
// FNV-1a is sequential, so one worker runs an xor and a multiply per byte plus a
// 6-instruction prologue and epilogue (the two stores); checksum_xxh3 keeps that charge so
// a package's horizons do not depend on which digest its proof uses (docs/timing.md).
#include <vector>

#include "formats/package.hpp"
#include "model/kernel_registry.hpp"

namespace lockstep::model {
namespace {

std::string check(const arch::KernelStep& step) {
  if (auto e = check_counts(step, 2, 1); !e.empty()) return e;
  if (step.scalars[0] < 0 || step.scalars[0] > 0x100000) {
    return step.name + ": bytes must be non-negative and within SRAM";
  }
  return "";
}

uint64_t fnv1a64_of(const uint8_t* data, size_t size) { return arch::fnv1a64(data, size); }

// The span is hashed where it lies in SRAM: a proof run checksums tens of gigabytes.
template <uint64_t (*Digest)(const uint8_t*, size_t)>
void execute(const std::vector<uint32_t>& operands, const std::vector<int64_t>& scalars, Sram& memory) {
  const auto bytes = static_cast<uint32_t>(scalars[0]);
  if (!memory.contains(operands[0], bytes) || !memory.contains(operands[1], 8)) {
    throw std::out_of_range("checksum: span outside SRAM");
  }
  const uint64_t digest = Digest(memory.span(operands[0], bytes).data(), bytes);
  uint8_t out[8];
  for (int i = 0; i < 8; ++i) out[i] = static_cast<uint8_t>(digest >> (8 * i));
  memory.write(operands[1], 8, out);
}

uint64_t cycles(const std::vector<int64_t>& scalars, const arch::MachineDescription& machine) {
  return machine.supervisor_cycles_per_instruction * (6 + 2 * static_cast<uint64_t>(scalars[0]));
}

std::vector<double> terms(const std::vector<int64_t>& scalars, const arch::MachineDescription& machine) {
  const double issue = machine.supervisor_cycles_per_instruction;
  return {issue * static_cast<double>(scalars[0]), issue};
}

const CostModel kCost{{"instructions_per_byte", "instructions_per_call"}, {2, 6}, terms};
const KernelRegistration fnv{{"checksum", check, execute<fnv1a64_of>, cycles, false, kCost}};
const KernelRegistration xxh3{{"checksum_xxh3", check, execute<arch::xxh3_64>, cycles, false, kCost}};

}  // namespace
}  // namespace lockstep::model
