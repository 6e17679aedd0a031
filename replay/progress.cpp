#include "replay/progress.hpp"

#include <unistd.h>

#include <cmath>
#include <cstdio>

namespace lockstep::replay {

Progress::Progress(size_t total, std::string unit, bool enabled)
    : total_(total),
      unit_(std::move(unit)),
      enabled_(enabled),
      terminal_(::isatty(STDERR_FILENO) == 1),
      start_(std::chrono::steady_clock::now()),
      last_print_(start_) {}

Progress::~Progress() { finish(); }

std::string Progress::format_seconds(double seconds) {
  if (!std::isfinite(seconds) || seconds < 0) return "?";
  const auto s = static_cast<long>(std::lround(seconds));
  if (s < 60) return std::to_string(s) + " s";
  char text[32];
  std::snprintf(text, sizeof text, "%ld:%02ld", s / 60, s % 60);
  return text;
}

void Progress::advance(size_t done_now) {
  done_ += done_now;
  const auto now = std::chrono::steady_clock::now();
  // A bar redraws often; a log (CI, a file) gets a line every ten seconds.
  const auto interval = terminal_ ? std::chrono::milliseconds(100) : std::chrono::seconds(10);
  if (now - last_print_ >= interval) {
    last_print_ = now;
    print(false);
  }
}

void Progress::finish() {
  if (finished_) return;
  finished_ = true;
  print(true);
}

void Progress::print(bool final_line) {
  if (!enabled_ || total_ == 0) return;
  const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  const double rate = elapsed > 0 ? double(done_) / elapsed : 0;
  const double left = rate > 0 ? double(total_ - done_) / rate : NAN;
  if (terminal_) {
    constexpr int kWidth = 30;
    const int filled = static_cast<int>(kWidth * done_ / total_);
    std::string bar(filled, '#');
    bar.resize(kWidth, '.');
    std::fprintf(stderr, "\r[%s] %zu/%zu %s  %.1f/s  %s left   ", bar.c_str(), done_, total_, unit_.c_str(), rate,
                 format_seconds(left).c_str());
    if (final_line) std::fprintf(stderr, "\n");
  } else if (final_line) {
    std::fprintf(stderr, "%zu/%zu %s done in %s (%.1f/s)\n", done_, total_, unit_.c_str(),
                 format_seconds(elapsed).c_str(), rate);
  } else {
    std::fprintf(stderr, "%zu/%zu %s, %.1f/s, about %s left\n", done_, total_, unit_.c_str(), rate,
                 format_seconds(left).c_str());
  }
  std::fflush(stderr);
}

}  // namespace lockstep::replay
