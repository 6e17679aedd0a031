#include "model/memory_elements.hpp"

namespace lockstep::model {

namespace {
constexpr uint32_t kInterleavedKeyBase = 1u << 20;  // keeps the two regions' keys apart
}

uint32_t element_key(const arch::MachineDescription& machine, uint32_t address) {
  if (address < machine.interleaved_base) return address / machine.element_bytes;
  return kInterleavedKeyBase +
         (address - machine.interleaved_base) / machine.interleaved_element_bytes;
}

std::vector<uint32_t> element_keys(const arch::MachineDescription& machine, uint64_t address,
                                   uint64_t bytes) {
  std::vector<uint32_t> keys;
  if (bytes == 0) return keys;
  const uint64_t end = address + bytes;
  uint64_t a = address;
  while (a < end && a <= UINT32_MAX) {
    const auto key = element_key(machine, static_cast<uint32_t>(a));
    keys.push_back(key);
    const uint64_t unit = a < machine.interleaved_base ? machine.element_bytes
                                                       : machine.interleaved_element_bytes;
    const uint64_t origin = a < machine.interleaved_base ? 0 : machine.interleaved_base;
    a = origin + ((a - origin) / unit + 1) * unit;
  }
  return keys;
}

}  // namespace lockstep::model
