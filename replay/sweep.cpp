#include "replay/sweep.hpp"

#include <algorithm>
#include <cmath>
#include <set>
#include <stdexcept>

#include "compiler/compile.hpp"
#include "io/errors.hpp"
#include "model/sram.hpp"
#include "replay/parallel.hpp"
#include "replay/point_codec.hpp"
#include "replay/progress.hpp"

namespace lockstep::replay {
namespace {

// The points to run (plan indices, in plan order) as tasks: a word32 point and its paired
// twin (the next plan entry: same phase and configuration) go together, so the twin can take
// the point's result when its phase has no pair-eligible transfer (run_points).
std::vector<std::vector<size_t>> twin_groups(const std::vector<PointSpec>& plan, const std::vector<size_t>& todo) {
  std::vector<std::vector<size_t>> groups;
  for (size_t i : todo) {
    if (!groups.empty() && groups.back().size() == 1) {
      const auto& first = plan[groups.back().front()];
      if (!first.paired && plan[i].paired && first.phase == plan[i].phase && first.config == plan[i].config) {
        groups.back().push_back(i);
        continue;
      }
    }
    groups.push_back({i});
  }
  return groups;
}

// A group's encoded results, each after its length (8 bytes, little-endian).
std::string encode_group(const std::vector<std::string>& results) {
  std::string out;
  for (const auto& r : results) {
    uint64_t n = r.size();
    for (int b = 0; b < 8; ++b) out.push_back(static_cast<char>((n >> (8 * b)) & 0xff));
    out += r;
  }
  return out;
}

std::vector<std::string> decode_group(const std::string& bytes, size_t expected) {
  std::vector<std::string> results;
  size_t at = 0;
  while (at < bytes.size()) {
    if (bytes.size() - at < 8) throw std::runtime_error("sweep: truncated point group");
    uint64_t n = 0;
    for (int b = 0; b < 8; ++b) n |= uint64_t(static_cast<uint8_t>(bytes[at + b])) << (8 * b);
    at += 8;
    if (bytes.size() - at < n) throw std::runtime_error("sweep: truncated point group");
    results.push_back(bytes.substr(at, n));
    at += n;
  }
  if (results.size() != expected) throw std::runtime_error("sweep: a point group came back incomplete");
  return results;
}

}  // namespace

std::vector<PointSpec> plan_sweep(const arch::Capture& capture, const SweepDefinition& definition,
                                  const SweepOptions& options) {
  std::set<uint32_t> phases;
  if (options.phases) {
    for (uint32_t id : *options.phases) phases.insert(find_phase(capture, id).id);
  } else {
    for (const auto& p : capture.phases) phases.insert(p.id);
  }
  for (const auto& config : definition.configurations) {
    compiler::parse_config(config);  // fail before any work starts
    if (options.paired) compiler::parse_config(config + "+paired");
  }
  std::vector<PointSpec> plan;
  for (uint32_t phase : phases) {
    for (const auto& config : definition.configurations) {
      plan.push_back({phase, config, false});
      if (options.paired) plan.push_back({phase, config, true});
    }
  }
  return plan;
}

PointResult crashed_point(const arch::Capture& capture, const PointSpec& spec, const std::string& how) {
  const auto& phase = find_phase(capture, spec.phase);
  PointResult r;
  r.spec = spec;
  r.label = phase.label;
  r.execution_count = phase.execution_count;
  r.iterations = phase.iterations;
  r.error = "worker process " + how + " while compiling or simulating this point";
  r.error_exit_code = 3;
  return r;
}

size_t default_jobs(const MpiSession& mpi) {
  return std::max<size_t>(1, available_cores() / static_cast<size_t>(mpi.local_size()));
}

std::vector<PointResult> run_sweep(const arch::Capture& capture, const arch::MachineDescription& machine,
                                   const std::vector<PointSpec>& plan, const SweepOptions& options,
                                   const MpiSession& mpi, const SweepResume& resume) {
  std::vector<size_t> todo;
  for (size_t i = 0; i < plan.size(); ++i) {
    if (!resume.finished.count(i)) todo.push_back(i);
  }
  const auto groups = twin_groups(plan, todo);
  std::vector<std::vector<size_t>> mine;  // this rank's groups of plan indices
  std::vector<size_t> my_points;          // and their points, in plan order
  for (size_t k : rank_share(groups.size(), mpi.rank(), mpi.size())) {
    mine.push_back(groups[k]);
    my_points.insert(my_points.end(), groups[k].begin(), groups[k].end());
  }
  std::sort(my_points.begin(), my_points.end());
  const size_t jobs = options.jobs > 0 ? options.jobs : default_jobs(mpi);
  // Rank 0 shows its own share; the ranks advance at about the same pace.
  Progress progress(my_points.size(), "points", options.progress && mpi.root());

  std::vector<std::pair<size_t, std::string>> local;
  int status = 0;
  std::string message;
  try {
    const model::KeptSramMappings keep_sram;  // each worker's next point takes its last SRAM mapping
    auto encoded = run_in_processes(
        mine.size(), jobs,
        [&](size_t g) {
          std::vector<PointSpec> specs;
          for (size_t i : mine[g]) specs.push_back(plan[i]);
          std::vector<std::string> results;
          for (const auto& r : run_points(capture, machine, specs, options.point)) {
            results.push_back(encode_point_result(r));
          }
          return encode_group(results);
        },
        [&](size_t g, const std::string& bytes) {
          const auto results = decode_group(bytes, mine[g].size());
          for (size_t k = 0; k < results.size(); ++k) {
            if (mpi.root() && resume.on_point) resume.on_point(mine[g][k], results[k]);
            progress.advance();
          }
        },
        [&](size_t g, const std::string& how) {
          std::vector<std::string> results;
          for (size_t i : mine[g]) results.push_back(encode_point_result(crashed_point(capture, plan[i], how)));
          return encode_group(results);
        });
    for (size_t g = 0; g < mine.size(); ++g) {
      auto results = decode_group(encoded[g], mine[g].size());
      for (size_t k = 0; k < results.size(); ++k) local.emplace_back(mine[g][k], std::move(results[k]));
    }
  } catch (const InputError& e) {
    status = 2;
    message = e.what();
  } catch (const std::exception& e) {
    status = 3;
    message = e.what();
  }
  progress.finish();

  // Every rank reaches the gather, failed or not, so none waits forever.
  auto gathered = mpi.gather(local, status, message);
  const int worst = mpi.broadcast(gathered.worst_status);
  if (worst == 2) throw InputError(mpi.root() ? gathered.message : "input error on another rank");
  if (worst != 0) {
    throw std::runtime_error(mpi.root() ? gathered.message : "failure on another rank");
  }
  if (!mpi.root()) return {};
  std::vector<PointResult> results(plan.size());
  std::vector<bool> seen(plan.size(), false);
  for (const auto& [index, bytes] : resume.finished) {
    if (index >= plan.size()) throw std::runtime_error("sweep: bad point index");
    seen[index] = true;
    results[index] = decode_point_result(bytes);
  }
  const bool mine_journalled = static_cast<bool>(resume.on_point);
  for (auto& [index, bytes] : gathered.items) {
    if (index >= plan.size() || seen[index]) throw std::runtime_error("sweep: bad point index");
    seen[index] = true;
    results[index] = decode_point_result(bytes);
    // Rank 0 journalled its own points as they finished; the other ranks' arrive here.
    if (mine_journalled && !std::binary_search(my_points.begin(), my_points.end(), index)) {
      resume.on_point(index, bytes);
    }
  }
  if (std::find(seen.begin(), seen.end(), false) != seen.end()) {
    throw std::runtime_error("sweep: a point was never run");
  }
  return results;
}

ResultRow to_result_row(const PointResult& point, bool timings) {
  ResultRow row;
  row.phase = point.spec.phase;
  row.label = point.label;
  row.execution_count = point.execution_count;
  row.config = point.spec.config;
  row.width = point.spec.paired ? compiler::Width::Paired64 : compiler::Width::Word32;
  row.horizon = point.horizon;
  row.lower_bound = point.lower_bound;
  row.max_row_bytes = point.max_row_bytes;
  row.total_row_bytes = point.total_row_bytes;
  row.table_bytes_shared = point.table_bytes_shared;
  row.table_bytes_unshared = point.table_bytes_unshared;
  row.patch_calls = point.patch_calls;
  row.patch_words = point.patch_words;
  row.compile_ms = timings ? point.compile_ms : 0.0;
  row.simulate_ms = timings ? point.simulate_ms : 0.0;
  row.payload_pass = point.payload_ok();
  return row;
}

}  // namespace lockstep::replay
