// `device export --object`: a Colossus ELF object (written byte by byte here from the ELF32
// layout and IPU21-DEVICE.md section 5.2's relocation types) defining a kernel's symbol is
// linked into every tile, its relocation resolved against the tile's runtime, the kernel's
// slot branching to it; the image imports back and exports to the same bytes.
#include <gtest/gtest.h>

#include <cstring>
#include <nlohmann/json.hpp>

#include "arch/machine.hpp"
#include "arch/topology.hpp"
#include "sim/device/application.hpp"
#include "support/elf_objects.hpp"
#include "support/test_support.hpp"

namespace lockstep::testing {
namespace {

// .text = { br $m10, a word relocated (type 4) to `target` }, defining `defined` at .text+0.
std::string elf_object(const std::string& defined, const std::string& target, uint32_t type = 4) {
  const std::string strtab = std::string("\0", 1) + defined + '\0' + target + '\0';
  const std::string shstrtab = std::string("\0.text\0.rela.text\0.symtab\0.strtab\0.shstrtab\0", 44);
  std::string text, rela, symtab;
  put32(text, 0x43a00000);
  put32(text, 0);
  put32(rela, 4);
  put32(rela, (2u << 8) | type);
  put32(rela, 0);
  symtab.append(16, '\0');
  for (const auto& [name, section] : {std::make_pair(uint32_t{1}, uint16_t{1}),
                                      std::make_pair(static_cast<uint32_t>(2 + defined.size()), uint16_t{0})}) {
    put32(symtab, name);
    put32(symtab, 0);
    put32(symtab, 0);
    symtab.push_back(static_cast<char>(0x12));
    symtab.push_back('\0');
    put16(symtab, section);
  }
  return elf_file({{1, 1, 6, 0, 0, 4, 0, text},
                   {7, 4, 0, 3, 1, 4, 12, rela},
                   {18, 2, 0, 4, 1, 4, 16, symtab},
                   {26, 3, 0, 0, 0, 1, 0, strtab},
                   {34, 3, 0, 0, 0, 1, 0, shstrtab}});
}

uint32_t word_at(const arch::TileImage& image, uint32_t address) {
  for (const auto& s : image.segments) {
    if (address >= s.address && address + 4 <= s.address + s.data.size()) {
      uint32_t w;
      std::memcpy(&w, s.data.data() + (address - s.address), 4);
      return w;
    }
  }
  return 0;
}

uint32_t region(const arch::Application& app, uint32_t physical, const std::string& name) {
  for (const auto& r : app.debug_regions) {
    if (r.physical_tile == physical && r.name == name) return r.address;
  }
  ADD_FAILURE() << name;
  return 0;
}

TEST(DeviceObjectLink, AKernelObjectIsLinkedAndTheImageRoundTrips) {
  const std::string dir = temp_dir("object_link");
  const std::string pkg = source_path("tests/integration/packages/repeat27.yaml");
  const std::string object = dir + "/kernels.o", image = dir + "/app.ipuexe";
  write_file(object, elf_object("lockstep_kernel_checksum_2", "lockstep_patch_row"));
  auto r = run_lockstep({"device", "export", pkg, "-o", image, "--object", object});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const arch::Application app = arch::read_application(image);
  const uint32_t physical = arch::Topology(arch::load_machine("ipu21-c600-t16")).physical(1);
  const arch::TileImage* tile = nullptr;
  for (const auto& t : app.tiles) tile = t.physical_tile == physical ? &t : tile;
  ASSERT_NE(tile, nullptr);
  const uint32_t linked = region(app, physical, "linked object");
  const uint32_t slot = region(app, physical, "lockstep_kernel_checksum_2");
  EXPECT_EQ(word_at(*tile, slot), 0x40800000u | (linked >> 2)) << "bri to the kernel's code";
  EXPECT_EQ(word_at(*tile, linked), 0x43a00000u);
  EXPECT_EQ(word_at(*tile, linked + 4), region(app, physical, "lockstep_patch_row")) << "type 4 relocation";

  const std::string imported = dir + "/imported.capnp", again = dir + "/again.ipuexe";
  r = run_lockstep({"device", "import", image, "--machine", "ipu21-c600-t16", "-o", imported});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  ASSERT_EQ(run_lockstep({"device", "export", imported, "-o", again, "--object", object}).exit_code, 0);
  EXPECT_EQ(read_file(image), read_file(again));
  r = run_lockstep({"run", imported, "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(nlohmann::json::parse(r.out)["total_cycles"], 15168 + 18)
      << "repeat27's cycles (run_packages_test) and the completion store of the image's run call";
}

TEST(DeviceObjectLink, WhatCannotBeLinkedIsOneLine) {
  const std::string dir = temp_dir("object_link_bad");
  const std::string pkg = source_path("tests/integration/packages/repeat27.yaml");
  const std::string object = dir + "/kernels.o";
  write_file(object, elf_object("lockstep_kernel_copy_2", "lockstep_patch_row"));
  auto r = run_lockstep({"device", "export", pkg, "-o", dir + "/a.ipuexe", "--object", object});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("does not define lockstep_kernel_checksum_2"), std::string::npos) << r.err;
  write_file(object, elf_object("lockstep_kernel_checksum_2", "memcpy"));
  r = run_lockstep({"device", "export", pkg, "-o", dir + "/a.ipuexe", "--object", object});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("undefined symbol 'memcpy'"), std::string::npos) << r.err;
  write_file(object, elf_object("lockstep_kernel_checksum_2", "lockstep_patch_row", 9));
  r = run_lockstep({"device", "export", pkg, "-o", dir + "/a.ipuexe", "--object", object});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("only types 0, 3, 4 and 8 are supported"), std::string::npos) << r.err;
  EXPECT_FALSE(std::filesystem::exists(dir + "/a.ipuexe"));
}

}  // namespace
}  // namespace lockstep::testing
