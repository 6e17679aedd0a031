#pragma once
// The defined symbols of a Colossus ELF object (ELF32 little-endian, e_machine 0xf8:
// docs/IPU21-DEVICE.md section 5.2), which `device export --object` needs to find the
// vendor-compiled worker code of intrinsic symbols.
#include <set>
#include <string>

namespace lockstep::arch {

inline constexpr uint16_t kColossusMachine = 0xf8;

// Names of the symbols the object defines (section index not 0). InputError, one line
// naming the file, for anything that is not an ELF32 LE Colossus object or is cut short.
std::set<std::string> read_elf_symbols(const std::string& path);

}  // namespace lockstep::arch
