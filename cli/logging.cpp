#include "cli/logging.hpp"

#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include <cstdlib>

#include "cli/command_registry.hpp"
#include "io/errors.hpp"

namespace lockstep::cli {
// File-local, named so that the CLI's unity batches (cli/CMakeLists.txt) keep files apart.
namespace logging_local {}
using namespace logging_local;
namespace logging_local {
std::string g_log_level;
int g_trace_tile = -1;
}  // namespace logging_local

void add_common_options(CLI::App& command) {
  command
      .add_option("--log-level", g_log_level,
                  "trace, debug, info, warn, error or off (default: warn, or $LOCKSTEP_LOG)")
      ->check(CLI::IsMember({"trace", "debug", "info", "warn", "error", "off"}));
  command.add_option("--trace-tile", g_trace_tile,
                     "with --log-level debug, trace every exchange event of this logical tile");
}

void configure_logging(const CLI::App&) {
  std::string level = g_log_level;
  if (level.empty()) {
    const char* env = std::getenv("LOCKSTEP_LOG");
    level = env ? env : "warn";
  }
  auto logger = spdlog::stderr_color_mt("lockstep");
  logger->set_pattern("[%l] %v");
  spdlog::set_default_logger(logger);
  const auto parsed = spdlog::level::from_str(level);
  if (parsed == spdlog::level::off && level != "off") {
    throw InputError("LOCKSTEP_LOG: unknown log level '" + level + "'");
  }
  spdlog::set_level(parsed);
}

std::optional<unsigned> trace_tile() {
  if (g_trace_tile < 0) return std::nullopt;
  return static_cast<unsigned>(g_trace_tile);
}

}  // namespace lockstep::cli
