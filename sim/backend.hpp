#pragma once
// Running a package: the backend interface and what a run returns.
// The SystemC backend is the only implementation today; a device backend comes later.
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "arch/machine.hpp"
#include "formats/package.hpp"
#include "formats/token.hpp"
#include "model/run_monitor.hpp"
#include "profile/profile.hpp"

namespace lockstep::sim {

// The hazard classes of IPU21-EXCHANGE.md section 7, plus the simulator's own.
enum class HazardKind : uint8_t {
  RowFetchConflict = 1,       // 1: row fetch vs data in one memory element
  SendReceiveConflict = 2,    // 2: send read window vs receive write window, same element
  InstructionAccess = 3,      // 3: load/store (kernel, patch) during a write to its element
  WriteOutOfRange = 4,        // 4
  MuxLeftOpen = 5,            // 5
  NoPointer = 6,              // 6
  OverlappingReceives = 7,    // 7
  SimultaneousControls = 8,   // 8
  ControlAtMessageStart = 9,  // 9
  Paired = 10,                // 10
  Encoding = 11,              // 11
  StreamConflict = 12,        // 12: one stream per tile; word lost or duplicated
  DoubleWrite = 13,           // a word written twice in one phase
};
std::string hazard_name(HazardKind kind);  // e.g. "mux-left-open"

struct Hazard {
  HazardKind kind;
  uint32_t tile = 0;  // logical
  uint32_t phase = 0;
  uint32_t iteration = 0;   // Repeat iteration (0 outside a Repeat)
  uint64_t cycle = 0;       // absolute tile cycle from the start of the run
  uint32_t row_offset = 0;  // byte offset in the row of the instruction at fault
  std::string instruction;  // disassembly of that instruction
  std::string detail;       // one line
  bool step = false;        // found by the supervisor or a kernel, not by an exchange row
};

// What the chip would raise for a hazard (IPU21-DEVICE.md section 16): its exception type
// (ETYPE, 0 none) and exchange receive error (0 none). Both 0 where the chip raises nothing:
// the fault corrupts silently, or the rule is the encoder's. The mapping and its grounds are
// in docs/device.md, "Hazards as the chip reports them".
struct ChipError {
  uint32_t exception = 0;
  uint32_t receive_error = 0;
};
ChipError chip_error(const Hazard& hazard);
std::string exception_name(uint32_t exception);          // 13: "exchange error"
std::string receive_error_name(uint32_t receive_error);  // 2: "instruction-fetch clash"

// "hazard mux-left-open: tile 3 phase 1 iteration 0 cycle 250 row+0x10 [delayxpic ...]: detail
// (on the chip: exception 13 exchange error, receive error 2 instruction-fetch clash)", or
// "(on the chip: no exception)".
std::string describe(const Hazard& hazard);

struct ExpectationFailure {
  uint32_t tile = 0;
  uint32_t address = 0;
  std::string expected;  // hex bytes or digest
  std::string found;
};

// A tile's row end and its received runs in one phase execution (events from the release).
using TileExecution = model::TileRecord;
using model::ReceivedRun;

// One execution of one phase's exchange.
struct PhaseExecution {
  uint32_t phase = 0;
  uint32_t iteration = 0;
  uint64_t release_cycle = 0;        // barrier release: event 0 of the phase
  uint32_t horizon = 0;              // events from release to the end of the last tile's row
  std::vector<TileExecution> tiles;  // every participant, by tile; only with RunOptions::record_tiles
  uint32_t last_arrival = 0;         // the tile whose arrival released the phase (on the critical path)
  model::CycleSplit before;          // its cycles from its own previous release to this release
};

// Read access to tile SRAM, for observers and results. Untouched memory reads as zero.
// Calls for different tiles may come from several threads at once (the replay's payload
// check compares and refills tiles in parallel); calls for one tile come from one thread.
class MemoryView {
 public:
  virtual ~MemoryView() = default;
  virtual void read(uint32_t tile, uint32_t address, uint32_t bytes, uint8_t* out) const = 0;
  // Writes between phases, as a host harness may (a replay poisons checked words so a
  // later iteration cannot pass on stale data); outside a tile's SRAM it does nothing.
  virtual void write(uint32_t tile, uint32_t address, uint32_t bytes, const uint8_t* data) = 0;
  // Whether [address, address + bytes) holds exactly `expected` (no copy out).
  virtual bool equal(uint32_t tile, uint32_t address, uint32_t bytes, const uint8_t* expected) const = 0;
  // Whether [address, + 4 * words) holds the payload tokens that follow token `first`
  // (arch::tokens_following), as equal() of them would say; a simulator that moved them without
  // writing them compares them as they are held.
  virtual bool holds_tokens(uint32_t tile, uint32_t address, uint32_t words, uint32_t first) const {
    std::vector<uint32_t> tokens(words);
    arch::tokens_following(first, tokens);
    return equal(tile, address, 4 * words, reinterpret_cast<const uint8_t*>(tokens.data()));
  }
  // Writes the payload tokens of `seed`, `tile` and Repeat iteration `iteration` (formats/token.hpp)
  // at [address, address + bytes), whole words, as write() of them would; a simulator may make
  // them only when something reads them.
  virtual void write_tokens(uint32_t tile, uint32_t address, uint32_t bytes, uint64_t seed, uint32_t iteration) = 0;
};

// One invocation of a host call (formats/package.hpp HostCallSpec): its name and input file.
struct HostCallInput {
  std::string name;
  std::vector<uint8_t> input;
};

// `--stop-at`: where a run stops so its memory can be dumped.
struct StopAt {
  enum class Kind : uint8_t { Cycle, Phase, Step, Hazard };
  Kind kind = Kind::Phase;
  uint64_t cycle = 0;      // Cycle: the first phase release at or after it
  uint32_t phase = 0;      // Phase: this phase's execution...
  uint32_t iteration = 0;  // ...in this Repeat iteration
  uint32_t tile = 0;       // Step: as this logical tile enters its top-level step
  uint32_t step = 0;
  std::string text;  // as the user wrote it
};

// A tile's exchange state at a stop, and its row's words (RunResult::rows).
struct RowState {
  uint32_t tile = 0;
  uint32_t phase = 0;
  uint32_t iteration = 0;
  uint32_t mux = 0, paired_mux = 0, incoming_format = 0, incoming_base = 0;
  std::optional<uint32_t> row_address;
  std::vector<uint32_t> row;  // up to and including br $m10 (at most 4,096 words)
};

struct RunOptions {
  bool keep_going = false;              // collect every hazard instead of stopping
  std::string source_name = "package";  // names the package in InputError messages
  std::optional<uint32_t> trace_tile;   // debug-trace exchange events of this tile
  bool record_tiles = false;            // fill PhaseExecution::tiles (row ends, received runs)
  // Keep those tiles in RunResult::executions; false: only after_exchange sees them, so a run's
  // memory does not grow with its write runs.
  bool keep_tiles = true;
  bool profile = false;                                // fill RunResult::profile (sim/profile_builder.hpp)
  uint32_t invocations = 1;                            // run the resident program this many times
  uint64_t max_cycles = 0;                             // stop once a tile passes this cycle (0 = no bound)
  double timeout_seconds = 0;                          // stop after this much wall time (0 = no bound)
  std::map<std::string, std::vector<uint8_t>> inputs;  // binding name -> bytes
  bool invocation_outputs = false;                     // fill RunResult::invocation_outputs (with invocations > 1)
  // A package with host phases: the calls the host invokes, in order. Absent: every call of the
  // package once, in its order, each input file made of its input bindings' bytes (from
  // `inputs`, else the package's); those bindings then reach the tiles only by host phases.
  std::optional<std::vector<HostCallInput>> host_calls;
  // Words to watch: every write into them is a RunResult::watch_writes record (model/watch.hpp).
  std::vector<model::WatchRange> watches;
  std::optional<StopAt> stop_at;
  std::vector<model::WatchRange> dumps;  // bytes read at the stop (RunResult::dumps)
  bool dump_rows = false;                // RunResult::rows at the stop
  // Called after every phase execution, with memory as it stands at the end of it.
  std::function<void(const PhaseExecution&, MemoryView&)> after_exchange;
  // Called as each receiver's words land in a phase execution without hazards, before
  // after_exchange: (phase, iteration, the receiver's logical tile, memory). From several
  // threads at once, one receiver each; it may read that receiver's words only, which nothing
  // writes again before after_exchange (model/run_monitor.hpp, after_landing). Receivers it
  // does not see (a phase with hazards, words in place already), after_exchange sees.
  std::function<void(uint32_t, uint32_t, uint32_t, const MemoryView&)> after_landing;
  // Copies of payload tokens that wait to be made leave them waiting at their destinations too
  // (model/run_monitor.hpp): for a replay, which only compares its destinations (holds_tokens).
  bool lay_copied_tokens = false;
  // Writes smaller than a page wait as runs of bytes where nothing else wrote (model/run_monitor.hpp):
  // for a replay, which reads back only what its tiles load and count.
  bool lay_small_writes = false;
};

struct RunResult {
  uint64_t total_cycles = 0;
  std::vector<uint64_t> invocation_ends;   // cycle the last tile finished each invocation
  std::vector<PhaseExecution> executions;  // in execution order
  // The run's critical path split into exchange, compute, sync, patching and control
  // (model/cycle_split.hpp); its parts add up to total_cycles.
  model::CycleSplit cycle_split;
  std::vector<Hazard> hazards;  // sorted by (cycle, tile, kind)
  std::vector<ExpectationFailure> expectation_failures;
  std::map<std::string, std::vector<uint8_t>> outputs;  // output bindings
  // With RunOptions::invocation_outputs: the output bindings at the end of every invocation but
  // the last (whose are `outputs`), in invocation order.
  std::vector<std::map<std::string, std::vector<uint8_t>>> invocation_outputs;
  std::optional<arch::Profile> profile;  // a sample per executed step, with RunOptions::profile
  // With host phases: each invoked call's output file, in invocation order, and every host
  // phase's cycles added (model/host_link.hpp).
  std::vector<std::pair<std::string, std::vector<uint8_t>>> host_outputs;
  uint64_t host_cycles = 0;
  std::vector<model::WatchWrite> watch_writes;  // RunOptions::watches' writes, in cycle order
  // RunOptions::stop_at: where the run stopped ("" when it never got there), the dumps' bytes
  // and every tile's row state then.
  std::string stopped_at;
  std::vector<std::vector<uint8_t>> dumps;
  std::vector<RowState> rows;
  std::string stopped;  // why the run stopped at a limit before its end ("" when it ran to the end)
  bool ok() const { return hazards.empty() && expectation_failures.empty() && stopped.empty(); }
};

// InputError "--watch 3:0x60001:4: ..." for a watch the machine cannot hold: a tile it lacks,
// an unaligned address or size, words outside tile memory.
// (`option` names the flag in the message: "--watch", "--dump".)
void check_watches(const std::vector<model::WatchRange>& watches, const arch::MachineDescription& machine,
                   const char* option = "--watch");

class Backend {
 public:
  virtual ~Backend() = default;
  // Throws InputError for a package that does not validate against the backend's machine.
  virtual RunResult run(const arch::Package& package, const RunOptions& options) = 0;
};

// The SystemC model. Each run elaborates a fresh simulation context; runs in one process
// are serialised (SystemC has one global kernel), so parallel work uses processes.
std::unique_ptr<Backend> make_systemc_backend(const arch::MachineDescription& machine);

}  // namespace lockstep::sim
