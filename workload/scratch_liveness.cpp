#include "workload/scratch_liveness.hpp"

#include <algorithm>
#include <boost/graph/adjacency_list.hpp>
#include <boost/graph/sequential_vertex_coloring.hpp>
#include <numeric>

namespace lockstep::workload {
namespace {

using InterferenceGraph = boost::adjacency_list<boost::vecS, boost::vecS, boost::undirectedS>;

bool live_together(const ScratchBuffer& a, const ScratchBuffer& b) { return a.first <= b.last && b.first <= a.last; }

// One region per colour: its buffers and whether (and below which earlier region's end) it
// must start in a fresh memory element.
struct Region {
  uint64_t bytes = 0;
  std::string name;
  std::vector<uint32_t> apart_from;  // earlier colours
};

std::vector<Region> regions(const std::vector<ScratchBuffer>& buffers, const std::vector<uint32_t>& colours,
                            const std::vector<ApartPair>& apart) {
  const uint32_t count = colours.empty() ? 0 : *std::max_element(colours.begin(), colours.end()) + 1;
  std::vector<Region> out(count);
  for (size_t i = 0; i < buffers.size(); ++i) {
    Region& r = out[colours[i]];
    r.bytes = std::max(r.bytes, buffers[i].bytes);
    r.name += (r.name.empty() ? "" : "/") + buffers[i].name;
  }
  for (const ApartPair& p : apart) {
    const uint32_t early = std::min(colours[p.a], colours[p.b]);
    const uint32_t late = std::max(colours[p.a], colours[p.b]);
    out[late].apart_from.push_back(early);
  }
  return out;
}

}  // namespace

std::vector<uint32_t> colour_by_liveness(const std::vector<ScratchBuffer>& buffers,
                                         const std::vector<ApartPair>& apart) {
  InterferenceGraph graph(buffers.size());
  for (size_t a = 0; a < buffers.size(); ++a) {
    for (size_t b = a + 1; b < buffers.size(); ++b) {
      if (live_together(buffers[a], buffers[b])) boost::add_edge(a, b, graph);
    }
  }
  for (const ApartPair& p : apart) {
    if (!boost::edge(p.a, p.b, graph).second) boost::add_edge(p.a, p.b, graph);
  }
  // Greedy colouring in order of first use (ties: listing order) is optimal for an interval
  // graph, and keeps the regions in the order the operation first needs them.
  std::vector<size_t> order(buffers.size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return buffers[a].first < buffers[b].first; });
  std::vector<size_t> colour(buffers.size());
  const auto index = boost::get(boost::vertex_index, graph);
  boost::sequential_vertex_coloring(graph, boost::make_iterator_property_map(order.begin(), index),
                                    boost::make_iterator_property_map(colour.begin(), index));
  return {colour.begin(), colour.end()};
}

ScratchLayout layout_scratch(const TileMemory& memory, uint32_t tile, const std::vector<ScratchBuffer>& buffers,
                             const std::vector<uint32_t>& colours, const std::vector<ApartPair>& apart) {
  const std::vector<Region> rs = regions(buffers, colours, apart);
  std::vector<uint64_t> begin(rs.size()), end(rs.size());
  uint64_t top = memory.scratch_start(tile);
  for (size_t r = 0; r < rs.size(); ++r) {
    // As place_scratch() places it through TileMemory::scratch_apart() and scratch().
    uint64_t below = 0;
    for (uint32_t early : rs[r].apart_from) below = std::max(below, end[early]);
    if (below != 0 && top < memory.end() && below <= memory.end()) {
      top = std::max<uint64_t>(
          top, std::min(memory.end(), memory.apart(static_cast<uint32_t>(top), static_cast<uint32_t>(below))));
    }
    begin[r] = (top + 7) & ~uint64_t{7};
    end[r] = begin[r] + rs[r].bytes;
    top = end[r];
  }
  ScratchLayout layout;
  layout.end = top;
  for (size_t i = 0; i < buffers.size(); ++i) layout.address.push_back(static_cast<uint32_t>(begin[colours[i]]));
  return layout;
}

std::vector<uint32_t> place_scratch(TileMemory& memory, uint32_t tile, const std::vector<ScratchBuffer>& buffers,
                                    const std::vector<uint32_t>& colours, const std::vector<ApartPair>& apart) {
  const std::vector<Region> rs = regions(buffers, colours, apart);
  std::vector<uint32_t> begin(rs.size());
  std::vector<uint32_t> end(rs.size());
  for (size_t r = 0; r < rs.size(); ++r) {
    uint32_t below = 0;  // the highest end among the regions it must stay apart from
    for (uint32_t early : rs[r].apart_from) below = std::max(below, end[early]);
    begin[r] = below ? memory.scratch_apart(tile, rs[r].name, rs[r].bytes, below)
                     : memory.scratch(tile, rs[r].name, rs[r].bytes);
    end[r] = static_cast<uint32_t>(begin[r] + rs[r].bytes);
  }
  std::vector<uint32_t> address;
  for (size_t i = 0; i < buffers.size(); ++i) address.push_back(begin[colours[i]]);
  return address;
}

}  // namespace lockstep::workload
