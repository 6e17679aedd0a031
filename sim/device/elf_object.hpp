#pragma once
// A Colossus ELF object (ELF32 little-endian, e_machine 0xf8: IPU21-DEVICE.md section 5.2):
// the vendor-compiled worker code `device export --object` links for intrinsic symbols.
#include <cstdint>
#include <string>
#include <vector>

namespace lockstep::arch {

inline constexpr uint16_t kColossusMachine = 0xf8;

// What `device export --object` links (sim/device/object_link.hpp): the allocated sections, every
// symbol and the RELA relocations against allocated sections.
struct ElfSection {
  std::string name;
  uint32_t index = 0;  // in the file's section header table
  uint32_t flags = 0;  // SHF_*: 2 alloc, 4 exec
  uint32_t align = 1;
  uint32_t size = 0;
  std::vector<uint8_t> data;  // empty for SHT_NOBITS
};
struct ElfSymbol {
  std::string name;
  uint32_t value = 0;
  uint16_t section = 0;  // 0: undefined (resolved by the linker)
};
struct ElfRelocation {
  uint32_t section = 0;  // the section index the relocation patches
  uint32_t offset = 0;
  uint32_t type = 0;
  uint32_t symbol = 0;  // index into ElfObject::symbols
  int32_t addend = 0;
};
struct ElfObject {
  std::vector<ElfSection> sections;  // SHF_ALLOC ones, in file order
  std::vector<ElfSymbol> symbols;    // the symbol table, in order (index 0 the null symbol)
  std::vector<ElfRelocation> relocations;
};

// InputError, one line naming the file, for anything that is not a well-formed ELF32 LE
// Colossus object, or that has REL (not RELA) relocations against allocated sections.
ElfObject read_elf_object(const std::string& path);

}  // namespace lockstep::arch
