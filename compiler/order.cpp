// The order generators of docs/scheduling.md.
#include "compiler/order.hpp"

#include <algorithm>
#include <functional>
#include <numeric>
#include <queue>

namespace lockstep::compiler {
namespace {

constexpr uint32_t kUncut = 0xffffffffu;

uint32_t effective(uint32_t chunk_words) { return chunk_words == 0 ? kUncut : chunk_words; }

uint64_t tile_load(const PhaseProblem& problem, uint32_t tile) {
  return std::max(problem.send_load[tile], problem.recv_load[tile]);
}

// The heavier endpoint of a transfer, by send or receive load.
uint64_t endpoint_load(const PhaseProblem& problem, const TransferInfo& transfer) {
  uint64_t load = problem.send_load[transfer.source];
  for (const ReceiverInfo& r : transfer.receivers) load = std::max(load, problem.recv_load[r.tile]);
  return load;
}

void append_chunks(Order& order, uint32_t transfer, uint32_t items, uint32_t chunk) {
  for (uint32_t offset = 0; offset < items; offset += std::min(chunk, items - offset))
    order.push_back({transfer, offset, std::min(chunk, items - offset)});
}

}  // namespace

Order stream_order(const PhaseProblem& problem, uint32_t chunk_words) {
  const uint32_t chunk = effective(chunk_words);
  std::vector<uint32_t> transfers(problem.transfers.size());
  std::iota(transfers.begin(), transfers.end(), 0u);
  std::vector<uint64_t> key(problem.transfers.size());
  for (uint32_t i = 0; i < key.size(); ++i) key[i] = endpoint_load(problem, problem.transfers[i]);
  std::stable_sort(transfers.begin(), transfers.end(), [&](uint32_t a, uint32_t b) { return key[a] > key[b]; });
  Order order;
  for (uint32_t i : transfers) append_chunks(order, i, problem.transfers[i].items, chunk);
  return order;
}

Order balanced_order(const PhaseProblem& problem, uint32_t wave_words) {
  const uint32_t cap = effective(wave_words);
  Order chunks = stream_order(problem, cap);
  // Per tile: load per wave, and the first wave that may still have room (first-fit hint).
  std::vector<std::vector<uint32_t>> sent(problem.tiles), received(problem.tiles);
  std::vector<uint32_t> send_hint(problem.tiles, 0), recv_hint(problem.tiles, 0);
  auto room = [&](std::vector<uint32_t>& loads, uint32_t wave, uint32_t words) {
    return wave >= loads.size() || uint64_t{loads[wave]} + words <= cap;
  };
  auto add = [](std::vector<uint32_t>& loads, uint32_t wave, uint32_t words) {
    if (loads.size() <= wave) loads.resize(wave + 1, 0);
    loads[wave] += words;
  };
  std::vector<std::vector<Message>> waves;
  for (const Message& m : chunks) {
    const TransferInfo& transfer = problem.transfers[m.transfer];
    uint32_t wave = send_hint[transfer.source];
    for (const ReceiverInfo& r : transfer.receivers) wave = std::max(wave, recv_hint[r.tile]);
    for (;; ++wave) {
      bool fits = room(sent[transfer.source], wave, m.items);
      for (size_t k = 0; fits && k < transfer.receivers.size(); ++k)
        fits = room(received[transfer.receivers[k].tile], wave, m.items);
      if (fits) break;
    }
    add(sent[transfer.source], wave, m.items);
    for (const ReceiverInfo& r : transfer.receivers) add(received[r.tile], wave, m.items);
    // A wave a tile has filled is never fitted again; advance its hint past full waves.
    auto advance = [&](std::vector<uint32_t>& loads, uint32_t& hint) {
      while (hint < loads.size() && loads[hint] >= cap) ++hint;
    };
    advance(sent[transfer.source], send_hint[transfer.source]);
    for (const ReceiverInfo& r : transfer.receivers) advance(received[r.tile], recv_hint[r.tile]);
    if (waves.size() <= wave) waves.resize(wave + 1);
    waves[wave].push_back(m);
  }
  Order order;
  order.reserve(chunks.size());
  for (const auto& wave : waves) order.insert(order.end(), wave.begin(), wave.end());
  return order;
}

Order remaining_combined_order(const PhaseProblem& problem, uint32_t chunk_words) {
  const uint32_t chunk = effective(chunk_words);
  std::vector<uint64_t> remaining(problem.tiles);
  for (uint32_t t = 0; t < problem.tiles; ++t) remaining[t] = problem.send_load[t] + problem.recv_load[t];
  std::vector<uint32_t> next_offset(problem.transfers.size(), 0);
  auto priority = [&](uint32_t i) {
    const TransferInfo& transfer = problem.transfers[i];
    uint64_t p = remaining[transfer.source];
    for (const ReceiverInfo& r : transfer.receivers) p = std::max(p, remaining[r.tile]);
    return p;
  };
  // Max-heap of (priority, -transfer); stale entries are re-pushed with their current value.
  using Entry = std::pair<uint64_t, int64_t>;
  std::priority_queue<Entry> heap;
  for (uint32_t i = 0; i < problem.transfers.size(); ++i) heap.push({priority(i), -int64_t{i}});
  Order order;
  while (!heap.empty()) {
    const auto [p, neg] = heap.top();
    heap.pop();
    const uint32_t i = static_cast<uint32_t>(-neg);
    const uint64_t current = priority(i);
    if (current != p) {
      heap.push({current, neg});
      continue;
    }
    const TransferInfo& transfer = problem.transfers[i];
    const uint32_t words = std::min(chunk, transfer.items - next_offset[i]);
    order.push_back({i, next_offset[i], words});
    next_offset[i] += words;
    remaining[transfer.source] -= words;
    for (const ReceiverInfo& r : transfer.receivers) remaining[r.tile] -= words;
    if (next_offset[i] < transfer.items) heap.push({priority(i), neg});
  }
  return order;
}

Order matching_order(const PhaseProblem& problem, uint32_t chunk_words) {
  for (const TransferInfo& t : problem.transfers)
    if (t.receivers.size() != 1) return {};
  const uint32_t chunk = effective(chunk_words);
  // Remaining chunks per transfer; each wave matches every sender to at most one receiver
  // (Hopcroft-Karp on the bipartite graph of transfers with chunks left), heaviest first.
  std::vector<uint32_t> next_offset(problem.transfers.size(), 0);
  std::vector<uint32_t> by_sender_start(problem.tiles + 1, 0);
  std::vector<uint32_t> edges(problem.transfers.size());
  {
    std::vector<uint32_t> order(problem.transfers.size());
    std::iota(order.begin(), order.end(), 0u);
    std::stable_sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) {
      const auto& ta = problem.transfers[a];
      const auto& tb = problem.transfers[b];
      if (ta.source != tb.source) return ta.source < tb.source;
      return problem.recv_load[ta.receivers[0].tile] > problem.recv_load[tb.receivers[0].tile];
    });
    edges = order;
    for (uint32_t i : order) ++by_sender_start[problem.transfers[i].source + 1];
    for (uint32_t t = 0; t < problem.tiles; ++t) by_sender_start[t + 1] += by_sender_start[t];
  }
  Order result;
  size_t left = problem.transfers.size();
  const uint32_t none = 0xffffffffu;
  std::vector<uint32_t> match_recv(problem.tiles, none);  // receiver -> transfer
  std::vector<uint32_t> match_send(problem.tiles, none);  // sender -> transfer
  std::vector<int32_t> dist(problem.tiles);
  std::vector<uint32_t> cursor(problem.tiles);
  while (left > 0) {
    std::fill(match_recv.begin(), match_recv.end(), none);
    std::fill(match_send.begin(), match_send.end(), none);
    auto alive = [&](uint32_t transfer) { return next_offset[transfer] < problem.transfers[transfer].items; };
    // Hopcroft-Karp: BFS layers from free senders, DFS augmenting paths.
    for (;;) {
      std::vector<uint32_t> queue;
      std::fill(dist.begin(), dist.end(), -1);
      for (uint32_t s = 0; s < problem.tiles; ++s)
        if (match_send[s] == none && by_sender_start[s] != by_sender_start[s + 1]) {
          dist[s] = 0;
          queue.push_back(s);
        }
      bool found = false;
      for (size_t q = 0; q < queue.size(); ++q) {
        const uint32_t s = queue[q];
        for (uint32_t e = by_sender_start[s]; e < by_sender_start[s + 1]; ++e) {
          const uint32_t transfer = edges[e];
          if (!alive(transfer)) continue;
          const uint32_t r = problem.transfers[transfer].receivers[0].tile;
          const uint32_t other = match_recv[r];
          if (other == none) {
            found = true;
          } else {
            const uint32_t s2 = problem.transfers[other].source;
            if (dist[s2] < 0) {
              dist[s2] = dist[s] + 1;
              queue.push_back(s2);
            }
          }
        }
      }
      if (!found) break;
      for (uint32_t s = 0; s < problem.tiles; ++s) cursor[s] = by_sender_start[s];
      // Iterative DFS would be safer for depth; paths are short in practice (bounded by
      // the number of layers), recursion depth <= tiles.
      std::function<bool(uint32_t)> augment = [&](uint32_t s) -> bool {
        for (uint32_t& e = cursor[s]; e < by_sender_start[s + 1]; ++e) {
          const uint32_t transfer = edges[e];
          if (!alive(transfer)) continue;
          const uint32_t r = problem.transfers[transfer].receivers[0].tile;
          const uint32_t other = match_recv[r];
          if (other == none ||
              (dist[problem.transfers[other].source] == dist[s] + 1 && augment(problem.transfers[other].source))) {
            match_recv[r] = transfer;
            match_send[s] = transfer;
            ++e;
            return true;
          }
        }
        dist[s] = -1;
        return false;
      };
      bool any = false;
      for (uint32_t s = 0; s < problem.tiles; ++s)
        if (match_send[s] == none && dist[s] == 0 && augment(s)) any = true;
      if (!any) break;
    }
    bool progressed = false;
    for (uint32_t s = 0; s < problem.tiles; ++s) {
      const uint32_t transfer = match_send[s];
      if (transfer == none) continue;
      const uint32_t words = std::min(chunk, problem.transfers[transfer].items - next_offset[transfer]);
      result.push_back({transfer, next_offset[transfer], words});
      next_offset[transfer] += words;
      if (next_offset[transfer] == problem.transfers[transfer].items) --left;
      progressed = true;
    }
    if (!progressed) break;
  }
  return result;
}

Order promote_tile(const PhaseProblem& problem, const Order& order, uint32_t tile) {
  Order front, back;
  for (const Message& m : order) {
    const TransferInfo& transfer = problem.transfers[m.transfer];
    bool touches = transfer.source == tile;
    for (const ReceiverInfo& r : transfer.receivers) touches = touches || r.tile == tile;
    (touches ? front : back).push_back(m);
  }
  front.insert(front.end(), back.begin(), back.end());
  return front;
}

bool phase_is_balanced(const PhaseProblem& problem) {
  uint64_t busiest = 0, total = 0, busy = 0;
  for (uint32_t t = 0; t < problem.tiles; ++t) {
    const uint64_t load = tile_load(problem, t);
    if (load == 0) continue;
    busiest = std::max(busiest, load);
    total += load;
    ++busy;
  }
  return busy > 0 && busiest * busy <= 2 * total;
}

}  // namespace lockstep::compiler
