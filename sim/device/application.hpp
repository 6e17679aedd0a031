#pragma once
// The IPU21 stack's application package, the device image (`.ipuexe`): per physical tile
// the segments its loader writes into SRAM, the host-visible bindings, the host exchange
// protocol, debug names. docs/IPU21-DEVICE.md section 12 is the format; sim/device/application.capnp
// holds its schema. In memory it mirrors the schema field for field, so reading then
// writing gives the same bytes. `lockstep device export` makes one from a package and
// `device import` reads one back (sim/device/application_export.hpp, sim/device/application_import.hpp).
#include <cstdint>
#include <string>
#include <vector>

#include "profile/profile.hpp"

namespace lockstep::arch {

// Header values (section 12.2): any other value is an incompatible package.
inline constexpr uint32_t kApplicationSchemaVersion = 5;
inline constexpr const char* kApplicationTarget = "ipu21";
inline constexpr uint32_t kApplicationMemoryBase = 0x4c000;
inline constexpr uint32_t kApplicationMemorySize = 0x9c000;  // 638976 bytes, end 0xe8000

// Segment flags (section 12.2).
inline constexpr uint32_t kSegmentRead = 1;
inline constexpr uint32_t kSegmentWrite = 2;
inline constexpr uint32_t kSegmentExecute = 4;

// A debug region that applies to every tile.
inline constexpr uint32_t kDebugAllTiles = 0xffffffffu;

// Bytes at `address`; `data` may be shorter than `memory_size` (the rest is zero).
struct AppSegment {
  uint32_t address = 0;
  uint32_t memory_size = 0;
  std::vector<uint8_t> data;
  uint32_t flags = 0;
  bool operator==(const AppSegment&) const = default;
};

struct TileImage {
  uint32_t physical_tile = 0;
  uint32_t entry_point = 0;
  std::vector<AppSegment> segments;
  uint32_t command_address = 0;
  uint32_t diagnostic_address = 0;
  bool operator==(const TileImage&) const = default;
};

// `size` bytes at `tile_address` of physical tile `tile` are bytes
// [file_offset, file_offset + size) of the binding's file.
struct RegionSlice {
  uint32_t tile = 0;
  uint32_t tile_address = 0;
  uint64_t file_offset = 0;
  uint64_t size = 0;
  bool operator==(const RegionSlice&) const = default;
};

struct AppBinding {
  std::string name;
  std::string dtype;  // "f16", "f32", "f8f143", "u32", "u8"
  std::vector<uint32_t> shape;
  std::vector<RegionSlice> slices;
  bool operator==(const AppBinding&) const = default;
};

struct HostPage {
  uint32_t index = 0;
  uint64_t size = 0;
  bool operator==(const HostPage&) const = default;
};

struct HostSlice {
  uint32_t page = 0;
  uint64_t page_offset = 0;
  uint64_t file_offset = 0;
  uint64_t size = 0;
  bool operator==(const HostSlice&) const = default;
};

struct HostCall {
  std::string name;
  uint32_t command = 0;
  uint32_t phases = 0;
  std::vector<HostSlice> inputs;
  std::vector<HostSlice> outputs;
  uint32_t invocations = 1;  // the schema's default is 1 (the wire holds invocations XOR 1)
  std::vector<uint32_t> input_batch_ends;
  std::vector<uint32_t> output_batch_ends;
  bool operator==(const HostCall&) const = default;
};

struct HostExchange {
  uint32_t startup_mark = 0;
  uint32_t command_page = 0;
  uint64_t command_offset = 0;
  std::vector<HostPage> pages;
  std::vector<uint32_t> attach_order;
  std::vector<HostCall> calls;
  bool operator==(const HostExchange&) const = default;
};

struct EntryPoint {
  std::string name;
  uint32_t command = 0;
  uint32_t external_syncs = 0;
  bool operator==(const EntryPoint&) const = default;
};

struct DeviceConfigWrite {
  uint32_t offset = 0;
  uint32_t value = 0;
  bool operator==(const DeviceConfigWrite&) const = default;
};

// A plan's step: the profile schema's Step in full, its epoch and invocation included.
struct PlanStep {
  ProfileStep step;
  uint32_t epoch = 0;
  uint32_t invocation = 0;
  bool operator==(const PlanStep&) const = default;
};

struct TileProfilePlan {
  uint32_t physical_tile = 0;
  std::vector<PlanStep> steps;
  bool operator==(const TileProfilePlan&) const = default;
};

struct DebugSymbol {
  std::string name;
  uint32_t address = 0;
  bool operator==(const DebugSymbol&) const = default;
};

struct DebugRegion {
  uint32_t physical_tile = 0;  // or kDebugAllTiles
  uint32_t address = 0;
  uint32_t size = 0;
  std::string name;
  bool operator==(const DebugRegion&) const = default;
};

struct Application {
  uint32_t schema_version = kApplicationSchemaVersion;
  std::string compiler_version;
  std::string target = kApplicationTarget;
  uint32_t tile_memory_base = kApplicationMemoryBase;
  uint32_t tile_memory_size = kApplicationMemorySize;
  std::vector<TileImage> tiles;
  std::vector<AppBinding> inputs;
  std::vector<AppBinding> outputs;
  std::vector<AppBinding> weights;
  HostExchange host_exchange;
  std::vector<EntryPoint> entry_points;
  std::vector<DeviceConfigWrite> device_config_writes;
  std::vector<TileProfilePlan> profile_tiles;
  std::vector<DebugSymbol> debug_symbols;
  std::vector<DebugRegion> debug_regions;
  bool operator==(const Application&) const = default;
};

// Reads an application file. InputError, one line naming the file and field, for a file
// that is not one (truncated, corrupt, a Lockstep package or profile), an incompatible
// header ("incompatible package header: schemaVersion 4 (expected 5)") or a broken rule
// of section 12.3 ("app.ipuexe: tiles[3].segments[1]: 0xe8000+16 outside tile memory ...").
Application read_application(const std::string& path);
Application parse_application(const uint8_t* data, size_t size, const std::string& file_name);

// Validates (section 12.3; the header too) and writes atomically. InputError naming
// `path` when a rule does not hold; nothing is written then.
void write_application(const Application& app, const std::string& path);
std::string application_bytes(const Application& app);  // the file's bytes, unchecked

// The header values and every rule of section 12.3; throws InputError "file: field: ...".
// Beyond 12.3 (the stack checks neither): a binding's dtype must be one of 12.2's five
// strings, and no slice's fileOffset + size may overflow 64 bits.
void validate_application(const Application& app, const std::string& file_name);

// The bytes of one element of a binding's dtype: 2 for "f16", 4 for "f32" and "u32", 1 for
// "f8f143" and "u8" (section 12.2); 0 for any other string.
uint32_t dtype_bytes(const std::string& dtype);

}  // namespace lockstep::arch
