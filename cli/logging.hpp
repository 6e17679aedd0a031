#pragma once
#include <CLI/CLI.hpp>
#include <optional>

namespace lockstep::cli {
// Applies --log-level (or LOCKSTEP_LOG) to spdlog; logs go to stderr.
void configure_logging(const CLI::App& command);
// The --trace-tile given to the running command, if any.
std::optional<unsigned> trace_tile();
}  // namespace lockstep::cli
