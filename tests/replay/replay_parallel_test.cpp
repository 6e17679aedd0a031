#include <gtest/gtest.h>
#include <unistd.h>

#include <csignal>
#include <stdexcept>

#include "io/errors.hpp"
#include "replay/parallel.hpp"

namespace lockstep::replay {
namespace {

std::string square(size_t i) { return std::to_string(i * i) + std::string(i % 5 * 1000, 'x'); }

TEST(ReplayParallel, SameResultsWhateverTheJobCount) {
  const auto one = run_in_processes(23, 1, square);
  ASSERT_EQ(one.size(), 23u);
  EXPECT_EQ(one[7], square(7));
  for (size_t jobs : {2u, 3u, 8u, 40u}) {
    size_t done = 0;
    EXPECT_EQ(run_in_processes(23, jobs, square, [&](size_t, const std::string&) { ++done; }), one) << jobs;
    EXPECT_EQ(done, 23u);
  }
  EXPECT_TRUE(run_in_processes(0, 4, square).empty());
}

TEST(ReplayParallel, TasksRunInOtherProcesses) {
  const auto parent = std::to_string(::getpid());
  const auto pids = run_in_processes(4, 2, [](size_t) { return std::to_string(::getpid()); });
  for (const auto& pid : pids) EXPECT_NE(pid, parent);
}

TEST(ReplayParallel, FailuresKeepTheirKind) {
  EXPECT_THROW(run_in_processes(6, 2,
                                [](size_t i) -> std::string {
                                  if (i == 4) throw InputError("phase 4: bad");
                                  return "ok";
                                }),
               InputError);
  try {
    run_in_processes(6, 3, [](size_t i) -> std::string {
      if (i == 2) throw std::logic_error("broken");
      return "ok";
    });
    FAIL() << "no exception";
  } catch (const InputError&) {
    FAIL() << "wrong kind";
  } catch (const std::runtime_error& e) {
    EXPECT_STREQ(e.what(), "broken");
  }
}

TEST(ReplayParallel, AWorkerThatDiesIsReported) {
  try {
    run_in_processes(5, 2, [](size_t i) -> std::string {
      if (i == 3) _exit(9);
      return "ok";
    });
    FAIL() << "no exception";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("died while running task 3"), std::string::npos) << e.what();
  }
}

TEST(ReplayParallel, ACrashBecomesThatTasksResultWhenAsked) {
  for (size_t jobs : {1u, 2u}) {
    const auto results = run_in_processes(
        6, jobs,
        [](size_t i) -> std::string {
          if (i == 1 || i == 4) ::raise(SIGSEGV);
          return "ok " + std::to_string(i);
        },
        {}, [](size_t i, const std::string& how) { return "crash " + std::to_string(i) + ": " + how; });
    ASSERT_EQ(results.size(), 6u);
    EXPECT_EQ(results[0], "ok 0");
    EXPECT_EQ(results[5], "ok 5");
    EXPECT_EQ(results[4].rfind("crash 4: killed by signal 11", 0), 0u) << results[4];
  }
}

}  // namespace
}  // namespace lockstep::replay
