// Reading a package file: the form is picked from the content, never from the file name.
#include <cstring>
#include <memory>
#include <utility>

#include "formats/capture.hpp"
#include "formats/package_io.hpp"
#include "io/errors.hpp"
#include "io/mapped_file.hpp"

namespace lockstep::arch {

Package read_package_from_bytes(const uint8_t* data, size_t size, const std::string& name,
                                std::shared_ptr<const void> keeper) {
  if (size >= 6 && std::memcmp(data, kPackageMagic, 6) == 0) {
    if (size < kPackageMagicBytes || std::memcmp(data, kPackageMagic, kPackageMagicBytes) != 0) {
      throw InputError(name + ": unsupported package container (expected magic " + std::string(kPackageMagic) + ")");
    }
    return parse_package_capnp(data, size, name, std::move(keeper));
  }
  if (size > 0 && std::memchr(data, '\0', size) != nullptr) {
    throw InputError(name + ": neither a Cap'n Proto package (no " + std::string(kPackageMagic) +
                     " magic) nor YAML text (it holds NUL bytes)");
  }
  const std::string text(reinterpret_cast<const char*>(data), size);
  return parse_package_yaml(text, name);
}

Package read_package(const std::string& path) {
  // The mapping lives as long as a segment that views it: the loader then copies a model's
  // weights once, from the file's pages into SRAM.
  const auto file = std::make_shared<const MappedFile>(path);
  return read_package_from_bytes(file->data(), file->size(), path, file);
}

const uint8_t* initial_bytes(const Package& package, uint32_t tile, uint32_t address, uint32_t size) {
  for (const TileProgram& t : package.tiles) {
    if (t.tile != tile) continue;
    for (const Segment& s : t.segments) {
      const uint64_t offset = uint64_t{address} - s.address;
      if (s.fill == FillKind::Bytes && address >= s.address && offset + size <= s.bytes.size()) {
        return s.bytes.data() + offset;
      }
    }
  }
  return nullptr;
}

void write_package(const Package& package, const std::string& path) {
  if (is_yaml_file_name(path)) {
    write_package_yaml(package, path);
  } else {
    write_package_capnp(package, path);
  }
}

}  // namespace lockstep::arch
