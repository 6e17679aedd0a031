// validate_capture: every rule a capture producer promises the exchange compiler.
#include <algorithm>
#include <cstdio>
#include <unordered_map>

#include "arch/capture.hpp"
#include "arch/errors.hpp"

namespace lockstep::arch {
namespace {

std::string hex(uint64_t value) {
  char buffer[24];
  std::snprintf(buffer, sizeof buffer, "0x%llx", static_cast<unsigned long long>(value));
  return buffer;
}

class Checker {
 public:
  Checker(const MachineDescription& machine, const std::string& file)
      : machine_(machine), file_(file) {}

  void phase(const CapturePhase& p, size_t index) {
    where_ = file_ + ": phase " + std::to_string(p.id) + " (" + p.label + "): ";
    const auto [it, fresh] = seen_ids_.emplace(p.id, index);
    if (!fresh) {
      fail("id: " + std::to_string(p.id) + " already used by the phase at index " +
           std::to_string(it->second));
    }
    if (p.execution_count == 0) fail("execution_count: must be at least 1");
    if (p.iterations == 0) fail("iterations: must be at least 1");
    for (size_t t = 0; t < p.transfers.size(); ++t) {
      transfer(p.transfers[t], p.iterations, t);
    }
  }

 private:
  [[noreturn]] void fail(const std::string& what) const { throw InputError(where_ + what); }

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
    const std::string range = "[" + hex(begin) + ", " + hex(end) + ")";
    if (outside) {
      fail(field() + ": span " + range + " outside SRAM [" + hex(machine_.sram_base) + ", " +
           hex(machine_.sram_end) + ")");
    }
    fail(field() + ": span " + range + " overlaps the exchange-table range [" +
         hex(kTableReservedBegin) + ", " + hex(kTableReservedEnd) + ")");
  }

  void transfer(const Transfer& t, uint32_t iterations, size_t index) {
    const auto here = [&] { return "transfer " + std::to_string(index) + ": "; };
    const auto fail_here = [&](const std::string& what) { fail(here() + what); };
    tile(t.source_tile, [&] { return here() + "source_tile"; });
    if (t.words == 0) fail_here("words: must be at least 1");
    if (t.words > kMaxTransferWords) {
      fail_here("words: " + std::to_string(t.words) + " exceeds the limit of " +
                std::to_string(kMaxTransferWords));
    }
    if (t.source_addresses.size() != iterations) {
      fail_here("source_addresses: " + std::to_string(t.source_addresses.size()) +
                " addresses, expected one per iteration (" + std::to_string(iterations) + ")");
    }
    for (size_t k = 0; k < t.source_addresses.size(); ++k) {
      span(t.source_addresses[k], t.words,
           [&] { return here() + "source_addresses[" + std::to_string(k) + "]"; });
    }
    if (t.destinations.empty()) fail_here("destinations: a transfer needs at least one");
    for (size_t i = 0; i < t.destinations.size(); ++i) {
      const Destination& d = t.destinations[i];
      const auto field = [&] { return here() + "destinations[" + std::to_string(i) + "]"; };
      tile(d.tile, [&] { return field() + ".tile"; });
      if (d.tile == t.source_tile) {
        fail(field() + ".tile: " + std::to_string(d.tile) + " is the source tile");
      }
      for (size_t j = 0; j < i; ++j) {
        if (t.destinations[j].tile == d.tile) {
          fail(field() + ".tile: " + std::to_string(d.tile) + " repeats destinations[" +
               std::to_string(j) + "]");
        }
      }
      span(d.address, t.words, [&] { return field() + ".address"; });
    }
  }

  const MachineDescription& machine_;
  const std::string& file_;
  std::string where_;
  std::unordered_map<uint32_t, size_t> seen_ids_;
};

}  // namespace

void validate_capture(const Capture& capture, const MachineDescription& machine,
                      const std::string& file_name) {
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
