// `lockstep profile phases PROFILE`: the stack's profile-phases view (docs/profile-queries.md,
// "phases"): each tile's work charged to the next global exchange on that tile, with the
// exchange's summary.
#include <algorithm>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>

#include "cli/options.hpp"
#include "cli/profile_cli.hpp"
#include "cli/profile_command.hpp"
#include "cli/stage_progress.hpp"
#include "io/errors.hpp"

namespace lockstep::cli {
// File-local, named so that the CLI's unity batches (cli/CMakeLists.txt) keep files apart.
namespace profile_phases_command_local {}
using namespace profile_phases_command_local;
namespace profile_phases_command_local {

struct PhasesOptions {
  std::string profile;
  std::optional<uint32_t> epoch;
  std::optional<uint64_t> max_cycles;
  std::optional<double> max_occupancy;
  std::optional<uint64_t> at_offset;
  std::string sort_by = "start";
  bool shared_clock = false, json = false, csv = false;
};

std::string kernels_text(const replay::PhaseGroup& g, size_t count) {
  std::string text;
  for (size_t i = 0; i < g.kernels.size() && i < count; ++i) {
    text += (i ? " " : "") + g.kernels[i].kernel + "(" + std::to_string(g.kernels[i].cycles) + ")";
  }
  if (g.kernels.size() > count) text += " +" + std::to_string(g.kernels.size() - count);
  return text;
}

nlohmann::ordered_json roles_json(const replay::RoleCycles& r) {
  return {
      {"send", r.send}, {"receive", r.receive}, {"both", r.both}, {"partner_busy", r.partner_busy}, {"idle", r.idle}};
}

nlohmann::ordered_json group_json(const replay::PhaseGroup& g) {
  nlohmann::ordered_json j;
  if (g.exchange) {
    const auto& x = *g.exchange;
    j = {{"phase", x.key.phase}, {"epoch", x.key.epoch}, {"invocation", x.key.invocation}, {"label", x.label}};
  } else {
    j = {{"phase", nullptr}, {"epoch", nullptr}, {"invocation", nullptr}, {"label", "(after the last exchange)"}};
  }
  j["start"] = g.start;
  j["end"] = g.end;
  j["cycles"] = g.cycles();
  j["tiles"] = g.tiles;
  j["compute_cycles"] = g.compute_cycles;
  j["synchronization_cycles"] = g.synchronization_cycles;
  j["occupancy"] = g.occupancy;
  j["active_tiles"] = g.active_tiles;
  j["kernels"] = nlohmann::ordered_json::array();
  for (const auto& k : g.kernels)
    j["kernels"].push_back({{"kernel", k.kernel}, {"cycles", k.cycles}, {"samples", k.samples}});
  if (g.exchange) {
    const auto& x = *g.exchange;
    j["exchange"] = {{"tiles", x.tiles},
                     {"sync_only_tiles", x.sync_only_tiles},
                     {"event_cycles", x.event_cycles},
                     {"first_entry", x.min_start},
                     {"last_entry", x.max_start},
                     {"end", x.max_end},
                     {"measured", x.measured()},
                     {"arrival_wait", x.arrival_wait()},
                     {"boundary", x.boundary()},
                     {"roles", roles_json(x.roles)}};
  } else {
    j["exchange"] = nullptr;
  }
  return j;
}

// `full`: every column (CSV); `invocation`: the invocation column (always in CSV; in text
// only when the profile has later invocations).
std::vector<std::string> group_row(const replay::PhaseGroup& g, bool full, bool invocation) {
  const auto* x = g.exchange ? &*g.exchange : nullptr;
  const auto num = [](auto v) { return std::to_string(v); };
  std::vector<std::string> row = {x ? num(x->key.phase) : "-",
                                  x ? num(x->key.epoch) : "-",
                                  x ? x->label : "(after the last exchange)",
                                  num(g.start),
                                  num(g.cycles()),
                                  num(g.tiles),
                                  fixed3(g.occupancy),
                                  num(g.compute_cycles),
                                  kernels_text(g, full ? g.kernels.size() : 2),
                                  x ? num(x->measured()) : "-",
                                  x ? num(x->arrival_wait()) : "-",
                                  x ? num(x->boundary()) : "-",
                                  x ? num(x->sync_only_tiles) : "-"};
  if (invocation) row.insert(row.begin() + 2, x ? num(x->key.invocation) : "-");
  if (full) {
    const std::vector<std::string> more = {
        fixed3(g.active_tiles),         num(g.synchronization_cycles),        x ? num(x->tiles) : "-",
        x ? num(x->event_cycles) : "-", x ? num(x->roles.send) : "-",         x ? num(x->roles.receive) : "-",
        x ? num(x->roles.both) : "-",   x ? num(x->roles.partner_busy) : "-", x ? num(x->roles.idle) : "-"};
    row.insert(row.end(), more.begin(), more.end());
  }
  return row;
}

int run_phases(const PhasesOptions& o) {
  const replay::PhaseSort sort = replay::parse_phase_sort(o.sort_by);
  if (o.max_occupancy && !(*o.max_occupancy >= 0)) {
    throw InputError("--max-occupancy: must be a number 0 or above (a share of the tiles' time, 0..1)");
  }
  StageProgress progress("profile phases");
  progress.stage("reading " + o.profile);
  const LoadedProfile loaded = load_profile(o.profile, o.shared_clock);
  if (o.at_offset) replay::check_offset_in_span(loaded.timeline, *o.at_offset, "--at-offset");
  replay::PhaseFilter filter{o.epoch, o.max_cycles, o.max_occupancy, o.at_offset};
  std::vector<replay::PhaseGroup> groups;
  progress.stage("grouping by the next exchange");
  for (auto& g : replay::phase_groups(loaded.profile, loaded.timeline)) {
    if (replay::phase_matches(g, filter)) groups.push_back(std::move(g));
  }
  progress.finish();
  replay::sort_phase_groups(groups, sort);
  if (o.json) {
    nlohmann::ordered_json j = {{"profile", o.profile},
                                {"span_cycles", loaded.timeline.span},
                                {"milliseconds", replay::cycles_to_ms(loaded.timeline.span, loaded.profile.clock_hz)},
                                {"crop_cycles", loaded.timeline.crop},
                                {"shared_clock", o.shared_clock},
                                {"sort_by", o.sort_by},
                                {"phases", nlohmann::ordered_json::array()}};
    for (const auto& g : groups) j["phases"].push_back(group_json(g));
    print_json(j);
    return kExitOk;
  }
  TextTable table;
  table.headers = {"phase",   "epoch",   "label",    "start", "cycles",   "tiles",    "occupancy",
                   "compute", "kernels", "measured", "wait",  "boundary", "sync_only"};
  const bool invocations = o.csv || std::any_of(groups.begin(), groups.end(), [](const replay::PhaseGroup& g) {
                             return g.exchange && g.exchange->key.invocation > 0;
                           });
  if (invocations) table.headers.insert(table.headers.begin() + 2, "invocation");
  if (o.csv) {
    for (const char* h : {"active_tiles", "synchronization", "exchange_tiles", "event_cycles", "send", "receive",
                          "both", "partner_busy", "idle"}) {
      table.headers.push_back(h);
    }
  }
  for (const auto& g : groups) table.rows.push_back(group_row(g, o.csv, invocations));
  if (o.csv) {
    table.print_csv(std::cout);
    return kExitOk;
  }
  std::cout << timeline_line(o.profile, loaded.profile, loaded.timeline, o.shared_clock) << "\n";
  table.print_text(std::cout);
  if (groups.empty()) std::cout << "(no phases match)\n";
  return kExitOk;
}

std::string sort_help() {
  return "order: start (the default, earliest first), cycles (longest first), occupancy (lowest\n"
         "first), compute (most first), exchange (measured, longest first), wait (arrival wait,\n"
         "longest first), boundary (largest first) or phase (epoch, then phase id)";
}

const ProfileSubcommandRegistration registration{
    "phases", [](CLI::App& parent) -> std::function<int()> {
      auto* cmd = parent.add_subcommand(
          "phases",
          "One row per global exchange (epoch, phase), as the IPU21 stack's profile-phases: each\n"
          "tile's compute and synchronization samples belong to the next exchange on that tile\n"
          "(tiles that only synchronize with it included). Per phase: start and cycles (first\n"
          "start to last end), tiles, occupancy (compute cycles / (cycles x tiles), 0..1),\n"
          "compute cycles and the kernels that spent them, and the exchange: measured (last end\n"
          "- last entry), wait (last entry - first entry), boundary (measured - scheduled event\n"
          "cycles), tiles that only synchronized. --csv adds the send/receive/both/partner-busy/\n"
          "idle role cycles. docs/profile-queries.md.\n"
          "Example: lockstep profile phases run.lsprof --max-cycles 5000 --max-occupancy 0.1 "
          "--sort-by occupancy");
      auto o = std::make_shared<PhasesOptions>();
      add_profile_argument(*cmd, o->profile);
      add_epoch_and_offset_filters(*cmd, o->epoch, o->at_offset, "phases");
      cmd->add_option("--max-cycles", o->max_cycles, "only phases of at most this many cycles")
          ->check(unsigned_in(0, UINT64_MAX));
      cmd->add_option("--max-occupancy", o->max_occupancy, "only phases whose occupancy is at most this (0..1)");
      cmd->add_option("--sort-by", o->sort_by, sort_help());
      add_shared_clock_flag(*cmd, o->shared_clock);
      add_json_and_csv_flags(*cmd, o->json, o->csv, "print one JSON object (every field, role cycles included)",
                             "print the table as CSV, with every column");
      add_common_options(*cmd);
      return [o]() { return run_phases(*o); };
    }};

}  // namespace profile_phases_command_local
}  // namespace lockstep::cli
