#pragma once
#include <sys/types.h>
// Helpers shared by the test suites: paths into the source tree and running the command.
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "arch/machine.hpp"
#include "arch/topology.hpp"

namespace lockstep::testing {

// Absolute path of a file in the source tree, e.g. source_path("configs/machines/...").
std::string source_path(const std::string& relative);

// A fresh empty directory under the build tree's temp area, removed at exit.
std::string temp_dir(const std::string& name);

struct CommandResult {
  int exit_code = 0;
  std::string out;  // stdout
  std::string err;  // stderr
};

// Runs the built `lockstep` binary with the given arguments (no shell involved).
CommandResult run_lockstep(const std::vector<std::string>& args);
// Starts the built `lockstep` binary in a process group of its own (so that killing the group
// also kills a sweep's workers), its output discarded; returns at once with its pid.
pid_t start_lockstep_in_own_group(const std::vector<std::string>& args);

std::string read_file(const std::string& path);

// The bad-input rule: exit 2 and exactly one line on stderr, "error: ...", holding `text`.
void expect_bad_input(const CommandResult& r, const std::string& text);
// Nothing named NAME, and no temporary NAME.tmp-*, in `dir`.
void expect_nothing_written(const std::string& dir, const std::string& name);

// The full C600 machine and its topology, loaded once per test executable.
const arch::MachineDescription& c600_machine();
const arch::Topology& c600_topology();
void write_file(const std::string& path, const std::string& text);
// A hand-made package of tests/integration/packages, by name ("p2p_3w").
std::string integration_package(const std::string& name);
// Every file directly in `dir`, by name, with its bytes (to compare two output folders).
std::map<std::string, std::string> files_of(const std::string& dir);
// Runs `body` with the log at debug level caught; returns its last 256 lines. The test
// binary's logger and level come back however `body` ends, a throw included.
std::string debug_log_while(const std::function<void()>& body);

}  // namespace lockstep::testing
