#pragma once
// Contention units of tile SRAM (IPU21-EXCHANGE.md section 1) as distinct keys: 16 KiB
// elements below the interleaved base, 32 KiB logical elements above it.
#include <cstdint>
#include <vector>

#include "arch/machine.hpp"

namespace lockstep::model {

uint32_t element_key(const arch::MachineDescription& machine, uint32_t address);

// Calls f(key) for every element that [address, address + bytes) touches, ascending.
template <class F>
void for_each_element_key(const arch::MachineDescription& machine, uint64_t address, uint64_t bytes, F&& f) {
  const uint64_t end = address + bytes;
  uint64_t a = address;
  while (a < end && a <= UINT32_MAX) {
    f(element_key(machine, static_cast<uint32_t>(a)));
    const bool interleaved = a >= machine.interleaved_base;
    const uint64_t unit = interleaved ? machine.interleaved_element_bytes : machine.element_bytes;
    const uint64_t origin = interleaved ? machine.interleaved_base : 0;
    a = origin + ((a - origin) / unit + 1) * unit;
  }
}

// The keys of every element that [address, address + bytes) touches, ascending.
std::vector<uint32_t> element_keys(const arch::MachineDescription& machine, uint64_t address, uint64_t bytes);

}  // namespace lockstep::model
