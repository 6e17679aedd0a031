// The same sweep under `mpirun -np 2` (loopback) writes every output file byte for byte as
// a one-rank run does. Skipped only when mpirun is not installed.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>

#include "support/test_support.hpp"

namespace lockstep::integration {
namespace {

std::string find_mpirun() {
  const char* path = std::getenv("PATH");
  std::string dirs = path ? path : "/usr/bin:/bin";
  size_t start = 0;
  while (start <= dirs.size()) {
    const size_t colon = dirs.find(':', start);
    const std::string dir = dirs.substr(start, colon == std::string::npos ? std::string::npos : colon - start);
    const std::string candidate = (dir.empty() ? "." : dir) + "/mpirun";
    if (::access(candidate.c_str(), X_OK) == 0) return candidate;
    if (colon == std::string::npos) break;
    start = colon + 1;
  }
  return "";
}

using testing::files_of;

TEST(SweepMpi, TwoRanksWriteTheSameBytesAsOne) {
  const std::string mpirun = find_mpirun();
  if (mpirun.empty()) GTEST_SKIP() << "mpirun not installed";
  const std::string dir = testing::temp_dir("sweep-mpi");
  const std::string capture = dir + "/capture.yaml", sweep = dir + "/sweep.yaml";
  const auto synth = testing::run_lockstep({"capture", "synth", "--family", "skewed", "--tiles", "16", "--seed", "5",
                                            "--phases", "3", "--machine", "ipu21-c600", "-o", capture});
  ASSERT_EQ(synth.exit_code, 0) << synth.err;
  testing::write_file(sweep, "configurations: [latency, B64, B256]\nreference: B256\nmax_row_growth_bytes: [64]\n");

  const auto one =
      testing::run_lockstep({"sweep", capture, "--configs", sweep, "--jobs", "1", "--no-timings", "-o", dir + "/one"});
  // 0, or 1 if a point fails its payload check: the ranks must say the same.
  ASSERT_TRUE(one.exit_code == 0 || one.exit_code == 1) << one.err;

  // Loopback only, as root in a container, more ranks than cores allowed; each rank also
  // forks a worker process to cover processes inside ranks.
  const std::string command =
      "OMPI_MCA_btl=self,tcp OMPI_MCA_btl_tcp_if_include=lo OMPI_MCA_oob_tcp_if_include=lo "
      "OMPI_MCA_mpi_warn_on_fork=0 " +
      mpirun + " -np 2 --allow-run-as-root --oversubscribe " + LOCKSTEP_BINARY_PATH + " sweep " + capture +
      " --configs " + sweep + " --jobs 2 --no-timings -o " + dir + "/two > " + dir + "/mpi.log 2>&1";
  const int status = std::system(command.c_str());
  ASSERT_TRUE(WIFEXITED(status)) << testing::read_file(dir + "/mpi.log");
  ASSERT_EQ(WEXITSTATUS(status), one.exit_code) << testing::read_file(dir + "/mpi.log");

  const auto expected = files_of(dir + "/one");
  const auto found = files_of(dir + "/two");
  ASSERT_GE(expected.size(), 4u);
  ASSERT_EQ(found.size(), expected.size());
  for (const auto& [name, bytes] : expected) {
    ASSERT_TRUE(found.count(name)) << name;
    EXPECT_EQ(found.at(name), bytes) << name;
  }
  // Only rank 0 reports.
  const std::string log = testing::read_file(dir + "/mpi.log");
  EXPECT_NE(log.find("x 2 ranks"), std::string::npos) << log;
}

}  // namespace
}  // namespace lockstep::integration
