#pragma once
// What the `profile` query subcommands (summary, phases, query, render) share: reading the
// profile onto its timeline, parsing tile and phase lists and step kinds, and printing one
// table as aligned text or CSV.
#include <CLI/CLI.hpp>
#include <cstdint>
#include <iosfwd>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "profile/profile.hpp"
#include "profile/profile_analysis.hpp"

namespace lockstep::cli {

struct LoadedProfile {
  arch::Profile profile;
  replay::ProfileTimeline timeline;
};
// read_profile, then the samples placed on the timeline (cropped unless `shared_clock`).
LoadedProfile load_profile(const std::string& path, bool shared_clock);

// "0,3,8-15" (decimal, or 0x-hex for the exchange phase ids): the set, or InputError
// "OPTION: ..." naming the bad item.
std::set<uint32_t> parse_id_list(const std::string& text, const std::string& option);

// "exchange", "compute", "synchronization" (or "sync"), "idle"; InputError otherwise.
arch::ProfileStepKind parse_step_kind(const std::string& text, const std::string& option);

// --shared-clock: the option every query subcommand has, with one help text.
CLI::Option* add_shared_clock_flag(CLI::App& command, bool& shared_clock);
// PROFILE: the required file every query subcommand reads.
CLI::Option* add_profile_argument(CLI::App& command, std::string& profile);
// --epoch and --at-offset: the filters of `phases` and `query`, whose help names what they keep
// ("phases", "samples").
void add_epoch_and_offset_filters(CLI::App& command, std::optional<uint32_t>& epoch, std::optional<uint64_t>& at_offset,
                                  const std::string& what);
// --json and --csv, which exclude each other.
void add_json_and_csv_flags(CLI::App& command, bool& json, bool& csv, const std::string& json_help,
                            const std::string& csv_help);

// A table printed as aligned text (numbers right-aligned) or as RFC 4180 CSV.
struct TextTable {
  std::vector<std::string> headers;
  std::vector<std::vector<std::string>> rows;
  void print_text(std::ostream& out) const;
  void print_csv(std::ostream& out) const;
};

// Fixed-point text without trailing noise: 3 decimals ("0.125", "12.000").
std::string fixed3(double value);

// "F: N tiles, M samples, span S cycles (X ms at H Hz), cropped by C" (or "shared clock").
std::string timeline_line(const std::string& file, const arch::Profile& profile,
                          const replay::ProfileTimeline& timeline, bool shared_clock);

}  // namespace lockstep::cli
