// The IPU21 stack's runtime helpers that the model runs as kernels (IPU21-KERNELS.md 14.1).
//
// `ipu_stack_static_sample_cycle` ($m2 destination, link $m10): worker 0 stores $COUNT_L, the
// low 32 bits of the tile's cycle counter, at the destination (4-aligned: an st32). The tile
// hands the counter's value in as the last scalar (reads_cycle_counter), so the samples an
// image writes are the simulated cycles. Cycles (IPU21-DEVICE.md 9.2: 6 supervisor
// instructions and 7 worker instructions; the call's own 3 slots are counted by the tile):
// 10 instruction slots.
#include <string>
#include <vector>

#include "arch/stack_kernels.hpp"
#include "model/kernels/stack_family.hpp"
#include "model/kernels/tensor_io.hpp"

namespace lockstep::model {
namespace {

void sample_cycle(const std::string&, const arch::StackKernel&, const kernels::Operands& operands,
                  const kernels::Scalars& scalars, Sram& memory) {
  if (operands[0] % 4 != 0) throw std::out_of_range("ipu_stack_static_sample_cycle: destination is not 4-aligned");
  const std::vector<uint32_t> value{static_cast<uint32_t>(scalars.back())};
  kernels::write_array(memory, operands[0], value, "ipu_stack_static_sample_cycle destination");
}

uint64_t cycles(const arch::StackKernel&, const kernels::Scalars&, const arch::MachineDescription& machine) {
  constexpr uint64_t kInstructions = 10;
  return kInstructions * machine.supervisor_cycles_per_instruction;
}

const kernels::StackFamilyRegistration registration{
    {{arch::StackKernelFamily::SampleCycle}, sample_cycle, cycles, /*reads_cycle_counter=*/true}};

}  // namespace
}  // namespace lockstep::model
