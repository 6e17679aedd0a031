#pragma once
// Captures: the phases and transfers of one program, every Repeat source address kept.
// On disk: Cap'n Proto (arch/capture.capnp) or YAML; both convert to this form.
#include <cstdint>
#include <string>
#include <vector>

#include "arch/machine.hpp"

namespace lockstep::arch {

inline constexpr uint32_t kCaptureVersion = 1;

struct Destination {
  uint32_t tile = 0;     // logical
  uint32_t address = 0;  // byte address
  bool operator==(const Destination&) const = default;
};

struct Transfer {
  uint32_t source_tile = 0;                // logical
  std::vector<uint32_t> source_addresses;  // one per Repeat iteration (1 outside a Repeat)
  std::vector<Destination> destinations;   // distinct tiles, none the source
  uint32_t words = 0;                      // 32-bit words
  bool allow_paired = false;               // 64-bit items allowed (alignment permitting)
  bool operator==(const Transfer&) const = default;
};

struct CapturePhase {
  uint32_t id = 0;
  std::string label;
  uint32_t execution_count = 1;
  std::string operation;
  uint32_t iterations = 1;  // every transfer has this many source addresses
  std::vector<Transfer> transfers;
};

struct Capture {
  uint32_t version = kCaptureVersion;
  std::string machine_name;  // machine the addresses and tiles refer to
  std::vector<CapturePhase> phases;
};

Capture read_capture(const std::string& path);  // YAML or Cap'n Proto, by content
void write_capture_capnp(const Capture& capture, const std::string& path);  // tmp + rename
void write_capture_yaml(const Capture& capture, const std::string& path);
Capture parse_capture_yaml(const std::string& text, const std::string& file_name);

// Names the phase, transfer and field of the first problem (InputError).
void validate_capture(const Capture& capture, const MachineDescription& machine,
                      const std::string& file_name);

}  // namespace lockstep::arch
