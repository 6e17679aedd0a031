// `lockstep profile summary PROFILE`: where a profile's cycles went, by kind, operation and
// kernel, and its busiest and idlest tiles (docs/profile-queries.md, "summary").
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>

#include "cli/options.hpp"
#include "cli/profile_cli.hpp"
#include "cli/profile_command.hpp"
#include "cli/stage_progress.hpp"

namespace lockstep::cli {
// File-local, named so that the CLI's unity batches (cli/CMakeLists.txt) keep files apart.
namespace profile_summary_command_local {}
using namespace profile_summary_command_local;
namespace profile_summary_command_local {

struct SummaryOptions {
  std::string profile;
  size_t top = 10;
  bool shared_clock = false, json = false;
};

uint64_t total_work(const std::vector<replay::GroupStats>& groups) {
  uint64_t total = 0;
  for (const auto& g : groups) total += g.work_cycles;
  return total;
}

void print_groups(const std::string& title, const std::string& key, const std::vector<replay::GroupStats>& groups,
                  size_t top) {
  const double total = static_cast<double>(total_work(groups));
  TextTable table;
  table.headers = {key, "samples", "tiles", "work_cycles", "share", "phase_cycles", "occupancy", "p50", "p95", "max"};
  for (size_t i = 0; i < groups.size() && i < top; ++i) {
    const auto& g = groups[i];
    table.rows.push_back({g.name, std::to_string(g.samples), std::to_string(g.tiles), std::to_string(g.work_cycles),
                          fixed3(total > 0 ? static_cast<double>(g.work_cycles) / total : 0.0),
                          std::to_string(g.phase_cycles), fixed3(g.occupancy), std::to_string(g.p50),
                          std::to_string(g.p95), std::to_string(g.max)});
  }
  std::cout << "\n" << title << "\n";
  table.print_text(std::cout);
  if (groups.size() > top) std::cout << "(" << groups.size() - top << " more; --top N or --json for all)\n";
}

void print_tiles(const std::string& title, const std::vector<replay::TileTotals>& tiles, uint64_t span) {
  TextTable table;
  table.headers = {"tile", "compute", "exchange", "synchronization", "idle", "compute_share"};
  for (const auto& t : tiles) {
    table.rows.push_back({std::to_string(t.physical_tile), std::to_string(t.compute), std::to_string(t.exchange),
                          std::to_string(t.synchronization), std::to_string(t.idle),
                          fixed3(span > 0 ? static_cast<double>(t.compute) / static_cast<double>(span) : 0.0)});
  }
  std::cout << "\n" << title << "\n";
  table.print_text(std::cout);
}

nlohmann::ordered_json groups_json(const std::vector<replay::GroupStats>& groups) {
  auto j = nlohmann::ordered_json::array();
  for (const auto& g : groups) {
    j.push_back({{"name", g.name},
                 {"samples", g.samples},
                 {"tiles", g.tiles},
                 {"work_cycles", g.work_cycles},
                 {"phase_cycles", g.phase_cycles},
                 {"occupancy", g.occupancy},
                 {"mean", g.mean},
                 {"p50", g.p50},
                 {"p95", g.p95},
                 {"max", g.max},
                 {"first_offset", g.first_offset},
                 {"last_offset", g.last_offset}});
  }
  return j;
}

nlohmann::ordered_json tiles_json(const std::vector<replay::TileTotals>& tiles) {
  auto j = nlohmann::ordered_json::array();
  for (const auto& t : tiles) {
    j.push_back({{"tile", t.physical_tile},
                 {"compute", t.compute},
                 {"exchange", t.exchange},
                 {"synchronization", t.synchronization},
                 {"idle", t.idle}});
  }
  return j;
}

int run_summary(const SummaryOptions& o) {
  StageProgress progress("profile summary");
  progress.stage("reading " + o.profile);
  const LoadedProfile loaded = load_profile(o.profile, o.shared_clock);
  const auto& p = loaded.profile;
  progress.stage("totals");
  const replay::ProfileSummary s = replay::summarize_profile(p, loaded.timeline, o.json ? SIZE_MAX : o.top);
  progress.finish();
  if (o.json) {
    // Every tile, busiest first: the idlest are the same list from the end.
    print_json({{"profile", o.profile},
                {"source", p.source},
                {"machine", p.machine_name},
                {"producer", p.producer},
                {"clock_hz", p.clock_hz},
                {"tiles", s.tiles},
                {"samples", s.samples},
                {"exchanges", s.exchanges},
                {"span_cycles", s.span},
                {"milliseconds", replay::cycles_to_ms(s.span, p.clock_hz)},
                {"crop_cycles", loaded.timeline.crop},
                {"shared_clock", o.shared_clock},
                {"by_kind", groups_json(s.by_kind)},
                {"by_operation", groups_json(s.by_operation)},
                {"by_kernel", groups_json(s.by_kernel)},
                {"tiles_by_compute", tiles_json(s.busiest)}});
    return kExitOk;
  }
  std::cout << timeline_line(o.profile, p, loaded.timeline, o.shared_clock) << "\n";
  if (!p.source.empty()) std::cout << "source " << p.source << "\n";
  if (!p.machine_name.empty()) std::cout << "machine " << p.machine_name << "\n";
  std::cout << "exchanges " << s.exchanges << "\n";
  print_groups("by kind", "kind", s.by_kind, o.top);
  print_groups("by operation", "operation", s.by_operation, o.top);
  print_groups("by kernel", "kernel", s.by_kernel, o.top);
  print_tiles("busiest tiles (most compute cycles)", s.busiest, s.span);
  print_tiles("idlest tiles (fewest compute cycles)", s.idlest, s.span);
  return kExitOk;
}

const ProfileSubcommandRegistration registration{
    "summary", [](CLI::App& parent) -> std::function<int()> {
      auto* cmd = parent.add_subcommand(
          "summary",
          "Where a profile's cycles went: span (cycles and ms), then totals by kind, by operation\n"
          "and by kernel (samples, tiles, work cycles and their share, union cycles, occupancy,\n"
          "p50/p95/max sample), and the busiest and idlest tiles by compute cycles. Offsets count\n"
          "from the latest tile's first sample unless --shared-clock. docs/profile-queries.md.\n"
          "Example: lockstep profile summary run.lsprof --top 5");
      auto o = std::make_shared<SummaryOptions>();
      add_profile_argument(*cmd, o->profile);
      cmd->add_option("--top", o->top, "rows per table and tiles per list (default 10)")
          ->check(unsigned_in(1, 1000000));
      add_shared_clock_flag(*cmd, o->shared_clock);
      cmd->add_flag("--json", o->json, "print one JSON object with every group and every tile");
      add_common_options(*cmd);
      return [o]() { return run_summary(*o); };
    }};

}  // namespace profile_summary_command_local
}  // namespace lockstep::cli
