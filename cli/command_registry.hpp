#pragma once
// Each subcommand lives in its own file and registers itself here with a static
// CommandRegistration, so adding a command never edits main.cpp.
#include <CLI/CLI.hpp>
#include <functional>
#include <string>
#include <vector>

namespace lockstep::cli {

// Exit codes of every command.
inline constexpr int kExitOk = 0;
inline constexpr int kExitFailed = 1;    // a hazard, a payload mismatch, a failed check
inline constexpr int kExitBadInput = 2;  // InputError
inline constexpr int kExitInternal = 3;  // anything else: our bug

// `setup` adds the subcommand to the app and returns the function that runs it; that
// function returns the exit code. It runs only if the subcommand was selected.
using CommandSetup = std::function<std::function<int()>(CLI::App& app)>;

struct CommandRegistration {
  CommandRegistration(std::string name, CommandSetup setup);
};

struct RegisteredCommand {
  std::string name;
  CommandSetup setup;
};
std::vector<RegisteredCommand>& registered_commands();

// A parent command (`profile`, `device`) whose subcommands register themselves in their own
// files: adds `name` with `help`, sets every subcommand up (sorted by name), and returns the
// function that runs the one the user chose.
std::function<int()> add_parent_command(CLI::App& app, const std::string& name, const std::string& help,
                                        std::vector<RegisteredCommand> subcommands);

// Adds --log-level and --trace-tile to a subcommand (every command has them).
void add_common_options(CLI::App& command);

}  // namespace lockstep::cli
