// read_capture: the file's first bytes say which form it is.
#include <cstring>

#include "arch/capture.hpp"
#include "arch/mapped_file.hpp"
#include "arch/errors.hpp"

namespace lockstep::arch {

Capture read_capture(const std::string& path) {
  MappedFile file(path);
  if (file.size() >= 6 && std::memcmp(file.data(), kCaptureMagic, 6) == 0) {
    return parse_capture_capnp(file.data(), file.size(), path);
  }
  const std::string text(reinterpret_cast<const char*>(file.data()), file.size());
  return parse_capture_yaml(text, path);
}

}  // namespace lockstep::arch
