#include "sim/device/object_link.hpp"

#include "io/errors.hpp"
#include "io/hex.hpp"

namespace lockstep::arch {
namespace {

constexpr uint16_t kAbsoluteSection = 0xfff1;  // SHN_ABS

uint32_t align_up(uint32_t value, uint32_t align) { return (value + align - 1) / align * align; }

std::map<uint32_t, uint32_t> section_offsets(const ElfObject& object) {
  std::map<uint32_t, uint32_t> offsets;  // section index -> offset in the block
  uint32_t at = 0;
  for (const ElfSection& s : object.sections) {
    at = align_up(at, s.align);
    offsets[s.index] = at;
    at += s.size;
  }
  return offsets;
}

}  // namespace

uint32_t linked_size(const ElfObject& object) {
  uint32_t at = 0;
  for (const ElfSection& s : object.sections) at = align_up(at, s.align) + s.size;
  return align_up(at, 8);
}

LinkedObject link_object(const ElfObject& object, uint32_t base, const std::map<std::string, uint32_t>& runtime,
                         const std::string& file) {
  const auto fail = [&](const std::string& what) -> void { throw InputError(file + ": " + what); };
  const std::map<uint32_t, uint32_t> offsets = section_offsets(object);
  LinkedObject linked;
  linked.base = base;
  linked.bytes.assign(linked_size(object), 0);
  for (const ElfSection& s : object.sections) {
    std::copy(s.data.begin(), s.data.end(), linked.bytes.begin() + offsets.at(s.index));
  }
  std::vector<uint64_t> address(object.symbols.size(), UINT64_MAX);  // UINT64_MAX: unresolved
  for (size_t i = 0; i < object.symbols.size(); ++i) {
    const ElfSymbol& sym = object.symbols[i];
    if (sym.section == kAbsoluteSection) {
      address[i] = sym.value;
    } else if (offsets.count(sym.section)) {
      address[i] = base + offsets.at(sym.section) + sym.value;
      if (!sym.name.empty()) linked.symbols[sym.name] = static_cast<uint32_t>(address[i]);
    } else if (sym.section == 0 && runtime.count(sym.name)) {
      address[i] = runtime.at(sym.name);
    }
  }
  for (const ElfRelocation& r : object.relocations) {
    if (r.type == 0) continue;
    if (address[r.symbol] == UINT64_MAX) {
      fail("undefined symbol '" + object.symbols[r.symbol].name +
           "': neither the object nor Lockstep's runtime defines it");
    }
    const auto section = offsets.find(r.section);
    const ElfSection* s = nullptr;
    for (const ElfSection& c : object.sections) s = c.index == r.section ? &c : s;
    if (section == offsets.end() || s == nullptr || uint64_t(r.offset) + 4 > s->size) {
      fail("a relocation at offset " + std::to_string(r.offset) + " lies outside its section");
    }
    const int64_t value = int64_t(address[r.symbol]) + r.addend;
    uint8_t* at = linked.bytes.data() + section->second + r.offset;
    uint32_t word = uint32_t(at[0]) | uint32_t(at[1]) << 8 | uint32_t(at[2]) << 16 | uint32_t(at[3]) << 24;
    const std::string where =
        "relocation type " + std::to_string(r.type) + " at " + hex(base + section->second + r.offset);
    if (r.type == 4) {
      if (value < 0 || value > int64_t(UINT32_MAX))
        fail(where + ": " + std::to_string(value) + " does not fit 32 bits");
      word = static_cast<uint32_t>(value);
    } else if (r.type == 3) {
      if (value < 0 || value >= (1 << 20)) fail(where + ": " + std::to_string(value) + " does not fit 20 bits");
      word = (word & ~0xfffffu) | static_cast<uint32_t>(value);
    } else if (r.type == 8) {
      if (value < 0 || value % 4 != 0 || value >= (1 << 21))
        fail(where + ": " + std::to_string(value) + " is no word address below 2^21");
      word = (word & ~0x7ffffu) | static_cast<uint32_t>(value >> 2);
    } else {
      fail(where + ": only types 0, 3, 4 and 8 are supported (IPU21-DEVICE.md section 5.2)");
    }
    for (int b = 0; b < 4; ++b) at[b] = static_cast<uint8_t>(word >> (8 * b));
  }
  return linked;
}

}  // namespace lockstep::arch
