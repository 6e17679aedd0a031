// The `lockstep` command: parses arguments, runs one subcommand, maps errors to exit codes.
#include <spdlog/spdlog.h>
#if !defined(LOCKSTEP_JEMALLOC) && defined(__GLIBC__)
#include <malloc.h>
#endif

#include <algorithm>
#include <cstdlib>
#include <iostream>
#include <memory>
#include <sstream>

#include "cli/command_registry.hpp"
#include "cli/logging.hpp"
#include "cli/version.hpp"
#include "io/errors.hpp"
#include "io/printable.hpp"
#include "workload/blas_threads.hpp"

namespace lockstep::cli {

std::vector<RegisteredCommand>& registered_commands() {
  static std::vector<RegisteredCommand> commands;
  return commands;
}

CommandRegistration::CommandRegistration(std::string name, CommandSetup setup) {
  registered_commands().push_back({std::move(name), std::move(setup)});
}

std::function<int()> add_parent_command(CLI::App& app, const std::string& name, const std::string& help,
                                        std::vector<RegisteredCommand> subcommands) {
  CLI::App* command = app.add_subcommand(name, help);
  command->require_subcommand(1);
  std::sort(subcommands.begin(), subcommands.end(), [](const auto& a, const auto& b) { return a.name < b.name; });
  std::vector<std::pair<CLI::App*, std::function<int()>>> runners;
  for (auto& sub : subcommands) {
    auto run = sub.setup(*command);
    runners.emplace_back(command->get_subcommand(sub.name), std::move(run));
  }
  return [runners]() {
    for (const auto& [sub, run] : runners) {
      if (sub->parsed()) return run();
    }
    return kExitBadInput;
  };
}

// File-local, named so that the CLI's unity batches (cli/CMakeLists.txt) keep files apart.
namespace main_local {}
using namespace main_local;
namespace main_local {

// A command's one-line summary for the command lists: its description's first sentence, up
// to the first colon or semicolon (the descriptions lead with what the command does, then
// spell it out), without a long parenthesis.
std::string summary_line(const std::string& description) {
  std::string text;
  for (char c : description) text += c == '\n' ? ' ' : c;
  auto cut = [&](const std::string& stop) {
    const size_t at = text.find(stop);
    if (at != std::string::npos) text = text.substr(0, at) + ".";
  };
  cut(". ");
  cut(": ");
  cut("; ");
  if (text.size() > 100) cut(" (");
  while (text.size() > 1 && text[text.size() - 2] == '.') text.pop_back();  // ".." from a cut
  return text;
}

// `lockstep --help` (and `lockstep device --help`, `lockstep profile --help`) list one line per
// command, as git and cargo do; the whole description is `COMMAND --help`'s.
class CommandListFormatter : public CLI::Formatter {
 public:
  std::string make_subcommand(const CLI::App* sub) const override {
    std::stringstream out;
    CLI::detail::format_help(out, sub->get_display_name(true), summary_line(sub->get_description()), column_width_);
    return out.str();
  }
};

}  // namespace main_local
}  // namespace lockstep::cli

// The heap. Here a fresh 4 KiB page costs 10-13 us at its first touch (the guest is
// paravirtualised: a fault for each page-table entry), a 2 MiB transparent huge page 0.13-3.5 ms,
// and a replay's run met about 3,500 fresh heap pages (docs/performance.md, round thirty-three).
// jemalloc, linked ahead of the C library, reads this when it starts, before any library
// allocates: its memory on huge pages, and large blocks kept with the rest when freed (by default
// it returns blocks of 8 MiB and more at once, and a run that plans phase after phase faults them
// in again). glibc takes huge pages only from GLIBC_TUNABLES, read as a process starts.
#if defined(LOCKSTEP_JEMALLOC)
extern "C" {
extern const char* malloc_conf;
const char* malloc_conf = "thp:always,metadata_thp:always,oversize_threshold:0";
}
#endif

// Without jemalloc (the sanitized builds), glibc keeps freed memory and grows the heap in large
// steps, which saved 0.4-0.6 s of a whole run (round five).
static void set_up_the_heap() {
#if !defined(LOCKSTEP_JEMALLOC) && defined(__GLIBC__)
  mallopt(M_MMAP_THRESHOLD, 32 << 20);  // glibc's largest
  mallopt(M_TRIM_THRESHOLD, 1 << 30);
  mallopt(M_TOP_PAD, 256 << 20);
#endif
}

int main(int argc, char** argv) {
  using namespace lockstep::cli;
  set_up_the_heap();
  lockstep::workload::stop_blas_worker_threads();  // never used; idle, they spin for 0.15 s
  CLI::App app{
      "Lockstep: a deterministic, cycle-level simulator and replay harness for IPU21-class\n"
      "machines. Compiles exchange phases to real rows, runs packages on a SystemC model\n"
      "of tiles, fabric and barriers, and checks payloads, cycles and golden outputs.\n"
      "Run `lockstep COMMAND --help` for each command. Exit codes: 0 ok, 1 a failed check\n"
      "(hazard, mismatch), 2 bad input, 3 internal error.",
      "lockstep"};
  app.formatter(std::make_shared<CommandListFormatter>());  // before the commands: they inherit it
  app.require_subcommand(1);
  app.set_version_flag("--version", "lockstep " LOCKSTEP_VERSION " (commit " LOCKSTEP_COMMIT ")");
  auto commands = registered_commands();
  std::sort(commands.begin(), commands.end(), [](const auto& a, const auto& b) { return a.name < b.name; });
  std::vector<std::pair<CLI::App*, std::function<int()>>> runners;
  for (auto& command : commands) {
    auto run = command.setup(app);
    runners.emplace_back(app.get_subcommand(command.name), std::move(run));
  }
  add_common_options(app);  // --log-level and --trace-tile before the subcommand too
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == static_cast<int>(CLI::ExitCodes::Success)) return app.exit(e);  // --help, --version
    std::cerr << "error: " << lockstep::printable(e.what()) << " (see lockstep --help)\n";
    return kExitBadInput;
  }
  try {
    for (auto& [sub, run] : runners) {
      if (sub->parsed()) {
        configure_logging(*sub);
        return run();
      }
    }
  } catch (const lockstep::InputError& e) {
    std::cerr << "error: " << lockstep::printable(e.what()) << "\n";
    return kExitBadInput;
  } catch (const std::exception& e) {
    std::cerr << "internal error: " << lockstep::printable(e.what()) << "\n";
    return kExitInternal;
  }
  return kExitBadInput;
}
