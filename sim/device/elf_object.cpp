// Reading the sections, symbols and relocations of an ELF32 little-endian object, every offset checked against
// the file's size before it is read (the file is user input).
#include "sim/device/elf_object.hpp"

#include <algorithm>
#include <cstring>
#include <set>

#include "io/errors.hpp"
#include "io/input_file.hpp"

namespace lockstep::arch {
namespace {

class Bytes {
 public:
  Bytes(const std::string& data, std::string file) : data_(data), file_(std::move(file)) {}
  [[noreturn]] void fail(const std::string& what) const { throw InputError(file_ + ": " + what); }
  void need(uint64_t offset, uint64_t size, const char* what) const {
    if (offset > data_.size() || size > data_.size() - offset) {
      fail(std::string("truncated ELF object: ") + what + " lies beyond the file's " + std::to_string(data_.size()) +
           " bytes");
    }
  }
  uint32_t u32(uint64_t at) const {
    uint32_t v;
    std::memcpy(&v, data_.data() + at, 4);
    return v;
  }
  uint16_t u16(uint64_t at) const {
    uint16_t v;
    std::memcpy(&v, data_.data() + at, 2);
    return v;
  }
  uint8_t u8(uint64_t at) const { return static_cast<uint8_t>(data_[at]); }
  const std::string& data() const { return data_; }

 private:
  const std::string& data_;
  std::string file_;
};

void check_header(const Bytes& b) {
  b.need(0, 52, "the ELF header");
  if (std::memcmp(b.data().data(),
                  "\x7f"
                  "ELF",
                  4) != 0)
    b.fail("not an ELF object (no \\x7fELF magic)");
  if (b.u8(4) != 1) b.fail("not ELF32 (class " + std::to_string(b.u8(4)) + "; Colossus objects are ELF32)");
  if (b.u8(5) != 1) b.fail("not little-endian (data " + std::to_string(b.u8(5)) + ")");
  if (b.u16(18) != kColossusMachine) {
    b.fail("e_machine " + std::to_string(b.u16(18)) + " is not Colossus (0xf8 = 248)");
  }
}

// A NUL-terminated name at `offset` of the string table [table, table + size).
std::string name_at(const Bytes& b, uint32_t table, uint32_t size, uint32_t offset) {
  if (offset >= size) b.fail("a name offset " + std::to_string(offset) + " is beyond its string table");
  const char* start = b.data().data() + table + offset;
  const size_t length = strnlen(start, size - offset);
  if (length == size - offset) b.fail("a name runs off its string table");
  return std::string(start, length);
}

struct SectionHeader {
  uint32_t name, type, flags, offset, size, link, info, align, entsize;
};

std::vector<SectionHeader> section_headers(const Bytes& b) {
  const uint32_t shoff = b.u32(32);
  const uint16_t shentsize = b.u16(46), shnum = b.u16(48);
  if (shnum > 0 && shentsize < 40) b.fail("e_shentsize " + std::to_string(shentsize) + " is below 40");
  b.need(shoff, uint64_t{shnum} * shentsize, "the section headers");
  std::vector<SectionHeader> out;
  for (uint32_t i = 0; i < shnum; ++i) {
    const uint64_t sh = shoff + uint64_t{i} * shentsize;
    out.push_back({b.u32(sh), b.u32(sh + 4), b.u32(sh + 8), b.u32(sh + 16), b.u32(sh + 20), b.u32(sh + 24),
                   b.u32(sh + 28), b.u32(sh + 32), b.u32(sh + 36)});
    if (out.back().type != 8) b.need(out.back().offset, out.back().size, "a section");  // 8: SHT_NOBITS
  }
  return out;
}

void read_symbols(const Bytes& b, const std::vector<SectionHeader>& sh, ElfObject& object) {
  std::set<std::string> defined_globals;
  for (const SectionHeader& h : sh) {
    if (h.type != 2) continue;  // SHT_SYMTAB
    if (h.link >= sh.size()) b.fail("the symbol table's string table does not exist");
    for (uint64_t s = h.offset; s + 16 <= uint64_t{h.offset} + h.size; s += 16) {
      ElfSymbol symbol;
      const uint32_t name = b.u32(s);
      symbol.name = name == 0 ? "" : name_at(b, sh[h.link].offset, sh[h.link].size, name);
      symbol.value = b.u32(s + 4);
      symbol.section = b.u16(s + 14);
      // A global symbol defined twice names two places for one call (STB_GLOBAL = 1).
      const bool global = (b.u8(s + 12) >> 4) == 1;
      if (global && symbol.section != 0 && !symbol.name.empty() && !defined_globals.insert(symbol.name).second) {
        b.fail("symbol " + symbol.name + " is defined twice");
      }
      object.symbols.push_back(std::move(symbol));
    }
  }
}

}  // namespace

ElfObject read_elf_object(const std::string& path) {
  const std::string data = read_regular_file(path, uint64_t{1} << 30);
  const Bytes b(data, path);
  check_header(b);
  const std::vector<SectionHeader> sh = section_headers(b);
  const uint16_t shstrndx = b.u16(50);
  if (shstrndx >= sh.size()) b.fail("e_shstrndx " + std::to_string(shstrndx) + " does not exist");
  ElfObject object;
  for (uint32_t i = 0; i < sh.size(); ++i) {
    if (!(sh[i].flags & 2)) continue;  // SHF_ALLOC
    ElfSection section{name_at(b, sh[shstrndx].offset, sh[shstrndx].size, sh[i].name),
                       i,
                       sh[i].flags,
                       std::max<uint32_t>(1, sh[i].align),
                       sh[i].size,
                       {}};
    if (section.align > 0x4000 || (section.align & (section.align - 1)) != 0) {
      b.fail("section " + section.name + ": alignment " + std::to_string(section.align) +
             " is not a power of two up to 16 KiB");
    }
    if (section.size > 0x9c000) {
      b.fail("section " + section.name + ": " + std::to_string(section.size) + " bytes, more than a tile's 638976");
    }
    if (sh[i].type != 8) section.data.assign(data.begin() + sh[i].offset, data.begin() + sh[i].offset + sh[i].size);
    object.sections.push_back(std::move(section));
  }
  uint64_t total = 0;
  for (const ElfSection& section : object.sections) total += section.size + section.align;
  if (total > 0x9c000) b.fail("its sections take " + std::to_string(total) + " bytes, more than a tile's 638976");
  read_symbols(b, sh, object);
  for (const SectionHeader& h : sh) {
    const bool rela = h.type == 4, rel = h.type == 9;
    if ((!rela && !rel) || h.info >= sh.size() || !(sh[h.info].flags & 2)) continue;
    if (rel) b.fail("REL relocations (without addends) are not supported; link with RELA");
    for (uint64_t r = h.offset; r + 12 <= uint64_t{h.offset} + h.size; r += 12) {
      const uint32_t info = b.u32(r + 4);
      ElfRelocation reloc{h.info, b.u32(r), info & 0xff, info >> 8, static_cast<int32_t>(b.u32(r + 8))};
      if (reloc.symbol >= object.symbols.size())
        b.fail("a relocation names symbol " + std::to_string(reloc.symbol) + ", which does not exist");
      object.relocations.push_back(reloc);
    }
  }
  return object;
}

}  // namespace lockstep::arch
