#pragma once
// A sweep: every phase of a capture under every configuration of a sweep definition (and
// the paired-width alternative of each), each point compiled, simulated and payload-checked,
// spread over worker processes and MPI ranks with results independent of both.
#include <cstddef>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "arch/machine.hpp"
#include "formats/capture.hpp"
#include "replay/mpi.hpp"
#include "replay/point.hpp"
#include "results/results.hpp"
#include "results/sweep_definition.hpp"

namespace lockstep::replay {

struct SweepOptions {
  std::optional<std::vector<uint32_t>> phases;  // all phases of the capture when empty
  bool paired = true;                           // add the paired-width alternative of every configuration
  bool timings = true;                          // false: compile_ms and simulate_ms written as 0.000
  size_t jobs = 0;                              // worker processes per rank; 0 = this rank's share of the cores
  PointOptions point;                           // seed and sampling of the payload check
  bool progress = true;                         // progress on stderr (rank 0 only)
};

// The points in results.csv order: phase id, then configuration in sweep-file order, then
// word32 before paired64. InputError for a phase not in the capture or a configuration the
// compiler does not accept.
std::vector<PointSpec> plan_sweep(const arch::Capture& capture, const SweepDefinition& definition,
                                  const SweepOptions& options);

// Points already run (by plan index, encoded) and where each new one goes as it finishes.
struct SweepResume {
  std::map<size_t, std::string> finished;  // skipped, taken as they are
  // Rank 0 only, in the order its own points finish (other ranks' at the gather).
  std::function<void(size_t plan_index, const std::string& encoded)> on_point;
};

// Runs this rank's share of the points not yet finished in worker processes and gathers
// everything to rank 0, which gets every result in plan order; other ranks get an empty vector.
std::vector<PointResult> run_sweep(const arch::Capture& capture, const arch::MachineDescription& machine,
                                   const std::vector<PointSpec>& plan, const SweepOptions& options,
                                   const MpiSession& mpi, const SweepResume& resume = {});

// The result of a point whose worker process died (a crash in the compiler or simulator):
// an error, so the sweep goes on and reports it.
PointResult crashed_point(const arch::Capture& capture, const PointSpec& spec, const std::string& how);

ResultRow to_result_row(const PointResult& point, bool timings);

// Worker processes for this rank when the user gave none.
size_t default_jobs(const MpiSession& mpi);

}  // namespace lockstep::replay
