// `lockstep profile query PROFILE --group-by KEY [filters]`: the stack's grouped sample
// statistics (docs/profile-queries.md, "query").
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
namespace profile_query_command_local {}
using namespace profile_query_command_local;
namespace profile_query_command_local {

struct QueryOptions {
  std::string profile;
  std::string group_by = "kernel";
  std::string kind, kernel, operation, tiles, phases, meta;
  std::optional<uint32_t> epoch;
  std::optional<uint64_t> at_offset;
  size_t longest = 0;
  bool shared_clock = false, json = false, csv = false;
};

replay::SampleFilter build_filter(const QueryOptions& o) {
  replay::SampleFilter filter;
  if (!o.kind.empty()) filter.kind = parse_step_kind(o.kind, "--kind");
  if (!o.kernel.empty()) filter.kernel = o.kernel;
  if (!o.operation.empty()) filter.operation = o.operation;
  if (!o.tiles.empty()) filter.tiles = parse_id_list(o.tiles, "--tiles");
  if (!o.phases.empty()) filter.phases = parse_id_list(o.phases, "--phases");
  if (!o.meta.empty()) {
    const size_t equals = o.meta.find('=');
    filter.metadata_name = o.meta.substr(0, equals);
    if (equals != std::string::npos) filter.metadata_value = o.meta.substr(equals + 1);
    if (filter.metadata_name->empty())
      throw InputError("--meta: '" + o.meta + "' names no metadata (NAME or NAME=VALUE)");
  }
  filter.epoch = o.epoch;
  filter.at_offset = o.at_offset;
  return filter;
}

std::vector<std::string> stats_row(const replay::GroupStats& g) {
  return {g.name,
          std::to_string(g.samples),
          std::to_string(g.tiles),
          std::to_string(g.phases),
          std::to_string(g.phase_cycles),
          std::to_string(g.work_cycles),
          fixed3(g.occupancy),
          fixed3(g.mean),
          std::to_string(g.p50),
          std::to_string(g.p95),
          std::to_string(g.max),
          std::to_string(g.first_offset),
          std::to_string(g.last_offset)};
}

nlohmann::ordered_json sample_json(const arch::Profile& profile, const replay::PlacedSample& placed) {
  const auto& sample = profile.tiles[placed.tile].samples[placed.sample];
  const auto& step = profile.steps[sample.step];
  nlohmann::ordered_json j = {{"tile", profile.tiles[placed.tile].physical_tile},
                              {"offset", placed.offset},
                              {"cycles", placed.duration},
                              {"kind", arch::profile_step_kind_name(step.kind)},
                              {"kernel", step.kernel},
                              {"operation", step.operation},
                              {"phase", step.phase},
                              {"epoch", sample.epoch},
                              {"invocation", sample.invocation}};
  return j;
}

int run_query(const QueryOptions& o) {
  const replay::GroupBy group_by = replay::parse_group_by(o.group_by);
  const replay::SampleFilter filter = build_filter(o);
  StageProgress progress("profile query");
  progress.stage("reading " + o.profile);
  const LoadedProfile loaded = load_profile(o.profile, o.shared_clock);
  if (o.at_offset) replay::check_offset_in_span(loaded.timeline, *o.at_offset, "--at-offset");
  progress.stage("grouping");
  const auto groups = replay::query_groups(loaded.profile, loaded.timeline, filter, group_by);
  const auto longest = replay::longest_samples(loaded.profile, loaded.timeline, filter, o.longest);
  progress.finish();
  if (o.json) {
    nlohmann::ordered_json j = {{"profile", o.profile},
                                {"span_cycles", loaded.timeline.span},
                                {"milliseconds", replay::cycles_to_ms(loaded.timeline.span, loaded.profile.clock_hz)},
                                {"crop_cycles", loaded.timeline.crop},
                                {"shared_clock", o.shared_clock},
                                {"group_by", replay::group_by_name(group_by)},
                                {"groups", nlohmann::ordered_json::array()}};
    for (const auto& g : groups) {
      j["groups"].push_back({{"name", g.name},
                             {"samples", g.samples},
                             {"tiles", g.tiles},
                             {"phases", g.phases},
                             {"phase_cycles", g.phase_cycles},
                             {"work_cycles", g.work_cycles},
                             {"occupancy", g.occupancy},
                             {"mean", g.mean},
                             {"p50", g.p50},
                             {"p95", g.p95},
                             {"max", g.max},
                             {"first_offset", g.first_offset},
                             {"last_offset", g.last_offset},
                             {"end_offset", g.end_offset}});
    }
    if (o.longest > 0) {
      j["longest"] = nlohmann::ordered_json::array();
      for (const auto& s : longest) j["longest"].push_back(sample_json(loaded.profile, s));
    }
    print_json(j);
    return kExitOk;
  }
  TextTable table;
  table.headers = {replay::group_by_name(group_by),
                   "samples",
                   "tiles",
                   "phases",
                   "phase_cycles",
                   "work_cycles",
                   "occupancy",
                   "mean",
                   "p50",
                   "p95",
                   "max",
                   "first_offset",
                   "last_offset"};
  for (const auto& g : groups) table.rows.push_back(stats_row(g));
  if (o.csv) {
    table.print_csv(std::cout);
    return kExitOk;
  }
  std::cout << timeline_line(o.profile, loaded.profile, loaded.timeline, o.shared_clock) << "\n";
  table.print_text(std::cout);
  if (groups.empty()) std::cout << "(no samples match)\n";
  if (!longest.empty()) {
    TextTable samples;
    samples.headers = {"tile", "offset", "cycles", "kind", "kernel", "operation", "phase", "epoch"};
    for (const auto& s : longest) {
      const auto j = sample_json(loaded.profile, s);
      samples.rows.push_back({std::to_string(j["tile"].get<uint32_t>()), std::to_string(s.offset),
                              std::to_string(s.duration), j["kind"], j["kernel"], j["operation"],
                              std::to_string(j["phase"].get<uint32_t>()), std::to_string(j["epoch"].get<uint32_t>())});
    }
    std::cout << "\nlongest samples\n";
    samples.print_text(std::cout);
  }
  return kExitOk;
}

const ProfileSubcommandRegistration registration{
    "query", [](CLI::App& parent) -> std::function<int()> {
      auto* cmd = parent.add_subcommand(
          "query",
          "Group a profile's samples and print per-group statistics, as the IPU21 stack's query\n"
          "tool does: samples, distinct tiles, distinct (phase, epoch), phase_cycles (length of\n"
          "the union of the samples' intervals), work_cycles (sum of durations), occupancy\n"
          "(work / phase cycles: tiles busy on average), mean, p50 and p95 (sorted[(n-1)*p/100]),\n"
          "max, first and last start offset. Sorted by phase_cycles, longest first. Offsets count\n"
          "from the latest tile's first sample unless --shared-clock. Filters combine (AND); a\n"
          "filter that matches nothing prints an empty table. docs/profile-queries.md.\n"
          "Example: lockstep profile query run.lsprof --group-by kernel --kind compute --tiles "
          "0-63");
      auto o = std::make_shared<QueryOptions>();
      add_profile_argument(*cmd, o->profile);
      cmd->add_option("--group-by", o->group_by, "kind, kernel (the default), operation, phase, tile or meta:NAME");
      cmd->add_option("--kind", o->kind, "only samples of this kind: exchange, compute, synchronization, idle");
      cmd->add_option("--kernel", o->kernel, "only samples of this kernel (exact name)");
      cmd->add_option("--operation", o->operation, "only samples whose operation contains this text");
      cmd->add_option("--tiles", o->tiles, "only these physical tiles: a list such as 0,3,8-15");
      cmd->add_option("--phases", o->phases,
                      "only steps with these phase values (exchange steps: 0x80000000 | id, e.g. 0x80000003)");
      cmd->add_option("--meta", o->meta, "only steps with metadata NAME (or NAME=VALUE)");
      add_epoch_and_offset_filters(*cmd, o->epoch, o->at_offset, "samples");
      cmd->add_option("--longest", o->longest, "also list the N longest matching samples")
          ->check(unsigned_in(0, 1000000));
      add_shared_clock_flag(*cmd, o->shared_clock);
      add_json_and_csv_flags(*cmd, o->json, o->csv, "print one JSON object", "print the table as CSV");
      add_common_options(*cmd);
      return [o]() { return run_query(*o); };
    }};

}  // namespace profile_query_command_local
}  // namespace lockstep::cli
