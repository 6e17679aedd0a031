#include "model/memory_elements.hpp"

namespace lockstep::model {

namespace {
constexpr uint32_t kInterleavedKeyBase = 1u << 20;  // keeps the two regions' keys apart
}

uint32_t element_key(const arch::MachineDescription& machine, uint32_t address) {
  if (address < machine.interleaved_base) return address / machine.element_bytes;
  return kInterleavedKeyBase + (address - machine.interleaved_base) / machine.interleaved_element_bytes;
}

std::vector<uint32_t> element_keys(const arch::MachineDescription& machine, uint64_t address, uint64_t bytes) {
  std::vector<uint32_t> keys;
  for_each_element_key(machine, address, bytes, [&](uint32_t key) { keys.push_back(key); });
  return keys;
}

}  // namespace lockstep::model
