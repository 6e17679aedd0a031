// `lockstep profile export PROFILE --chrome FILE`: a Chrome trace event file.
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <memory>
#include <optional>
#include <ostream>
#include <stdexcept>
#include <streambuf>
#include <vector>

#include "cli/profile_cli.hpp"
#include "cli/profile_command.hpp"
#include "cli/stage_progress.hpp"
#include "io/atomic_file.hpp"
#include "io/errors.hpp"
#include "profile/profile.hpp"
#include "profile/profile_chrome.hpp"

namespace lockstep::cli {
// File-local, named so that the CLI's unity batches (cli/CMakeLists.txt) keep files apart.
namespace profile_export_command_local {}
using namespace profile_export_command_local;
namespace profile_export_command_local {

struct ExportArgs {
  std::string profile;
  std::string chrome;
  std::string stack;
  std::string tiles;                   // --tiles LIST
  std::optional<uint32_t> invocation;  // --invocation N
};

// An ostream onto a descriptor, so a trace of gigabytes is never held in memory whole.
class DescriptorBuffer : public std::streambuf {
 public:
  explicit DescriptorBuffer(int fd) : fd_(fd), buffer_(1 << 20) {
    setp(buffer_.data(), buffer_.data() + buffer_.size());
  }
  int sync() override {
    const char* at = pbase();
    while (at < pptr()) {
      const ssize_t n = ::write(fd_, at, static_cast<size_t>(pptr() - at));
      if (n < 0) throw std::runtime_error(std::strerror(errno));
      at += n;
    }
    setp(buffer_.data(), buffer_.data() + buffer_.size());
    return 0;
  }
  int_type overflow(int_type c) override {
    sync();
    if (c != traits_type::eof()) sputc(traits_type::to_char_type(c));
    return traits_type::not_eof(c);
  }

 private:
  int fd_;
  std::vector<char> buffer_;
};

int export_profile(const ExportArgs& args) {
  if (args.chrome.empty() && args.stack.empty()) throw InputError("profile export: give --chrome FILE or --stack FILE");
  for (const auto& [file, option] : {std::pair{args.chrome, "--chrome"}, std::pair{args.stack, "--stack"}}) {
    if (file.empty()) continue;
    arch::check_output_file(file, option);
    arch::refuse_overwriting_input(file, {args.profile});
  }
  StageProgress progress("profile export");
  progress.stage("reading " + args.profile);
  const arch::Profile profile = arch::read_profile(args.profile);
  if (!args.stack.empty()) {
    progress.stage("writing " + args.stack);
    arch::write_profile(profile, args.stack, arch::ProfileLayout::Inline);
  }
  if (args.chrome.empty()) return kExitOk;
  progress.stage("writing " + args.chrome);
  replay::ChromeTraceOptions options;
  if (!args.tiles.empty()) options.tiles = parse_id_list(args.tiles, "--tiles");
  options.invocation = args.invocation;
  arch::write_file_atomically(args.chrome, [&](int fd) {
    DescriptorBuffer buffer(fd);
    std::ostream out(&buffer);
    out.exceptions(std::ios::badbit);
    replay::write_chrome_trace(profile, options, out);
    out.flush();
    buffer.pubsync();
  });
  progress.finish();
  return kExitOk;
}

const ProfileSubcommandRegistration registration{
    "export", [](CLI::App& app) {
      auto* cmd =
          app.add_subcommand("export",
                             "Convert a profile for other tools. --chrome FILE writes the Chrome trace event format\n"
                             "(JSON), which Perfetto (ui.perfetto.dev) and chrome://tracing open: one thread per\n"
                             "tile, one complete event per sample, times in microseconds at the profile's clock\n"
                             "(uncropped), cycles, phase, epoch, operation, metadata and exchange activities in args.\n"
                             "--stack FILE writes the IPU21 stack's own profile layout, every sample with its whole\n"
                             "step inline, for that stack's tools (Lockstep's compact layout shares steps).");
      auto args = std::make_shared<ExportArgs>();
      cmd->add_option("PROFILE", args->profile, "the profile (`lockstep run --profile`)")->required();
      cmd->add_option("--chrome", args->chrome, "write the Chrome trace event JSON here");
      cmd->add_option("--stack", args->stack, "write the profile in the stack's inline layout here");
      cmd->add_option("--tiles", args->tiles, "--chrome: only these physical tiles (\"0,3,8-15\")");
      cmd->add_option("--invocation", args->invocation, "--chrome: only this invocation (0 is the first)");
      add_common_options(*cmd);
      return [args]() { return export_profile(*args); };
    }};

}  // namespace profile_export_command_local
}  // namespace lockstep::cli
