#pragma once
// Linking a vendor-compiled ELF object (the worker code of Lockstep's intrinsic symbols:
// kernels, the bulk patcher) into a tile's device image: its allocated sections laid out
// from a base address, its RELA relocations applied (IPU21-DEVICE.md section 5.2's types 0,
// 3, 4 and 8), its undefined symbols resolved against the tile's runtime symbols.
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "sim/device/elf_object.hpp"

namespace lockstep::arch {

struct LinkedObject {
  uint32_t base = 0;
  std::vector<uint8_t> bytes;               // the allocated sections, laid out from base
  std::map<std::string, uint32_t> symbols;  // every defined symbol's address
};

// Bytes the sections take once aligned (sections start at multiples of their alignment).
uint32_t linked_size(const ElfObject& object);

// InputError, one line naming `file`: an undefined symbol the runtime does not define, a
// relocation type other than 0/3/4/8, a value that does not fit its field, a relocation
// outside its section.
LinkedObject link_object(const ElfObject& object, uint32_t base, const std::map<std::string, uint32_t>& runtime,
                         const std::string& file);

// The one-word branch a slot holds once its symbol is linked: `bri target` (section 5.2).
inline uint32_t bri_word(uint32_t target) { return 0x40800000u | (target >> 2); }

}  // namespace lockstep::arch
