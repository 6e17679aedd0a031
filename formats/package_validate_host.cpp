#include "formats/package_validate_host.hpp"

#include <set>
#include <variant>
#include <vector>

#include "arch/host_packets.hpp"
#include "formats/package_io.hpp"
#include "io/errors.hpp"
#include "io/hex.hpp"

namespace lockstep::arch {

namespace {

uint64_t count_host_steps(const std::vector<Step>& steps) {
  uint64_t n = 0;
  for (const Step& step : steps) {
    if (std::holds_alternative<HostStep>(step.kind)) ++n;
    if (const auto* r = std::get_if<RepeatStep>(&step.kind)) n += count_host_steps(r->body);
  }
  return n;
}

std::string kind_phrase(BindingKind kind) {
  return (kind == BindingKind::Weight ? "a " : "an ") + std::string(binding_kind_name(kind));
}

uint64_t binding_bytes(const Binding& b) {
  uint64_t bytes = 0;
  for (const Slice& s : b.slices) bytes += s.bytes;
  return bytes;
}

class SessionChecker {
 public:
  SessionChecker(const Package& p, const std::string& file) : p_(p), file_(file) {}

  void run(uint64_t host_phases) {
    const HostSession& h = p_.host;
    if (!h.calls.empty()) {
      if (h.command_address % 4 != 0) {
        fail("host.command_address", hex(h.command_address) + " is not 4-aligned");
      }
      arena("host.command_address", h.command_address, 4);
    }
    std::set<std::string> names;
    uint64_t phases = 0;
    for (size_t i = 0; i < h.calls.size(); ++i) {
      const HostCallSpec& c = h.calls[i];
      const std::string where = "host.calls[" + std::to_string(i) + "]";
      if (c.name.empty()) fail(where + ": name", "is empty");
      if (!names.insert(c.name).second) fail(where + " ('" + c.name + "'): name", "call name listed twice");
      call(c, where + " ('" + c.name + "')");
      phases += c.phases;
    }
    if (phases != host_phases) {
      fail("host.calls", "their phases add up to " + std::to_string(phases) + " but the tiles have " +
                             std::to_string(host_phases) + " host steps each");
    }
  }

 private:
  [[noreturn]] void fail(const std::string& where, const std::string& what) const {
    throw InputError(file_ + ": " + where + ": " + what);
  }

  void arena(const std::string& where, uint64_t address, uint64_t bytes) const {
    if (address + bytes > p_.host.arena_bytes) {
      fail(where, hex_range(address, address + bytes) + " outside the host arena " + hex_range(0, p_.host.arena_bytes));
    }
  }

  void call(const HostCallSpec& c, const std::string& where) const {
    const uint64_t in_file = file_bytes(c.input_bindings, where + ": input_bindings", true);
    const uint64_t out_file = file_bytes(c.output_bindings, where + ": output_bindings", false);
    slices(c.inputs, in_file, where + ": inputs", "input");
    slices(c.outputs, out_file, where + ": outputs", "output");
    batch_ends(c.input_batch_ends, c.inputs.size(), where + ": input_batch_ends", "input");
    batch_ends(c.output_batch_ends, c.outputs.size(), where + ": output_batch_ends", "output");
  }

  // The size of the file the named bindings make, each checked to exist with the right kind.
  uint64_t file_bytes(const std::vector<std::string>& names, const std::string& field, bool inputs) const {
    uint64_t total = 0;
    for (size_t j = 0; j < names.size(); ++j) {
      const std::string at = field + "[" + std::to_string(j) + "]";
      const Binding* b = find_binding(names[j]);
      if (!b) fail(at, "no binding '" + names[j] + "'");
      if (inputs == (b->kind == BindingKind::Output)) {
        fail(at, "binding '" + names[j] + "' is " + kind_phrase(b->kind) + ", not " +
                     (inputs ? "an input or weight" : "an output"));
      }
      total += binding_bytes(*b);
    }
    return total;
  }

  const Binding* find_binding(const std::string& name) const {
    for (const Binding& b : p_.bindings) {
      if (b.name == name) return &b;
    }
    return nullptr;
  }

  void slices(const std::vector<HostFileSlice>& list, uint64_t file_size, const std::string& field,
              const char* side) const {
    for (size_t j = 0; j < list.size(); ++j) {
      const HostFileSlice& s = list[j];
      const std::string at = field + "[" + std::to_string(j) + "]";
      arena(at + ".host_address", s.host_address, s.bytes);
      if (s.file_offset > file_size || s.bytes > file_size - s.file_offset) {
        fail(at + ".file_offset", std::to_string(s.bytes) + " bytes at " + std::to_string(s.file_offset) +
                                      " reach past the " + side + " file's " + std::to_string(file_size) +
                                      " bytes (its bindings' sizes added up)");
      }
    }
  }

  void batch_ends(const std::vector<uint32_t>& ends, size_t slices, const std::string& field, const char* side) const {
    if (ends.empty()) {
      if (slices != 0) fail(field, "is empty but the call has " + std::to_string(slices) + " " + side + " slices");
      return;
    }
    uint32_t previous = 0;
    for (size_t j = 0; j < ends.size(); ++j) {
      if (ends[j] <= previous) {
        fail(field + "[" + std::to_string(j) + "]", std::to_string(ends[j]) + " does not follow " +
                                                        std::to_string(previous) +
                                                        " (batch ends increase strictly from 0)");
      }
      previous = ends[j];
    }
    if (previous != slices) {
      fail(field, "the last end is " + std::to_string(previous) + ", not the call's " + std::to_string(slices) + " " +
                      side + " slices");
    }
  }

  const Package& p_;
  const std::string& file_;
};

}  // namespace

uint64_t check_host_phases(const Package& package, const std::string& file_name) {
  if (package.tiles.empty()) return 0;
  const TileProgram& first = package.tiles.front();
  const uint64_t count = count_host_steps(first.steps);
  for (const TileProgram& t : package.tiles) {
    const uint64_t n = count_host_steps(t.steps);
    if (n != count) {
      throw InputError(file_name + ": tile " + std::to_string(t.tile) + ": steps: has " + std::to_string(n) +
                       " host steps but tile " + std::to_string(first.tile) + " has " + std::to_string(count));
    }
  }
  if (count == 0) return 0;
  const std::string each = " but the tiles have " + std::to_string(count) + " host steps each";
  if (package.host.arena_bytes == 0) throw InputError(file_name + ": host.arena_bytes: is 0" + each);
  if (package.host.calls.empty()) throw InputError(file_name + ": host.calls: is empty" + each);
  return count;
}

void check_host_session(const Package& package, uint64_t host_phases, const std::string& file_name) {
  SessionChecker(package, file_name).run(host_phases);
}

namespace {
void split(const HostStep& step, std::vector<uint32_t>& addresses, std::vector<uint32_t>& bytes) {
  for (const HostTransfer& t : step.transfers) {
    addresses.push_back(t.tile_address);
    bytes.push_back(t.bytes);
  }
}
}  // namespace

std::vector<uint32_t> host_landing_addresses(const HostStep& step) {
  std::vector<uint32_t> addresses, bytes;
  split(step, addresses, bytes);
  const bool to_tile = !step.transfers.empty() && step.transfers.front().direction == HostDirection::ToTile;
  return arch::host_landing_addresses(addresses, bytes, to_tile);
}

std::string host_staging_misfit(const HostStep& step) {
  if (step.transfers.empty() || step.transfers.front().direction != HostDirection::ToTile) return "";
  std::vector<uint32_t> addresses, bytes;
  split(step, addresses, bytes);
  return arch::host_staging_misfit(addresses, bytes);
}

}  // namespace lockstep::arch
