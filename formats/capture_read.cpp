// read_capture: the file's first bytes say which form it is.
#include <cstring>

#include "formats/capture.hpp"
#include "io/errors.hpp"
#include "io/mapped_file.hpp"

namespace lockstep::arch {

Capture read_capture_from_bytes(const uint8_t* data, size_t size, const std::string& name,
                                std::optional<uint32_t> only_phase) {
  if (size >= 6 && std::memcmp(data, kCaptureMagic, 6) == 0) {
    return parse_capture_capnp(data, size, name, only_phase);
  }
  if (size >= 6 && std::memcmp(data, "LKSPKG", 6) == 0) {
    throw InputError(name + ": a package (LKSPKG magic), not a capture");
  }
  if (size > 0 && std::memchr(data, '\0', size) != nullptr) {
    throw InputError(name + ": neither a Cap'n Proto capture (no " + std::string(kCaptureMagic) +
                     " magic) nor YAML text (it holds NUL bytes)");
  }
  const std::string text(reinterpret_cast<const char*>(data), size);
  Capture capture = parse_capture_yaml(text, name);
  if (only_phase) keep_only_phase(capture, *only_phase, capture.phases.size(), name);
  return capture;
}

void keep_only_phase(Capture& capture, uint32_t phase, size_t phases_in_file, const std::string& name) {
  std::erase_if(capture.phases, [&](const CapturePhase& p) { return p.id != phase; });
  if (capture.phases.empty()) {
    throw InputError(name + ": phase " + std::to_string(phase) + ": not in the capture (" +
                     std::to_string(phases_in_file) + " phases)");
  }
}

Capture read_capture(const std::string& path, std::optional<uint32_t> only_phase) {
  const MappedFile file(path);  // regular files only
  return read_capture_from_bytes(file.data(), file.size(), path, only_phase);
}

bool is_yaml_file_name(const std::string& path) { return path.ends_with(".yaml") || path.ends_with(".yml"); }

void write_capture(const Capture& capture, const std::string& path) {
  if (is_yaml_file_name(path)) {
    write_capture_yaml(capture, path);
  } else {
    write_capture_capnp(capture, path);
  }
}

}  // namespace lockstep::arch
