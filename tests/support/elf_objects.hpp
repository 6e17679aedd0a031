#pragma once
// A Colossus ELF object written byte by byte (ELF32 little-endian, e_machine 0xf8, IPU21-DEVICE.md
// section 5.2): a .text of one `br $m10` per symbol, each symbol global and defined at its
// word, no relocations. What a test links with `device export --object` when the model runs
// the kernels and the object's code only has to exist.
#include <cstdint>
#include <string>
#include <vector>

namespace lockstep::testing {

// One section of elf_file: its header fields but the offset, and its bytes.
struct ElfPart {
  uint32_t name = 0, type = 0, flags = 0, link = 0, info = 0, align = 1, entsize = 0;
  std::string bytes;
};

inline void put32(std::string& out, uint32_t v) {
  for (int b = 0; b < 4; ++b) out.push_back(static_cast<char>(v >> (8 * b)));
}
inline void put16(std::string& out, uint16_t v) {
  out.push_back(static_cast<char>(v));
  out.push_back(static_cast<char>(v >> 8));
}

// An ELF32 LE relocatable Colossus file: the header, the parts' bytes (4-aligned), then the
// section headers (the null one first, the parts in order; the last part is .shstrtab).
inline std::string elf_file(const std::vector<ElfPart>& parts) {
  std::vector<uint32_t> offsets;
  uint32_t at = 52;
  for (const ElfPart& p : parts) {
    offsets.push_back(at);
    at += static_cast<uint32_t>((p.bytes.size() + 3) / 4 * 4);
  }
  std::string elf = std::string(
                        "\x7f"
                        "ELF\x01\x01\x01",
                        7) +
                    std::string(9, '\0');
  put16(elf, 1);     // ET_REL
  put16(elf, 0xf8);  // Colossus
  put32(elf, 1);
  put32(elf, 0);
  put32(elf, 0);
  put32(elf, at);  // e_shoff
  put32(elf, 0);
  for (uint16_t v : {uint16_t{52}, uint16_t{0}, uint16_t{0}, uint16_t{40}, static_cast<uint16_t>(parts.size() + 1),
                     static_cast<uint16_t>(parts.size())}) {
    put16(elf, v);
  }
  for (const ElfPart& p : parts) elf += p.bytes + std::string((4 - p.bytes.size() % 4) % 4, '\0');
  elf.append(40, '\0');  // the null section header
  for (size_t i = 0; i < parts.size(); ++i) {
    const ElfPart& p = parts[i];
    for (uint32_t v : {p.name, p.type, p.flags, uint32_t{0}, offsets[i], static_cast<uint32_t>(p.bytes.size()), p.link,
                       p.info, p.align, p.entsize}) {
      put32(elf, v);
    }
  }
  return elf;
}

// .text holds one `br $m10` per name, each a global function symbol at its word.
inline std::string elf_object_defining(const std::vector<std::string>& names) {
  std::string text, strtab(1, '\0'), symtab(16, '\0');
  for (size_t i = 0; i < names.size(); ++i) {
    put32(text, 0x43a00000u);  // br $m10
    put32(symtab, static_cast<uint32_t>(strtab.size()));
    put32(symtab, static_cast<uint32_t>(4 * i));
    put32(symtab, 4);
    symtab.push_back(static_cast<char>(0x12));  // global function
    symtab.push_back('\0');
    put16(symtab, 1);  // .text
    strtab += names[i] + '\0';
  }
  const std::string shstrtab("\0.text\0.symtab\0.strtab\0.shstrtab\0", 33);
  return elf_file({{1, 1, 6, 0, 0, 4, 0, text},
                   {7, 2, 0, 3, 1, 4, 16, symtab},
                   {15, 3, 0, 0, 0, 1, 0, strtab},
                   {23, 3, 0, 0, 0, 1, 0, shstrtab}});
}

}  // namespace lockstep::testing
