#pragma once
// Progress of a long run on stderr: a bar on a terminal, plain periodic lines otherwise.
#include <chrono>
#include <cstddef>
#include <string>

namespace lockstep::replay {

class Progress {
 public:
  // `enabled` false prints nothing (tests, MPI ranks other than 0).
  Progress(size_t total, std::string unit, bool enabled);
  ~Progress();
  void advance(size_t done_now = 1);
  void finish();  // final line; called by the destructor if not before

  // "1:05" / "12 s": the time left at the current rate.
  static std::string format_seconds(double seconds);

 private:
  void print(bool final_line);

  size_t total_;
  size_t done_ = 0;
  std::string unit_;
  bool enabled_;
  bool terminal_;
  bool finished_ = false;
  std::chrono::steady_clock::time_point start_;
  std::chrono::steady_clock::time_point last_print_;
};

}  // namespace lockstep::replay
