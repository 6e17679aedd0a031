#pragma once
// The package: everything a run needs, exactly what a device would get.
// On disk: Cap'n Proto (formats/package.capnp, read with mmap) or YAML for small hand-made
// cases. Both convert to this in-memory form; validate_package checks it against a machine.
#include <cstdint>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "arch/machine.hpp"
#include "formats/segment_bytes.hpp"

namespace lockstep::arch {

inline constexpr uint32_t kPackageVersion = 1;

// How a segment's bytes are produced.
enum class FillKind : uint8_t {
  Bytes,   // `bytes` holds exactly `size` bytes
  Zero,    // all zero
  Tokens,  // word at byte address a of tile t holds payload_token(token_seed, t, a)
};

struct Segment {
  uint32_t address = 0;  // byte address, 4-aligned
  uint32_t size = 0;     // bytes, multiple of 4
  FillKind fill = FillKind::Zero;
  SegmentBytes bytes;
  uint64_t token_seed = 0;
  bool operator==(const Segment&) const = default;
};

// The supervisor's program is a list of steps.
struct SyncStep {
  uint32_t zone = 3;
  bool operator==(const SyncStep&) const = default;
};

// CSR setup before the row (IPU21-EXCHANGE.md section 5) then sync 3 and the row.
// A tile with no row in a phase still takes part in its barrier (`sans 0; sync 1`).
struct ExchangeStep {
  uint32_t phase = 0;                    // phase id, must exist in Package::phases
  std::optional<uint32_t> row_address;   // byte address of the row in this tile's table
  uint32_t incoming_base = 0;            // INCOMING_BASE (byte address)
  std::optional<uint32_t> incoming_mux;  // INCOMING_MUX written before the row, if any
  // INCOMING_FORMAT: 0 = 32-bit items; in the CSR form of a paired receive 1 = early half,
  // 2 = waiting half (IPU21-EXCHANGE.md section 6; a row's format control carries the
  // route direction instead).
  uint32_t incoming_format = 0;
  // INCOMING_MUXPAIR (CSR 0xa1), written before the row if given: the paired mux selects
  // sender `incoming_muxpair XOR 2` (the CSR form's value, sender XOR 2) from event 0.
  std::optional<uint32_t> incoming_muxpair;
  bool operator==(const ExchangeStep&) const = default;
};

// A kernel operand: a byte address, or (indirect) the byte address of a 32-bit SRAM word
// holding the address, such as a Repeat's iterated pointer, plus `offset` bytes.
struct Operand {
  uint32_t address = 0;
  bool indirect = false;
  int32_t offset = 0;  // indirect only: added to the loaded pointer
  bool operator==(const Operand&) const = default;
};

// Kernels of the first library (see docs/timing.md for their cycle models):
//   fill     operands [dst]       scalars [bytes, word value]
//   copy     operands [dst, src]  scalars [bytes]
//   checksum operands [src, dst]  scalars [bytes]: writes fnv1a64(src bytes) as 8
//            little-endian bytes at dst
//   checksum_xxh3 the same with xxh3_64 (what the compiler's payload proof emits)
struct KernelStep {
  std::string name;
  std::vector<Operand> operands;
  std::vector<int64_t> scalars;
  bool operator==(const KernelStep&) const = default;
};

// "gelu(1024)", "reduce_sum(8, 8, 32, 16)": the step's kernel and scalars as a profile's
// kernelSpec metadata gives them (docs/profiles.md), which calibration reads back.
inline std::string kernel_spec(const KernelStep& k) {
  std::string spec = k.name + "(";
  for (size_t i = 0; i < k.scalars.size(); ++i) spec += (i ? ", " : "") + std::to_string(k.scalars[i]);
  return spec + ")";
}

enum class PatchMethod : uint8_t {
  Helper,  // supervisor helper loop (Repeat patch_word: 11 instructions per word)
  Bulk,    // six-worker bulk patcher (lists of bulk_patch_threshold_words or more)
  Setup,   // shared-row setup patch_row: 7 + 8n instructions
};

// One row word to rewrite. Inside a Repeat, iteration i writes values[i % values.size()].
struct PatchEntry {
  uint32_t word_address = 0;     // byte address of the row word, 4-aligned
  std::vector<uint32_t> values;  // one per Repeat iteration, or one for all
  bool operator==(const PatchEntry&) const = default;
};

struct PatchStep {
  PatchMethod method = PatchMethod::Helper;
  std::vector<PatchEntry> entries;
  bool operator==(const PatchStep&) const = default;
};

// A word of SRAM holding a pointer that advances by `stride` bytes after every iteration.
struct IteratedPointer {
  uint32_t address = 0;  // byte address of the 32-bit pointer slot
  int32_t stride = 0;
  bool operator==(const IteratedPointer&) const = default;
};

// One host phase (IPU21-DEVICE.md 14): a barrier of every tile with the host, after which the
// host link moves this tile's transfers. A host address is a byte offset in the host's address
// space: the session's pages back to back in attach order (HostSession).
enum class HostDirection : uint8_t { ToTile, ToHost };

struct HostTransfer {
  HostDirection direction = HostDirection::ToTile;
  uint32_t tile_address = 0;  // 4-aligned
  uint32_t host_address = 0;  // 4-aligned
  uint32_t bytes = 0;         // multiple of 4, at least 4
  bool operator==(const HostTransfer&) const = default;
};

struct HostStep {
  std::vector<HostTransfer> transfers;  // this tile's; none: the tile only takes part
  bool operator==(const HostStep&) const = default;
};

struct Step;
struct RepeatStep {
  uint32_t count = 1;
  std::vector<Step> body;
  std::vector<IteratedPointer> pointers;
  bool operator==(const RepeatStep&) const = default;
};

struct Step {
  std::variant<SyncStep, ExchangeStep, KernelStep, RepeatStep, PatchStep, HostStep> kind;
  bool operator==(const Step&) const = default;
};

struct TableRegion {
  uint32_t address = 0;  // 8-aligned, rows must lie inside
  uint32_t size = 0;
  bool operator==(const TableRegion&) const = default;
};

struct TileProgram {
  uint32_t tile = 0;  // logical id
  std::vector<Segment> segments;
  TableRegion table;
  std::vector<Step> steps;
  bool operator==(const TileProgram&) const = default;
};

struct Phase {
  uint32_t id = 0;
  std::string label;  // e.g. "layer.attn.qkv"
  uint32_t execution_count = 1;
  std::string operation;
  bool operator==(const Phase&) const = default;
};

struct Slice {
  uint32_t tile = 0;
  uint32_t address = 0;
  uint32_t bytes = 0;
  bool operator==(const Slice&) const = default;
};

enum class BindingKind : uint8_t { Input, Output, Weight };

// Element type of a binding's bytes, when the package says (for .npy files).
enum class ElementType : uint8_t { Bytes, Float16, Float32 };

struct Binding {
  std::string name;
  BindingKind kind = BindingKind::Input;
  std::vector<Slice> slices;  // concatenated in order to form the binding's bytes
  ElementType element = ElementType::Bytes;
  std::vector<uint32_t> shape;  // row-major; empty with Bytes
  bool operator==(const Binding&) const = default;
};

// Must hold after the run: either exact bytes, or the FNV-1a 64 digest of `size` bytes.
struct Expectation {
  uint32_t tile = 0;
  uint32_t address = 0;
  uint32_t size = 0;
  std::vector<uint8_t> bytes;  // empty when `digest` is used
  std::optional<uint64_t> digest;
  bool operator==(const Expectation&) const = default;
};

// The host side of host phases (IPU21-DEVICE.md 13, 17.1): what a host call moves between its
// file and the host's address space. A call's file is its bindings' bytes back to back (each
// binding at the running total of the earlier ones' sizes); a slice copies `bytes` at
// `file_offset` of the file to or from `host_address`.
struct HostFileSlice {
  uint32_t host_address = 0;
  uint64_t file_offset = 0;
  uint32_t bytes = 0;
  bool operator==(const HostFileSlice&) const = default;
};

struct HostCallSpec {
  std::string name;      // "initialize", "run"
  uint32_t command = 0;  // written at the command address before the call's phases
  uint32_t phases = 0;   // host phases (handshakes) the call takes
  std::vector<HostFileSlice> inputs, outputs;
  // Slice counts that end each streaming batch (strictly increasing, last = slice count).
  std::vector<uint32_t> input_batch_ends, output_batch_ends;
  // The bindings whose bytes make the call's input and output files, in file order.
  std::vector<std::string> input_bindings, output_bindings;
  bool operator==(const HostCallSpec&) const = default;
};

struct HostSession {
  uint32_t arena_bytes = 0;  // the host address space; 0: the package has no host phases
  uint32_t command_address = 0;
  std::vector<HostCallSpec> calls;  // in the order a plain run invokes them
  bool operator==(const HostSession&) const = default;
};

// SRAM is little-endian: the 32-bit word at byte address a is bytes a..a+3, low byte first.
struct Package {
  uint32_t version = kPackageVersion;
  std::string machine_name;
  std::string machine_digest;
  std::vector<Phase> phases;
  std::vector<TileProgram> tiles;  // sorted by tile id; tiles not listed are idle
  std::vector<Binding> bindings;
  std::vector<Expectation> expectations;
  // The workload YAML text the package was built from (`lockstep build`), so `run
  // --reference` can rebuild the FP32 reference; empty for packages that are not a whole model.
  std::string workload;
  HostSession host;  // empty unless the package has host phases (an imported stack image)
  bool operator==(const Package&) const = default;
};

// Reading picks the form from the content (the "LKSPKG01" magic means Cap'n Proto,
// anything else is read as YAML text). Both throw InputError naming the file, tile, step
// and field. Reading needs no machine: validate_package is a separate call.
Package read_package(const std::string& path);
void write_package_capnp(const Package& package, const std::string& path);  // tmp + rename
void write_package_yaml(const Package& package, const std::string& path);   // tmp + rename
// The form follows the name: .yaml or .yml writes YAML, anything else Cap'n Proto.
void write_package(const Package& package, const std::string& path);
Package parse_package_yaml(const std::string& text, const std::string& file_name);
std::string package_to_yaml(const Package& package);

// The `size` initial bytes at `address` of tile `tile`: inside the one bytes segment that holds
// them all, or nullptr when none does (tile not listed, a zero or token segment, a range that
// spans segments).
const uint8_t* initial_bytes(const Package& package, uint32_t tile, uint32_t address, uint32_t size);

// Checks every rule of the package against the machine; throws InputError on the first
// failure ("file: tile 3: step 2 (exchange): row_address: 0x7fff8 outside table ...").
void validate_package(const Package& package, const MachineDescription& machine, const std::string& file_name);

// FNV-1a 64 over bytes; used for expectation digests and payload digests.
uint64_t fnv1a64(const uint8_t* data, size_t size, uint64_t seed = 0xcbf29ce484222325ull);

// XXH3 64 (seed 0, libxxhash) over bytes: the `checksum_xxh3` kernel's digest, the
// payload proof's per-phase checksums. Vectorised, so it runs near memory speed where
// FNV-1a's one multiply per byte cannot.
uint64_t xxh3_64(const uint8_t* data, size_t size);

// XXH3 64 of a byte stream given in pieces: the same digest as xxh3_64 of their
// concatenation.
class Xxh3Stream {
 public:
  Xxh3Stream();
  ~Xxh3Stream();
  Xxh3Stream(const Xxh3Stream&) = delete;
  Xxh3Stream& operator=(const Xxh3Stream&) = delete;
  void update(const uint8_t* data, size_t size);
  void update_zeros(size_t size);
  uint64_t digest() const;

 private:
  void* state_;  // XXH3_state_t, kept out of this header
};

}  // namespace lockstep::arch
