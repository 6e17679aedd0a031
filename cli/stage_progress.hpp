#pragma once
// A one-line progress display for long single-run commands (build, compile): the current
// stage and the time so far on stderr, redrawn in place, only on a terminal and only once
// the command has taken more than 2 s. stage() may be called from any thread.
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <string>
#include <thread>

namespace lockstep::cli {

class StageProgress {
 public:
  explicit StageProgress(std::string command);
  ~StageProgress();
  StageProgress(const StageProgress&) = delete;
  StageProgress& operator=(const StageProgress&) = delete;

  void stage(const std::string& text);
  void finish();  // clears nothing: ends the line if one was drawn

 private:
  void tick();

  std::string command_;
  bool terminal_;
  std::chrono::steady_clock::time_point start_;
  std::mutex mutex_;
  std::condition_variable wake_;
  std::string stage_ = "starting";
  bool done_ = false;
  bool shown_ = false;
  std::string last_line_;
  std::thread thread_;
};

}  // namespace lockstep::cli
