// validate_capture: every rule a capture producer promises the exchange compiler.
#include <algorithm>
#include <cstdio>
#include <unordered_map>
#include <vector>

#include "formats/capture.hpp"
#include "io/errors.hpp"
#include "io/hex.hpp"

namespace lockstep::arch {
namespace {

class Checker {
 public:
  Checker(const MachineDescription& machine, const std::string& file)
      : machine_(machine),
        file_(file),
        words_((machine.element_of(machine.sram_end - 1) + 64) / 64),
        sends_(size_t{machine.tiles} * words_, 0),
        receives_(size_t{machine.tiles} * words_, 0),
        is_touched_(machine.tiles, false),
        destination_stamp_(machine.tiles, 0) {}

  void phase(const CapturePhase& p, size_t index) {
    where_ = file_ + ": phase " + std::to_string(p.id) + " (" + p.label + "): ";
    const auto [it, fresh] = seen_ids_.emplace(p.id, index);
    if (!fresh) {
      fail("id: " + std::to_string(p.id) + " already used by the phase at index " + std::to_string(it->second));
    }
    if (p.execution_count == 0) fail("execution_count: must be at least 1");
    if (p.iterations == 0) fail("iterations: must be at least 1");
    for (size_t t = 0; t < p.transfers.size(); ++t) {
      transfer(p.transfers[t], p.iterations, t);
    }
    shared_elements(p);
  }

 private:
  [[noreturn]] void fail(const std::string& what) const { throw InputError(where_ + what); }

  // Hazard 2 (docs/ipu21-exchange.md section 7): a send's read window and a receive's write
  // window both run to the end of the tile's row, so within one phase no tile may send
  // from and receive into one memory element. Per tile, a bitset of the elements it sends
  // from and one of those it receives into.
  void mark(std::vector<uint64_t>& bits, uint32_t tile, uint32_t address, uint32_t words) {
    if (!is_touched_[tile]) {
      is_touched_[tile] = true;
      touched_.push_back(tile);
    }
    const uint32_t first = machine_.element_of(address);
    const uint32_t last = machine_.element_of(address + words * 4 - 1);
    for (uint32_t e = first; e <= last; ++e) bits[size_t{tile} * words_ + e / 64] |= uint64_t{1} << (e % 64);
  }
  bool covers(uint32_t address, uint32_t words, uint32_t element) const {
    return machine_.element_of(address) <= element && element <= machine_.element_of(address + words * 4 - 1);
  }

  void shared_elements(const CapturePhase& p) {
    std::sort(touched_.begin(), touched_.end());
    uint32_t bad_tile = 0, bad_element = 0;
    bool bad = false;
    for (const uint32_t tile : touched_) {
      for (size_t w = 0; w < words_ && !bad; ++w) {
        const uint64_t both = sends_[tile * words_ + w] & receives_[tile * words_ + w];
        if (both == 0) continue;
        bad = true;
        bad_tile = tile;
        bad_element = static_cast<uint32_t>(w * 64 + static_cast<size_t>(__builtin_ctzll(both)));
      }
      if (bad) break;
    }
    for (const uint32_t tile : touched_) {
      std::fill_n(sends_.begin() + tile * words_, words_, 0);
      std::fill_n(receives_.begin() + tile * words_, words_, 0);
      is_touched_[tile] = false;
    }
    touched_.clear();
    if (!bad) return;
    size_t source = 0, destination = 0;
    bool found_source = false, found_destination = false;
    for (size_t i = 0; i < p.transfers.size() && !(found_source && found_destination); ++i) {
      const Transfer& t = p.transfers[i];
      if (!found_source && t.source_tile == bad_tile) {
        for (const uint32_t a : t.source_addresses) {
          if (covers(a, t.words, bad_element)) {
            found_source = true;
            source = i;
            break;
          }
        }
      }
      if (!found_destination) {
        for (const Destination& d : t.destinations) {
          if (d.tile == bad_tile && covers(d.address, t.words, bad_element)) {
            found_destination = true;
            destination = i;
            break;
          }
        }
      }
    }
    fail("tile " + std::to_string(bad_tile) + " sends from and receives into memory element " +
         std::to_string(bad_element) + " (hazard 2): transfer " + std::to_string(source) + " source / transfer " +
         std::to_string(destination) + " destination");
  }

  template <typename Field>
  void tile(uint32_t value, const Field& field) const {
    if (value < machine_.tiles) return;
    fail(field() + ": " + std::to_string(value) + " is not a tile of " + machine_.name + " (" +
         std::to_string(machine_.tiles) + " tiles)");
  }

  // Fields are passed as callables so the common (valid) case builds no strings: a full
  // capture has tens of millions of addresses.
  template <typename Field>
  void span(uint32_t address, uint32_t words, const Field& field) const {
    const uint64_t begin = address;
    const uint64_t end = begin + uint64_t{words} * 4;
    const bool outside = begin < machine_.sram_base || end > machine_.sram_end;
    const bool reserved = begin < kTableReservedEnd && end > kTableReservedBegin;
    if (address % 4 == 0 && !outside && !reserved) return;
    if (address % 4 != 0) fail(field() + ": " + hex(address) + " is not 4-aligned");
    const std::string range = hex_range(begin, end);
    if (outside) {
      fail(field() + ": span " + range + " outside SRAM [" + hex(machine_.sram_base) + ", " + hex(machine_.sram_end) +
           ")");
    }
    fail(field() + ": span " + range + " overlaps the exchange-table range [" + hex(kTableReservedBegin) + ", " +
         hex(kTableReservedEnd) + ")");
  }

  void transfer(const Transfer& t, uint32_t iterations, size_t index) {
    const auto here = [&] { return "transfer " + std::to_string(index) + ": "; };
    const auto fail_here = [&](const std::string& what) { fail(here() + what); };
    tile(t.source_tile, [&] { return here() + "source_tile"; });
    if (t.words == 0) fail_here("words: must be at least 1");
    if (t.words > kMaxTransferWords) {
      fail_here("words: " + std::to_string(t.words) + " exceeds the limit of " + std::to_string(kMaxTransferWords));
    }
    if (t.source_addresses.size() != iterations) {
      fail_here("source_addresses: " + std::to_string(t.source_addresses.size()) +
                " addresses, expected one per iteration (" + std::to_string(iterations) + ")");
    }
    for (size_t k = 0; k < t.source_addresses.size(); ++k) {
      span(t.source_addresses[k], t.words, [&] { return here() + "source_addresses[" + std::to_string(k) + "]"; });
      mark(sends_, t.source_tile, t.source_addresses[k], t.words);
    }
    if (t.destinations.empty()) fail_here("destinations: a transfer needs at least one");
    ++transfer_stamp_;
    for (size_t i = 0; i < t.destinations.size(); ++i) {
      const Destination& d = t.destinations[i];
      const auto field = [&] { return here() + "destinations[" + std::to_string(i) + "]"; };
      tile(d.tile, [&] { return field() + ".tile"; });
      if (d.tile == t.source_tile) {
        fail(field() + ".tile: " + std::to_string(d.tile) + " is the source tile");
      }
      // A stamp per tile finds a repeat in one look; only then is the earlier one searched for.
      if (destination_stamp_[d.tile] == transfer_stamp_) {
        for (size_t j = 0; j < i; ++j) {
          if (t.destinations[j].tile == d.tile) {
            fail(field() + ".tile: " + std::to_string(d.tile) + " repeats destinations[" + std::to_string(j) + "]");
          }
        }
      }
      destination_stamp_[d.tile] = transfer_stamp_;
      span(d.address, t.words, [&] { return field() + ".address"; });
      mark(receives_, d.tile, d.address, t.words);
    }
  }

  const MachineDescription& machine_;
  const std::string& file_;
  std::string where_;
  std::unordered_map<uint32_t, size_t> seen_ids_;
  size_t words_;                    // uint64_t words of one tile's element bitset
  std::vector<uint64_t> sends_;     // per tile: elements it sends from in this phase
  std::vector<uint64_t> receives_;  // per tile: elements it receives into
  std::vector<uint32_t> touched_;   // tiles with bits set (cleared after each phase)
  std::vector<bool> is_touched_;
  uint64_t transfer_stamp_ = 0;              // one per transfer checked
  std::vector<uint64_t> destination_stamp_;  // per tile: the last transfer that delivered to it
};

}  // namespace

void validate_capture(const Capture& capture, const MachineDescription& machine, const std::string& file_name) {
  if (capture.version != kCaptureVersion) {
    throw InputError(file_name + ": version: " + std::to_string(capture.version) +
                     " is not supported (this build reads " + std::to_string(kCaptureVersion) + ")");
  }
  Checker checker(machine, file_name);
  for (size_t i = 0; i < capture.phases.size(); ++i) checker.phase(capture.phases[i], i);
}

CaptureStats capture_stats(const Capture& capture) {
  CaptureStats stats;
  for (const auto& phase : capture.phases) {
    CapturePhaseStats p;
    p.id = phase.id;
    p.label = phase.label;
    p.execution_count = phase.execution_count;
    p.iterations = phase.iterations;
    p.transfers = phase.transfers.size();
    for (const auto& t : phase.transfers) {
      p.destinations += t.destinations.size();
      p.words += t.words;
      p.words_delivered += uint64_t{t.words} * t.destinations.size();
      stats.source_addresses += t.source_addresses.size();
    }
    stats.transfers += p.transfers;
    stats.words += p.words;
    stats.words_delivered += p.words_delivered;
    stats.phases.push_back(std::move(p));
  }
  return stats;
}

}  // namespace lockstep::arch
