#include "support/test_support.hpp"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <spawn.h>
#include <spdlog/sinks/ringbuffer_sink.h>
#include <spdlog/spdlog.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>

extern char** environ;

namespace lockstep::testing {

std::string source_path(const std::string& relative) { return std::string(LOCKSTEP_SOURCE_DIR) + "/" + relative; }

std::string integration_package(const std::string& name) {
  return source_path("tests/integration/packages/" + name + ".yaml");
}

std::map<std::string, std::string> files_of(const std::string& dir) {
  std::map<std::string, std::string> files;
  for (const auto& e : std::filesystem::directory_iterator(dir)) {
    files[e.path().filename().string()] = read_file(e.path().string());
  }
  return files;
}

std::string temp_dir(const std::string& name) {
  const auto base = std::filesystem::temp_directory_path() / ("lockstep-test-" + std::to_string(::getpid()));
  const auto dir = base / name;
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  static struct Cleanup {
    std::filesystem::path path;
    ~Cleanup() {
      std::error_code ec;
      std::filesystem::remove_all(path, ec);
    }
  } cleanup{base};
  return dir.string();
}

pid_t start_lockstep_in_own_group(const std::vector<std::string>& args) {
  // Built before the fork: the child of a threaded test binary only redirects and executes.
  std::vector<char*> argv{const_cast<char*>(LOCKSTEP_BINARY_PATH)};
  for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::setpgid(0, 0);
    ::freopen("/dev/null", "w", stderr);
    ::freopen("/dev/null", "w", stdout);
    ::execv(LOCKSTEP_BINARY_PATH, argv.data());
    ::_exit(127);
  }
  ::setpgid(pid, pid);  // in the parent too, so that the group exists before anyone kills it
  return pid;
}

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot read " + path);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

void write_file(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary);
  out << text;
  if (!out) throw std::runtime_error("cannot write " + path);
}

CommandResult run_lockstep(const std::vector<std::string>& args) {
  const std::string dir = temp_dir("run-" + std::to_string(std::rand()));
  const std::string out_path = dir + "/stdout", err_path = dir + "/stderr";
  std::vector<std::string> argv_strings{LOCKSTEP_BINARY_PATH};
  argv_strings.insert(argv_strings.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (auto& a : argv_strings) argv.push_back(a.data());
  argv.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 1, out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_addopen(&actions, 2, err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  pid_t pid = 0;
  if (posix_spawn(&pid, argv[0], &actions, nullptr, argv.data(), environ) != 0) {
    throw std::runtime_error("cannot start lockstep");
  }
  posix_spawn_file_actions_destroy(&actions);
  int status = 0;
  waitpid(pid, &status, 0);
  CommandResult result;
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  result.out = read_file(out_path);
  result.err = read_file(err_path);
  return result;
}

const arch::MachineDescription& c600_machine() {
  static const arch::MachineDescription machine = arch::load_machine("ipu21-c600");
  return machine;
}

const arch::Topology& c600_topology() {
  static const arch::Topology topology(c600_machine());
  return topology;
}

void expect_bad_input(const CommandResult& r, const std::string& text) {
  EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
  EXPECT_EQ(r.err.rfind("error: ", 0), 0u) << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  EXPECT_NE(r.err.find(text), std::string::npos) << "expected '" << text << "' in: " << r.err;
}

void expect_nothing_written(const std::string& dir, const std::string& name) {
  EXPECT_FALSE(std::filesystem::exists(dir + "/" + name));
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    EXPECT_EQ(entry.path().filename().string().rfind(name + ".tmp-", 0), std::string::npos) << entry.path();
  }
}

std::string debug_log_while(const std::function<void()>& body) {
  auto sink = std::make_shared<spdlog::sinks::ringbuffer_sink_mt>(256);
  struct Restore {
    std::shared_ptr<spdlog::logger> previous = spdlog::default_logger();
    spdlog::level::level_enum level = spdlog::get_level();
    ~Restore() {
      spdlog::set_default_logger(previous);
      spdlog::set_level(level);
    }
  } restore;
  spdlog::set_default_logger(std::make_shared<spdlog::logger>("caught", sink));
  spdlog::set_level(spdlog::level::debug);
  body();
  std::string all;
  for (const auto& line : sink->last_formatted()) all += line;
  return all;
}

}  // namespace lockstep::testing
