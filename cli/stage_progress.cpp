#include "cli/stage_progress.hpp"

#include <unistd.h>

#include <cstdio>

#include "replay/progress.hpp"

namespace lockstep::cli {

StageProgress::StageProgress(std::string command)
    : command_(std::move(command)), terminal_(::isatty(STDERR_FILENO) == 1), start_(std::chrono::steady_clock::now()) {
  if (terminal_) thread_ = std::thread([this] { tick(); });
}

StageProgress::~StageProgress() { finish(); }

void StageProgress::stage(const std::string& text) {
  std::lock_guard<std::mutex> lock(mutex_);
  stage_ = text;
}

void StageProgress::finish() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (done_) return;
    done_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
  if (shown_) std::fprintf(stderr, "\n");
}

void StageProgress::tick() {
  std::unique_lock<std::mutex> lock(mutex_);
  while (!wake_.wait_for(lock, std::chrono::milliseconds(200), [this] { return done_; })) {
    const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
    if (elapsed < 2.0) continue;
    const std::string line = command_ + ": " + stage_ + ", " + replay::Progress::format_seconds(elapsed);
    if (line == last_line_) continue;
    // Pad over the end of a longer previous line.
    const size_t pad = last_line_.size() > line.size() ? last_line_.size() - line.size() : 0;
    std::fprintf(stderr, "\r%s%s", line.c_str(), std::string(pad, ' ').c_str());
    std::fflush(stderr);
    last_line_ = line;
    shown_ = true;
  }
}

}  // namespace lockstep::cli
