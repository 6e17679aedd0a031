#include "cli/profile_cli.hpp"

#include <algorithm>
#include <charconv>
#include <cstdint>
#include <cstdio>
#include <ostream>

#include "cli/options.hpp"
#include "io/csv.hpp"
#include "io/errors.hpp"

namespace lockstep::cli {
// File-local, named so that the CLI's unity batches (cli/CMakeLists.txt) keep files apart.
namespace profile_cli_local {}
using namespace profile_cli_local;
namespace profile_cli_local {

bool parse_id(const std::string& text, uint32_t& value) {
  const bool hex = text.size() > 2 && text[0] == '0' && (text[1] == 'x' || text[1] == 'X');
  const char* begin = text.data() + (hex ? 2 : 0);
  const char* end = text.data() + text.size();
  if (begin == end) return false;
  const auto [ptr, ec] = std::from_chars(begin, end, value, hex ? 16 : 10);
  return ec == std::errc() && ptr == end;
}

bool looks_numeric(const std::string& text) {
  if (text.empty()) return false;
  return std::all_of(text.begin(), text.end(), [](char c) { return (c >= '0' && c <= '9') || c == '.' || c == '-'; });
}

}  // namespace profile_cli_local

LoadedProfile load_profile(const std::string& path, bool shared_clock) {
  LoadedProfile loaded;
  loaded.profile = arch::read_profile(path);
  loaded.timeline = replay::place_samples(loaded.profile, shared_clock);
  return loaded;
}

std::set<uint32_t> parse_id_list(const std::string& text, const std::string& option) {
  std::set<uint32_t> ids;
  size_t at = 0;
  while (at <= text.size()) {
    const size_t comma = std::min(text.find(',', at), text.size());
    const std::string item = text.substr(at, comma - at);
    const size_t dash = item.find('-');
    uint32_t first = 0, last = 0;
    const bool ok = dash == std::string::npos
                        ? parse_id(item, first) && parse_id(item, last)
                        : parse_id(item.substr(0, dash), first) && parse_id(item.substr(dash + 1), last);
    if (!ok || last < first) {
      throw InputError(option + ": '" + item + "' is not a number or a range A-B (list: 0,3,8-15)");
    }
    if (last - first > 1u << 20) throw InputError(option + ": range '" + item + "' is too wide");
    for (uint64_t id = first; id <= last; ++id) ids.insert(static_cast<uint32_t>(id));
    at = comma + 1;
  }
  return ids;
}

arch::ProfileStepKind parse_step_kind(const std::string& text, const std::string& option) {
  if (text == "exchange") return arch::ProfileStepKind::Exchange;
  if (text == "compute") return arch::ProfileStepKind::Compute;
  if (text == "synchronization" || text == "sync") return arch::ProfileStepKind::Synchronization;
  if (text == "idle") return arch::ProfileStepKind::Idle;
  throw InputError(option + ": '" + text + "' is not one of exchange, compute, synchronization, idle");
}

CLI::Option* add_shared_clock_flag(CLI::App& command, bool& shared_clock) {
  return command.add_flag("--shared-clock", shared_clock,
                          "offsets from the earliest first sample, nothing clipped (default: crop\n"
                          "to the latest tile's first sample, as the stack does)");
}

CLI::Option* add_profile_argument(CLI::App& command, std::string& profile) {
  return command.add_option("PROFILE", profile, "profile file (run --profile, replay --profile or the stack's)")
      ->required();
}

void add_epoch_and_offset_filters(CLI::App& command, std::optional<uint32_t>& epoch, std::optional<uint64_t>& at_offset,
                                  const std::string& what) {
  command.add_option("--epoch", epoch, "only " + what + " of this epoch (Repeat iteration)")
      ->check(unsigned_in(0, UINT32_MAX));
  command.add_option("--at-offset", at_offset, "only " + what + " running at this cycle offset (inside the span)")
      ->check(unsigned_in(0, UINT64_MAX));
}

void add_json_and_csv_flags(CLI::App& command, bool& json, bool& csv, const std::string& json_help,
                            const std::string& csv_help) {
  auto* json_flag = command.add_flag("--json", json, json_help);
  command.add_flag("--csv", csv, csv_help)->excludes(json_flag);
}

void TextTable::print_text(std::ostream& out) const {
  std::vector<size_t> widths(headers.size());
  std::vector<bool> numeric(headers.size(), !rows.empty());
  for (size_t c = 0; c < headers.size(); ++c) widths[c] = headers[c].size();
  for (const auto& row : rows) {
    for (size_t c = 0; c < row.size() && c < headers.size(); ++c) {
      widths[c] = std::max(widths[c], row[c].size());
      if (!looks_numeric(row[c])) numeric[c] = false;
    }
  }
  const auto print_row = [&](const std::vector<std::string>& cells) {
    std::string line;
    for (size_t c = 0; c < headers.size(); ++c) {
      const std::string& cell = c < cells.size() ? cells[c] : std::string();
      const std::string pad(widths[c] - std::min(widths[c], cell.size()), ' ');
      if (c > 0) line += "  ";
      line += numeric[c] ? pad + cell : cell + (c + 1 < headers.size() ? pad : "");
    }
    out << line << "\n";
  };
  print_row(headers);
  for (const auto& row : rows) print_row(row);
}

void TextTable::print_csv(std::ostream& out) const {
  const auto print_row = [&](const std::vector<std::string>& cells) {
    for (size_t c = 0; c < cells.size(); ++c) out << (c ? "," : "") << arch::csv_field(cells[c]);
    out << "\n";
  };
  print_row(headers);
  for (const auto& row : rows) print_row(row);
}

std::string fixed3(double value) {
  char text[64];
  std::snprintf(text, sizeof text, "%.3f", value);
  return text;
}

std::string timeline_line(const std::string& file, const arch::Profile& profile,
                          const replay::ProfileTimeline& timeline, bool shared_clock) {
  size_t tiles = 0;
  for (size_t i = 0; i < timeline.samples.size(); ++i) {
    if (i == 0 || timeline.samples[i].tile != timeline.samples[i - 1].tile) ++tiles;
  }
  std::string line = file + ": " + std::to_string(tiles) + " tiles, " + std::to_string(timeline.samples.size()) +
                     " samples, span " + std::to_string(timeline.span) + " cycles";
  if (profile.clock_hz > 0) {
    line += " (" + fixed3(replay::cycles_to_ms(timeline.span, profile.clock_hz)) + " ms at " +
            std::to_string(profile.clock_hz) + " Hz)";
  }
  line += shared_clock ? ", shared clock" : ", cropped by " + std::to_string(timeline.crop) + " cycles";
  return line;
}

}  // namespace lockstep::cli
