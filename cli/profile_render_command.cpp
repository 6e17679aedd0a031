// `lockstep profile render PROFILE -o profile.html`: the timeline page
// (profile/profile_html.hpp, docs/profile-queries.md "The timeline").
#include <spdlog/spdlog.h>

#include <chrono>
#include <filesystem>
#include <memory>

#include "cli/profile_cli.hpp"
#include "cli/profile_command.hpp"
#include "cli/stage_progress.hpp"
#include "io/atomic_file.hpp"
#include "profile/profile.hpp"
#include "profile/profile_html.hpp"

namespace lockstep::cli {
// File-local, named so that the CLI's unity batches (cli/CMakeLists.txt) keep files apart.
namespace profile_render_command_local {}
using namespace profile_render_command_local;
namespace profile_render_command_local {

struct RenderOptions {
  std::string profile;
  std::string output;
  bool shared_clock = false;
};

int run_render(const RenderOptions& o) {
  arch::check_output_file(o.output, "-o");
  arch::refuse_overwriting_input(o.output, {o.profile});
  const auto began = std::chrono::steady_clock::now();
  StageProgress progress("profile render");
  progress.stage("reading " + o.profile);
  const arch::Profile profile = arch::read_profile(o.profile);
  progress.stage("drawing");
  replay::ProfileHtmlOptions options;
  options.shared_clock = o.shared_clock;
  options.title = std::filesystem::path(o.profile).filename().string();
  const replay::ProfileHtml page = replay::render_profile_html(profile, options);
  progress.stage("writing " + o.output);
  arch::write_file_atomically(o.output, page.html);
  progress.finish();
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - began).count();
  spdlog::info("rendered {} tiles, {} samples, {} phase bands in {:.2f} s", page.tiles, page.samples, page.bands,
               seconds);
  return kExitOk;
}

const ProfileSubcommandRegistration registration{
    "render", [](CLI::App& parent) -> std::function<int()> {
      auto* cmd = parent.add_subcommand(
          "render",
          "Draw a profile as one self-contained HTML page (no network): a band per global\n"
          "exchange window (from the last tile's entry to the last end), aggregate rows (the "
          "share\n"
          "of the shown tiles computing, exchanging, synchronizing, idle), and a lane per tile\n"
          "(exchanges split into boundary wait, tx/rx/partner-busy/idle roles and boundary\n"
          "sampling, as the stack's renderer does). Wheel zooms, drag pans, a box filters tiles,\n"
          "hovering shows the sample. The view starts at the latest tile's first sample unless\n"
          "--shared-clock. docs/profile-queries.md.\n"
          "Example: lockstep profile render run.lsprof -o run.html");
      auto o = std::make_shared<RenderOptions>();
      add_profile_argument(*cmd, o->profile);
      cmd->add_option("-o,--output", o->output, "the HTML file to write")->required();
      add_shared_clock_flag(*cmd, o->shared_clock);
      add_common_options(*cmd);
      return [o]() { return run_render(*o); };
    }};

}  // namespace profile_render_command_local
}  // namespace lockstep::cli
