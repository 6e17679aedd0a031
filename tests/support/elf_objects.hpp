#pragma once
// A Colossus ELF object written byte by byte (ELF32 little-endian, e_machine 0xf8, IPU21-DEVICE.md
// section 5.2): a .text of one `br $m10` per symbol, each symbol global and defined at its
// word, no relocations. What a test links with `device export --object` when the model runs
// the kernels and the object's code only has to exist.
#include <cstdint>
#include <string>
#include <vector>

namespace lockstep::testing {

inline std::string elf_object_defining(const std::vector<std::string>& names) {
  const auto put32 = [](std::string& out, uint32_t v) {
    for (int b = 0; b < 4; ++b) out.push_back(static_cast<char>(v >> (8 * b)));
  };
  const auto put16 = [](std::string& out, uint16_t v) {
    out.push_back(static_cast<char>(v));
    out.push_back(static_cast<char>(v >> 8));
  };
  std::string text, strtab(1, '\0'), symtab(16, '\0');
  const std::string shstrtab("\0.text\0.symtab\0.strtab\0.shstrtab\0", 33);
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
  const std::vector<std::string> bodies = {text, symtab, strtab, shstrtab};
  std::vector<uint32_t> offsets;
  uint32_t at = 52;
  for (const std::string& b : bodies) {
    offsets.push_back(at);
    at += static_cast<uint32_t>((b.size() + 3) / 4 * 4);
  }
  std::string elf = std::string("\x7f" "ELF\x01\x01\x01", 7) + std::string(9, '\0');
  put16(elf, 1);     // ET_REL
  put16(elf, 0xf8);  // Colossus
  put32(elf, 1);
  put32(elf, 0);
  put32(elf, 0);
  put32(elf, at);  // e_shoff
  put32(elf, 0);
  for (uint16_t v : {52, 0, 0, 40, 5, 4}) put16(elf, v);
  for (const std::string& b : bodies) elf += b + std::string((4 - b.size() % 4) % 4, '\0');
  // name, type, flags, addr, offset, size, link, info, align, entsize
  const uint32_t headers[5][10] = {{0, 0, 0, 0, 0, 0, 0, 0, 0, 0},
                                   {1, 1, 6, 0, offsets[0], static_cast<uint32_t>(text.size()), 0, 0, 4, 0},
                                   {7, 2, 0, 0, offsets[1], static_cast<uint32_t>(symtab.size()), 3, 1, 4, 16},
                                   {15, 3, 0, 0, offsets[2], static_cast<uint32_t>(strtab.size()), 0, 0, 1, 0},
                                   {23, 3, 0, 0, offsets[3], static_cast<uint32_t>(shstrtab.size()), 0, 0, 1, 0}};
  for (const auto& h : headers) {
    for (uint32_t v : h) put32(elf, v);
  }
  return elf;
}

}  // namespace lockstep::testing
