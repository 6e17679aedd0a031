// schedule_phase: candidate orders -> deduplication -> physical scheduling -> the shortest
// placement is encoded, and every row is decoded again and checked against its plan.
#include <spdlog/spdlog.h>
#include <tbb/parallel_for.h>

#include <algorithm>
#include <functional>
#include <string>
#include <unordered_map>

#include "compiler/encode_plan.hpp"
#include "compiler/encode_row.hpp"
#include "compiler/multicast_split.hpp"
#include "compiler/order.hpp"
#include "compiler/phase_schedule.hpp"
#include "compiler/physical_schedule.hpp"
#include "compiler/row_check.hpp"
#include "io/errors.hpp"

namespace lockstep::compiler {
namespace {

constexpr uint32_t kDefaultChunk = 1024;
constexpr int kRepairRounds = 4;
// Receiver groups the latency policy tries for wide multicast transfers: 4 and 3 gave the
// shortest horizons on the multicast family (bench_multicast_split; 8, 6 and 2 longer).
constexpr uint32_t kMulticastGroups[] = {4, 3};

uint64_t hash_order(const Order& order) {
  uint64_t h = 0xcbf29ce484222325ull;
  auto mix = [&](uint64_t v) {
    h ^= v;
    h *= 0x100000001b3ull;
  };
  for (const Message& m : order) {
    mix(m.transfer);
    mix(m.offset);
    mix(m.items);
  }
  return h;
}

// Keeps unique orders; counts what it saw and what it dropped.
class CandidateSet {
 public:
  explicit CandidateSet(bool deduplicate) : deduplicate_(deduplicate) {}
  bool add(Order order) {
    ++considered;
    if (order.empty() && !orders.empty()) {
      ++deduplicated;
      return false;
    }
    if (!deduplicate_) {
      orders.push_back(std::move(order));
      return true;
    }
    const uint64_t h = hash_order(order);
    auto [first, last] = seen_.equal_range(h);
    for (auto it = first; it != last; ++it) {
      if (orders[it->second] == order) {
        ++deduplicated;
        return false;
      }
    }
    seen_.emplace(h, orders.size());
    orders.push_back(std::move(order));
    return true;
  }
  std::vector<Order> orders;
  uint32_t considered = 0;
  uint32_t deduplicated = 0;

 private:
  bool deduplicate_;
  std::unordered_multimap<uint64_t, size_t> seen_;
};

struct Best {
  Order order;
  Placement placement;
  bool set = false;
};

void consider(const PhaseProblem& problem, const std::vector<Order>& orders, size_t from, Best& best) {
  std::vector<Placement> placements(orders.size() - from);
  tbb::parallel_for(size_t{0}, placements.size(),
                    [&](size_t i) { placements[i] = place_order(problem, orders[from + i]); });
  for (size_t i = 0; i < placements.size(); ++i) {
    if (!best.set || placements[i].horizon < best.placement.horizon) {
      best.order = orders[from + i];
      best.placement = std::move(placements[i]);
      best.set = true;
    }
  }
}

uint32_t max_tile_load(const PhaseProblem& problem) {
  uint64_t load = 0;
  for (uint32_t t = 0; t < problem.tiles; ++t) load = std::max({load, problem.send_load[t], problem.recv_load[t]});
  return static_cast<uint32_t>(std::min<uint64_t>(load, 0xffffffffu));
}

void base_candidates(const PhaseProblem& problem, const ScheduleConfig& config, CandidateSet& candidates) {
  switch (config.order) {
    case OrderKind::Stream:
      candidates.add(stream_order(problem, config.words));
      break;
    case OrderKind::Balanced:
      candidates.add(balanced_order(problem, config.words));
      break;
    case OrderKind::RemainingCombined:
      candidates.add(remaining_combined_order(problem, kDefaultChunk));
      break;
    case OrderKind::Automatic:
      candidates.add(phase_is_balanced(problem) ? balanced_order(problem, kDefaultChunk)
                                                : stream_order(problem, kDefaultChunk));
      break;
    case OrderKind::Latency: {
      const uint32_t wave = std::max<uint32_t>(64, max_tile_load(problem) / 16);
      candidates.add(stream_order(problem, 0));
      candidates.add(stream_order(problem, 256));
      candidates.add(remaining_combined_order(problem, 256));
      candidates.add(balanced_order(problem, wave));
      Order matching = matching_order(problem, 256);
      if (!matching.empty()) candidates.add(std::move(matching));
      break;
    }
  }
}

// Encodes and checks every row. Returns false (when allowed) if some row could not align a
// sendpicp; any other failure throws.
bool encode_rows(const PhaseProblem& problem, const Best& best, bool last_try, ScheduledPhase& result) {
  std::vector<TilePlan> plans = make_tile_plans(problem, best.order, best.placement);
  result.rows.assign(plans.size(), TileRow{});
  std::vector<char> misaligned(plans.size(), 0);
  tbb::parallel_for(size_t{0}, plans.size(), [&](size_t i) {
    try {
      result.rows[i] = encode_tile_row(problem, best.order, plans[i]);
    } catch (const AlignmentError&) {
      if (last_try) throw;
      misaligned[i] = 1;
      return;
    }
    check_row(problem, best.order, plans[i], result.rows[i]);
  });
  return std::find(misaligned.begin(), misaligned.end(), 1) == misaligned.end();
}

// Row sizes of a schedule, for StorageFirst.
struct RowBytes {
  uint32_t max = 0;
  uint64_t total = 0;
};
RowBytes row_bytes(const ScheduledPhase& scheduled) {
  RowBytes bytes;
  for (const TileRow& row : scheduled.rows) {
    const uint32_t b = static_cast<uint32_t>(row.words.size() * 4);
    bytes.max = std::max(bytes.max, b);
    bytes.total += b;
  }
  return bytes;
}

ScheduledPhase schedule_orders(const arch::CapturePhase& phase, const arch::MachineDescription& machine,
                               const arch::Topology& topology, const ScheduleConfig& config, Width width) {
  const PhaseProblem problem = make_problem(phase, machine, topology, width);
  ScheduledPhase result;
  result.phase = phase.id;
  // Paired64 only when some transfer went paired: otherwise the schedule is the Word32 one.
  result.width = problem.paired_transfers > 0 ? Width::Paired64 : Width::Word32;
  result.lower_bound = phase_lower_bound(phase, topology, result.width);
  if (problem.transfers.empty()) return result;

  CandidateSet candidates(config.deduplicate_orders);
  base_candidates(problem, config, candidates);
  Best best;
  consider(problem, candidates.orders, 0, best);
  if (config.order == OrderKind::Latency) {
    // Critical-path repair: move the messages of the tile that sets the horizon to the front.
    for (int round = 0; round < kRepairRounds; ++round) {
      if (best.placement.horizon <= static_cast<int32_t>(result.lower_bound)) break;
      const size_t from = candidates.orders.size();
      if (!candidates.add(promote_tile(problem, best.order, best.placement.critical_tile))) break;
      consider(problem, candidates.orders, from, best);
    }
  }
  result.orders_considered = candidates.considered;
  result.orders_deduplicated = candidates.deduplicated;

  if (!encode_rows(problem, best, false, result)) {
    // A row could not place a sendpicp at an even word index: place the same order again
    // with no PIC and XPIC control on one event, so no row needs a sendpicp.
    spdlog::debug("phase {}: sendpicp alignment failed; re-placing with single controls", phase.id);
    best.placement = place_order(problem, best.order, true);
    encode_rows(problem, best, true, result);
  }
  std::sort(result.rows.begin(), result.rows.end(), [](const TileRow& a, const TileRow& b) { return a.tile < b.tile; });
  for (const TileRow& row : result.rows) result.horizon = std::max(result.horizon, row.end_event);
  if (result.horizon != static_cast<uint32_t>(best.placement.horizon))
    throw CompilerError("encoding: phase " + std::to_string(phase.id) + ": rows end at " +
                        std::to_string(result.horizon) + ", placement horizon " +
                        std::to_string(best.placement.horizon));
  if (result.horizon < result.lower_bound)
    throw CompilerError("scheduling: phase " + std::to_string(phase.id) + ": horizon " +
                        std::to_string(result.horizon) + " below the lower bound " +
                        std::to_string(result.lower_bound));
  return result;
}

// The latency policy also schedules the phase with its wide multicast transfers cut into
// receiver groups (compiler/multicast_split.hpp) and keeps the shortest horizon, when the
// candidates above end more than 10% over the bound: groups multiply the transfers (a
// 100-tile gather becomes 25 to 34 sends), too costly for the few percent a closer phase
// could gain. The bound stays the phase's own: splitting only adds sends, so it bounds
// every split schedule too.
ScheduledPhase schedule_width(const arch::CapturePhase& phase, const arch::MachineDescription& machine,
                              const arch::Topology& topology, const ScheduleConfig& config, Width width) {
  ScheduledPhase best = schedule_orders(phase, machine, topology, config, width);
  const bool close = uint64_t(best.horizon) * 10 <= uint64_t(best.lower_bound) * 11;
  if (config.order != OrderKind::Latency || !config.split_multicast || close) return best;
  uint32_t considered = best.orders_considered, deduplicated = best.orders_deduplicated;
  for (const uint32_t group : kMulticastGroups) {
    const arch::CapturePhase split = split_multicast(phase, topology, group, width == Width::Paired64);
    if (split.transfers.size() == phase.transfers.size()) continue;
    ScheduledPhase candidate = schedule_orders(split, machine, topology, config, width);
    considered += candidate.orders_considered;
    deduplicated += candidate.orders_deduplicated;
    if (candidate.horizon < best.horizon) {
      candidate.lower_bound = best.lower_bound;
      best = std::move(candidate);
    }
  }
  best.orders_considered = considered;
  best.orders_deduplicated = deduplicated;
  return best;
}

}  // namespace

// See phase_schedule.hpp. True when the Paired64 schedule should replace the Word32 one (ties keep Word32).
bool prefer_paired(WidthPolicy policy, const ScheduledPhase& word, const ScheduledPhase& paired) {
  if (policy == WidthPolicy::LatencyOriented) return paired.horizon < word.horizon;
  const RowBytes w = row_bytes(word), p = row_bytes(paired);
  if (p.max != w.max) return p.max < w.max;
  if (p.total != w.total) return p.total < w.total;
  return paired.horizon < word.horizon;
}

ScheduledPhase schedule_phase(const arch::CapturePhase& phase, const arch::MachineDescription& machine,
                              const arch::Topology& topology, const ScheduleConfig& config) {
  if (config.width_policy == WidthPolicy::Fixed) return schedule_width(phase, machine, topology, config, config.width);
  ScheduledPhase word = schedule_width(phase, machine, topology, config, Width::Word32);
  const std::vector<bool> eligible = paired_eligible(phase, topology);
  if (std::find(eligible.begin(), eligible.end(), true) == eligible.end()) return word;
  ScheduledPhase paired = schedule_width(phase, machine, topology, config, Width::Paired64);
  paired.orders_considered += word.orders_considered;
  paired.orders_deduplicated += word.orders_deduplicated;
  word.orders_considered = paired.orders_considered;
  word.orders_deduplicated = paired.orders_deduplicated;
  return prefer_paired(config.width_policy, word, paired) ? std::move(paired) : std::move(word);
}

}  // namespace lockstep::compiler
