#pragma once
// Contention units of tile SRAM (IPU21-EXCHANGE.md section 1) as distinct keys: 16 KiB
// elements below the interleaved base, 32 KiB logical elements above it.
#include <cstdint>
#include <vector>

#include "arch/machine.hpp"

namespace lockstep::model {

uint32_t element_key(const arch::MachineDescription& machine, uint32_t address);

// The keys of every element that [address, address + bytes) touches, ascending.
std::vector<uint32_t> element_keys(const arch::MachineDescription& machine, uint64_t address,
                                   uint64_t bytes);

}  // namespace lockstep::model
