#pragma once
// The machine as data: every number the model uses, loaded from configs/machines/*.yaml.
#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

namespace lockstep::arch {

// Route-timing constants of IPU21-EXCHANGE.md section 3 and section 6.
struct RouteTiming {
  int ttm_offset = -34;       // constant term of ttm(s,d)
  int write_delay_base = 52;  // W(d) = base + per_row * r_d   [inferred]
  int write_delay_per_row = 2;
  int paired_write_delay_base = 53;  // paired item: mux -> memory [inferred, docs/timing.md]
  int receive_tail_events = 6;       // a receive row ends this many events after its last write

  bool operator==(const RouteTiming&) const = default;
};

struct MachineDescription {
  std::string name;            // e.g. "ipu21-c600" or "ipu21-c600-t16"
  uint32_t tiles = 1472;       // logical tiles in use: the first `tiles` of the C600
  uint32_t chip_tiles = 1472;  // tiles of the full chip (topology size)
  uint32_t sram_base = 0x4c000;
  uint32_t sram_end = 0xe8000;      // exclusive; 624 KiB per tile
  uint32_t element_bytes = 0x4000;  // memory element (contention unit) below interleaved_base
  uint32_t interleaved_base = 0x80000;
  uint32_t interleaved_element_bytes = 0x8000;
  uint32_t row_region_end = 0x80000;    // rows must lie entirely below (instruction fetch)
  uint32_t loader_limit = 0xe7bb0;      // last loadable byte + 1
  uint32_t fetch_lookahead_bytes = 64;  // supervisor fetch look-ahead past the last row word
  double clock_hz = 1.5e9;
  uint32_t supervisor_cycles_per_instruction = 6;
  uint32_t workers = 6;
  uint32_t barrier_latency_cycles = 0;
  uint32_t neutral_mux = 0x640;
  uint32_t bulk_patch_threshold_words = 24;  // lists this long use the six-worker patcher
  RouteTiming route;
  // FNV-1a 64 of the canonical form of every field above, as 16 hex digits. A package
  // records it so it never runs on a machine it was not built for.
  std::string digest;
  // Fitted kernel cost parameters (`run --costs`, docs/calibration.md), by kernel name in the
  // order of its cost model; a kernel not listed keeps its built-in cycles. Not part of the
  // machine's text or digest: the same package runs under any costs.
  std::map<std::string, std::vector<double>> kernel_costs;

  uint32_t sram_bytes() const { return sram_end - sram_base; }
  // Contention unit index of a byte address (absolute, as in IPU21-EXCHANGE.md section 1).
  uint32_t element_of(uint32_t address) const;
  bool in_sram(uint32_t address, uint64_t bytes) const;

  bool operator==(const MachineDescription&) const = default;
};

// Loads and validates a machine description. `source` is either a path to a YAML file or
// the name of an embedded machine ("ipu21-c600", "ipu21-c600-t16"). A file may say
// `base: ipu21-c600` and override `name` and `tiles` only. Errors: InputError with
// "file:line: key.path: what is wrong".
MachineDescription load_machine(const std::string& source);
MachineDescription parse_machine_yaml(const std::string& text, const std::string& file_name);

// The canonical text of a description: YAML in the layout of configs/machines/, every field,
// no comments, no digest. parse_machine_yaml reads it back to an equal description; the
// digest is FNV-1a 64 over it.
std::string machine_to_yaml(const MachineDescription& machine);
std::string machine_digest(const MachineDescription& machine);  // 16 hex digits

// Bytes at sram_base that no package may use: the loader's launch slot (0x10) and the
// application's 8-byte entry stub (IPU21-DEVICE.md sections 1 and 13).
inline constexpr uint32_t kEntryStubEnd = 0x18;

// The name of the default machine used when a command is given none.
inline constexpr const char* kDefaultMachine = "ipu21-c600";

}  // namespace lockstep::arch
