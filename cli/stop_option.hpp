#pragma once
// `run --stop-at WHERE [--dump TILE:ADDRESS:BYTES[:DTYPE]=FILE]... [--dump-rows FILE]`: stop a
// run where the user asks and write what memory and the exchange state hold there.
#include <CLI/CLI.hpp>
#include <ostream>
#include <string>
#include <vector>

#include "sim/backend.hpp"

namespace lockstep::cli {

struct StopArgs {
  std::string stop_at;             // cycle:N | phase:P[,iteration:I] | tile:T,step:S | hazard
  std::vector<std::string> dumps;  // TILE:ADDRESS:BYTES[:DTYPE]=FILE
  std::string dump_rows;           // FILE
  std::vector<std::string> files;  // the dumps' files, in order (filled by apply_stop)
  std::vector<std::string> dtypes;
};

void add_stop_options(CLI::App& command, StopArgs& args);
// Parses and checks the options into `options`; InputError naming the option otherwise. The
// output files are checked here, before the run, and `inputs` are never overwritten.
void apply_stop(StopArgs& args, sim::RunOptions& options, const std::vector<std::string>& inputs);
// After the run: at a stop, writes the dumps and rows, says where on `out` and returns true
// (the run's outputs are not written); a stop never reached is said and false returned.
bool finish_stop(const StopArgs& args, const sim::RunResult& result, std::ostream& out);

}  // namespace lockstep::cli
