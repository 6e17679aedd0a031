// The timeline page in a real browser: headless Chromium (Debian's `chromium`, installed by
// scripts/install-deps.sh) opens `lockstep profile render`'s page and we check that it ran
// (body[data-status="ok"], no console errors), that the DOM holds one .phase-band per
// exchange window, and that its screenshot is not blank. Skipped where chromium is absent.
#include <cairo.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <regex>

#include "support/test_support.hpp"
#include "tests/cli/profile_fixture.hpp"

namespace lockstep::testing {
namespace {

// $LOCKSTEP_CHROMIUM if set, else Debian's paths; "" when that is not an executable.
std::string find_chromium() {
  if (const char* env = std::getenv("LOCKSTEP_CHROMIUM"); env != nullptr && *env) {
    return ::access(env, X_OK) == 0 ? env : "";
  }
  for (const char* path : {"/usr/bin/chromium", "/usr/bin/chromium-browser"}) {
    if (::access(path, X_OK) == 0) return path;
  }
  return "";
}

struct BrowserRun {
  int exit_code = 0;
  std::string out, err;
  double seconds = 0;
};

// Runs chromium headless on `page` with extra `flags`; stdout and stderr to files.
BrowserRun run_chromium(const std::string& chromium, const std::string& dir, const std::string& page,
                        const std::string& flags) {
  const std::string out = dir + "/chromium.out", err = dir + "/chromium.err";
  const std::string command = chromium + " --headless --no-sandbox --disable-gpu --no-first-run " +
                              "--disable-extensions --enable-logging=stderr --v=0 --user-data-dir=" + dir +
                              "/chromium-profile --window-size=1400,900 " + flags + " file://" + page + " >" + out +
                              " 2>" + err;
  const auto began = std::chrono::steady_clock::now();
  const int status = std::system(command.c_str());
  BrowserRun run;
  run.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - began).count();
  run.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  run.out = read_file(out);
  run.err = read_file(err);
  return run;
}

size_t count_of(const std::string& text, const std::string& needle) {
  size_t n = 0;
  for (size_t at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1)) ++n;
  return n;
}

// Console lines from the page: Chromium logs every console message of a page, errors and
// uncaught exceptions included, as "...:CONSOLE:N] "text", source: file://..." (at INFO
// level, whatever the message's level). The page logs nothing when all is well.
std::vector<std::string> console_errors(const std::string& log) {
  std::vector<std::string> errors;
  const std::regex error_line(R"(Uncaught|CONSOLE.*source: file://)");
  size_t at = 0;
  while (at < log.size()) {
    const size_t end = std::min(log.find('\n', at), log.size());
    const std::string line = log.substr(at, end - at);
    if (std::regex_search(line, error_line)) errors.push_back(line);
    at = end + 1;
  }
  return errors;
}

// Distinct colours in a PNG (stops counting at 2).
int png_colours(const std::string& path) {
  cairo_surface_t* surface = cairo_image_surface_create_from_png(path.c_str());
  if (cairo_surface_status(surface) != CAIRO_STATUS_SUCCESS) {
    cairo_surface_destroy(surface);
    return 0;
  }
  cairo_surface_flush(surface);
  const int width = cairo_image_surface_get_width(surface), height = cairo_image_surface_get_height(surface);
  const int stride = cairo_image_surface_get_stride(surface);
  const unsigned char* pixels = cairo_image_surface_get_data(surface);
  int colours = width * height > 0 ? 1 : 0;
  const uint32_t first = width * height > 0 ? *reinterpret_cast<const uint32_t*>(pixels) : 0;
  for (int y = 0; y < height && colours < 2; ++y) {
    const auto* row = reinterpret_cast<const uint32_t*>(pixels + static_cast<size_t>(y) * stride);
    for (int x = 0; x < width; ++x) {
      if (row[x] != first) {
        colours = 2;
        break;
      }
    }
  }
  cairo_surface_destroy(surface);
  return colours;
}

// Renders a synthetic profile, opens it, and checks status, bands, console and screenshot.
void check_page_in_browser(uint32_t tiles, uint32_t phases, double* open_seconds, double* ready_ms) {
  const std::string chromium = find_chromium();
  if (chromium.empty())
    GTEST_SKIP() << "no chromium at /usr/bin/chromium or $LOCKSTEP_CHROMIUM (scripts/install-deps.sh "
                    "installs Debian's): the page is not opened in a browser";
  const std::string dir = temp_dir("browser-" + std::to_string(tiles));
  const std::string profile = dir + "/p.lsprof", page = dir + "/p.html";
  arch::write_profile(synthetic_profile(tiles, phases), profile);
  const auto render_began = std::chrono::steady_clock::now();
  const CommandResult rendered = run_lockstep({"profile", "render", profile, "-o", page});
  const double render_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - render_began).count();
  ASSERT_EQ(rendered.exit_code, 0) << rendered.err;
  std::cout << tiles << " tiles, " << phases << " phases: render " << render_seconds << " s, page "
            << std::filesystem::file_size(page) << " bytes\n";

  const BrowserRun dom = run_chromium(chromium, dir, page, "--virtual-time-budget=5000 --dump-dom");
  ASSERT_EQ(dom.exit_code, 0) << dom.err;
  std::smatch status;
  ASSERT_TRUE(std::regex_search(dom.out, status, std::regex(R"re(<body data-status="(\w+)"[^>]*>)re")))
      << dom.out.substr(0, 2000);
  EXPECT_EQ(status[1].str(), "ok") << dom.out.substr(dom.out.find("id=\"status\""), 300);
  EXPECT_EQ(count_of(dom.out, "class=\"phase-band"), phases);
  const auto errors = console_errors(dom.err);
  EXPECT_TRUE(errors.empty()) << errors.front();

  // Timing on the real clock: virtual time runs slower than the page's work. The script
  // draws before the load event, so the plain dump already holds its figure.
  const BrowserRun timed = run_chromium(chromium, dir, page, "--dump-dom");
  ASSERT_EQ(timed.exit_code, 0) << timed.err;
  std::smatch ready;
  ASSERT_TRUE(std::regex_search(timed.out, ready, std::regex(R"re(data-status="ok" data-ready-ms="(\d+)")re")))
      << timed.out.substr(0, 2000);
  *ready_ms = std::stod(ready[1].str());
  *open_seconds = timed.seconds;

  const std::string png = dir + "/shot.png";
  const BrowserRun shot = run_chromium(chromium, dir, page, "--virtual-time-budget=5000 --screenshot=" + png);
  ASSERT_EQ(shot.exit_code, 0) << shot.err;
  EXPECT_EQ(png_colours(png), 2) << "the screenshot is blank or unreadable: " << png;
}

TEST(ProfileBrowserTest, SmallProfileRendersInChromium) {
  double seconds = 0, ready_ms = 0;
  check_page_in_browser(16, 6, &seconds, &ready_ms);
}

// The issue's figure: how long a 1,472-tile timeline takes to open (the page's own time from
// navigation to its first drawing; Chromium's start-up is printed beside it); the goal is
// under 5 s. Printed, not asserted: a timed test would fail on a slow machine for no fault
// of the page (measured 0.35-1.1 s on the 2-core development machine).
TEST(ProfileBrowserTest, FullChipProfileOpens) {
  double seconds = 0, ready_ms = 0;
  check_page_in_browser(1472, 40, &seconds, &ready_ms);
  if (::testing::Test::IsSkipped() || ::testing::Test::HasFatalFailure()) return;
  std::cout << "1472 tiles: chromium start to DOM dump " << seconds << " s; the page drawn " << ready_ms
            << " ms after navigation\n";
  RecordProperty("chromium_seconds", std::to_string(seconds));
  RecordProperty("page_ready_ms", std::to_string(ready_ms));
  EXPECT_GT(ready_ms, 0);
  std::cout << "goal: under 5000 ms: " << (ready_ms < 5000 ? "met" : "missed") << "\n";
}

}  // namespace
}  // namespace lockstep::testing
