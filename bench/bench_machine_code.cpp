// What executing supervisor machine code costs (issue 14's figure): the command lines a
// user runs, timed with this build and with a baseline build, on the same inputs. The
// baseline is any earlier build, e.g. the step executor before the code became the execution
// path (commit 5ed69ec): `git worktree add /tmp/steps 5ed69ec`, build `lockstep` there and
// give its binary as LOCKSTEP_BASELINE. Figures: `lockstep run` of the whole model (default
// the full-size SigLIP, built once with this build's `lockstep build`) and `lockstep replay`
// of a full-size phase (phase 4, B1024, 27 iterations, every word), each the best of 2;
// beside them the total cycles both report and this machine's memcpy bandwidth (the limit
// for moving the model's 0.5 GB of SRAM images).
//   LOCKSTEP_BINARY=build/default/lockstep LOCKSTEP_BASELINE=/tmp/steps/build/default/lockstep
//   build/default/bench/bench_machine_code [WORKLOAD]      (one command line)
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "bench_support.hpp"

namespace {

namespace fs = std::filesystem;
using lockstep::bench::best_of;
using lockstep::bench::CommandFigure;

// The "total cycles N" line of `lockstep run`'s text output, or "?".
std::string total_cycles(const std::string& binary, const std::string& package, const fs::path& dir) {
  const std::string out = (dir / "run.txt").string();
  if (lockstep::bench::timed_command("'" + binary + "' run '" + package + "' > '" + out + "' 2>&1") < 0) return "?";
  FILE* f = std::fopen(out.c_str(), "r");
  char line[512];
  std::string found = "?";
  while (f != nullptr && std::fgets(line, sizeof line, f) != nullptr) {
    const std::string text = line;
    if (text.rfind("total cycles ", 0) == 0) found = text.substr(13, text.find(',') - 13);
  }
  if (f != nullptr) std::fclose(f);
  return found;
}

void print_ratio(const char* what, const CommandFigure& code, const CommandFigure& baseline) {
  if (code.seconds < 0) {
    std::printf("%s: failed\n", what);
    return;
  }
  if (baseline.seconds < 0) {
    std::printf("%s: %.2f s, peak RSS %.2f GB (no baseline)\n", what, code.seconds, code.peak_rss_gb);
    return;
  }
  const double ratio = code.seconds / baseline.seconds - 1.0;
  std::printf("%s: %.2f s, baseline %.2f s: %+.1f%% (goal at most +20%%: %s); peak RSS %.2f vs %.2f GB\n", what,
              code.seconds, baseline.seconds, 100.0 * ratio, ratio <= 0.20 ? "met" : "missed", code.peak_rss_gb,
              baseline.peak_rss_gb);
}

}  // namespace

int main(int argc, char** argv) {
  std::setvbuf(stdout, nullptr, _IOLBF, 0);  // figures appear as they are measured
  const char* env = std::getenv("LOCKSTEP_BINARY");
  const std::string binary = env != nullptr ? env : "build/release/lockstep";
  const char* base_env = std::getenv("LOCKSTEP_BASELINE");
  const std::string baseline = base_env != nullptr ? base_env : "";
  const std::string workload = argc > 1 ? argv[1] : "configs/workloads/siglip-so400m.yaml";
  const fs::path dir = fs::temp_directory_path() / ("bench_machine_code_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  const std::string package = (dir / "model.lkspkg").string();
  const std::string capture = (dir / "capture.capnp").string();
  const int runs = 2;
  std::printf("workload %s; this build %s, baseline %s; each figure the best of %d runs\n", workload.c_str(),
              binary.c_str(), baseline.empty() ? "(none: set LOCKSTEP_BASELINE)" : baseline.c_str(), runs);
  if (lockstep::bench::measured_command({binary, "build", workload, "-o", package}).seconds < 0 ||
      lockstep::bench::measured_command({binary, "lower", workload, "-o", capture}).seconds < 0) {
    std::printf("lockstep build or lower of %s failed\n", workload.c_str());
    return 1;
  }
  const auto timed = [&](const std::vector<std::string>& args) {
    std::vector<std::string> a = args, b = args;
    a.insert(a.begin(), binary);
    b.insert(b.begin(), baseline);
    return std::make_pair(best_of(a, runs), baseline.empty() ? CommandFigure{} : best_of(b, runs));
  };
  const auto [run_code, run_base] = timed({"run", package});
  print_ratio("lockstep run (whole model)", run_code, run_base);
  std::printf("total cycles: %s this build, %s baseline\n", total_cycles(binary, package, dir).c_str(),
              baseline.empty() ? "-" : total_cycles(baseline, package, dir).c_str());
  const auto [replay_code, replay_base] = timed({"replay", capture, "--phase", "4", "--config", "B1024"});
  print_ratio("lockstep replay --phase 4 --config B1024 (every word, every iteration)", replay_code, replay_base);
  std::printf("memcpy on this machine: %.1f GB/s\n", lockstep::bench::memcpy_gb_per_s(256u << 20));
  fs::remove_all(dir);
  return 0;
}
