#pragma once
// Captures: the phases and transfers of one program, every Repeat source address kept.
// On disk: Cap'n Proto (formats/capture.capnp) or YAML; both convert to this form.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "arch/machine.hpp"

namespace lockstep::arch {

inline constexpr uint32_t kCaptureVersion = 1;
// The first 8 bytes of a Cap'n Proto capture file; the last two digits are the version.
inline constexpr char kCaptureMagic[9] = "LKSCAP01";
// Largest transfer (32-bit words): 64 KiB words = 256 KiB, under half a tile's SRAM.
// Producers split anything larger; it keeps every span arithmetic inside 32 bits.
inline constexpr uint32_t kMaxTransferWords = 65536;
// Convention every capture producer keeps: no transfer data (source or destination, any
// iteration) in [kTableReservedBegin, kTableReservedEnd) of any tile. The exchange
// compiler lays its tables there, in memory elements no transfer of that tile touches.
inline constexpr uint32_t kTableReservedBegin = 0x4c000;
inline constexpr uint32_t kTableReservedEnd = 0x5c000;

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

// YAML or Cap'n Proto, by content. With `only_phase`, the capture holds just that phase (a
// Cap'n Proto capture's other phases are not read), or InputError when it has no such phase.
Capture read_capture(const std::string& path, std::optional<uint32_t> only_phase = std::nullopt);
// The same from bytes in memory (`name` is used in messages): Cap'n Proto if they start with
// "LKSCAP", else YAML text. Bytes that are neither (a package, NUL bytes) are refused.
Capture read_capture_from_bytes(const uint8_t* data, size_t size, const std::string& name,
                                std::optional<uint32_t> only_phase = std::nullopt);
void write_capture_capnp(const Capture& capture, const std::string& path);  // tmp + rename
void write_capture_yaml(const Capture& capture, const std::string& path);
// The form follows the name: .yaml or .yml writes YAML, anything else Cap'n Proto.
void write_capture(const Capture& capture, const std::string& path);
bool is_yaml_file_name(const std::string& path);  // ends in .yaml or .yml
Capture parse_capture_yaml(const std::string& text, const std::string& file_name);
// The canonical YAML text (what write_capture_yaml writes): hex addresses, one transfer a line.
std::string capture_to_yaml(const Capture& capture);
// Drops every phase but `phase`; InputError naming the file when none is left.
void keep_only_phase(Capture& capture, uint32_t phase, size_t phases_in_file, const std::string& name);
// Reads a Cap'n Proto capture from bytes that start with kCaptureMagic (8-aligned).
Capture parse_capture_capnp(const uint8_t* data, size_t size, const std::string& file_name,
                            std::optional<uint32_t> only_phase = std::nullopt);

// Totals for `lockstep capture stats` and benchmarks.
struct CapturePhaseStats {
  uint32_t id = 0;
  std::string label;
  uint32_t execution_count = 1;
  uint32_t iterations = 1;
  uint64_t transfers = 0;
  uint64_t destinations = 0;     // sum over transfers of destination count
  uint64_t words = 0;            // sum of words (one execution, as sent)
  uint64_t words_delivered = 0;  // sum of words x destinations (one execution)
};
struct CaptureStats {
  std::vector<CapturePhaseStats> phases;
  uint64_t transfers = 0;
  uint64_t words = 0;
  uint64_t words_delivered = 0;
  uint64_t source_addresses = 0;
};
CaptureStats capture_stats(const Capture& capture);

// Names the phase, transfer and field of the first problem (InputError).
void validate_capture(const Capture& capture, const MachineDescription& machine, const std::string& file_name);

}  // namespace lockstep::arch
