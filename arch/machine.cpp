// Loading, validating and fingerprinting machine descriptions (configs/machines/*.yaml).
#include "arch/machine.hpp"

#include <cctype>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <set>

#include "io/embedded_configs.hpp"
#include "io/errors.hpp"
#include "io/hex.hpp"
#include "io/yaml_reader.hpp"

namespace lockstep::arch {
namespace {

constexpr uint32_t kC600ChipTiles = 1472;
constexpr int kMaxBaseDepth = 8;
constexpr uint32_t kXpicValueLimit = 1u << 13;  // XPIC values are 13 bits (section 4)

bool power_of_two(uint32_t v) { return v != 0 && (v & (v - 1)) == 0; }

[[noreturn]] void fail_at(const YamlMap& map, const std::string& key, const std::string& what) {
  yaml_fail(map.file(), map.node()[key], map.key_path(key), what);
}

void check_name(const YamlMap& map, const std::string& name) {
  bool ok = !name.empty();
  for (const char ch : name) {
    ok = ok && (std::isalnum(static_cast<unsigned char>(ch)) || ch == '-' || ch == '_' || ch == '.');
  }
  if (!ok) fail_at(map, "name", "'" + name + "': use letters, digits, '.', '_' and '-' only");
}

void read_tiles(YamlMap& root, MachineDescription& m) {
  m.tiles = root.required_unsigned<uint32_t>("tiles");
  if (m.tiles == 0 || m.tiles > m.chip_tiles) {
    fail_at(root, "tiles",
            std::to_string(m.tiles) + " is outside 1.." + std::to_string(m.chip_tiles) + " (chip_tiles)");
  }
}

void read_memory(YamlMap memory, MachineDescription& m) {
  m.sram_base = memory.required_unsigned<uint32_t>("base");
  m.sram_end = memory.required_unsigned<uint32_t>("end");
  m.element_bytes = memory.required_unsigned<uint32_t>("element_bytes");
  m.interleaved_base = memory.required_unsigned<uint32_t>("interleaved_base");
  m.interleaved_element_bytes = memory.required_unsigned<uint32_t>("interleaved_element_bytes");
  m.row_region_end = memory.required_unsigned<uint32_t>("row_region_end");
  m.loader_limit = memory.required_unsigned<uint32_t>("loader_limit");
  m.fetch_lookahead_bytes = memory.required_unsigned<uint32_t>("fetch_lookahead_bytes", 4096);
  memory.finish();

  if (m.sram_end <= m.sram_base) {
    fail_at(memory, "end", hex(m.sram_end) + " must be above base " + hex(m.sram_base));
  }
  if (!power_of_two(m.element_bytes) || m.element_bytes < 8) {
    fail_at(memory, "element_bytes", hex(m.element_bytes) + " is not a power of two >= 8");
  }
  if (!power_of_two(m.interleaved_element_bytes) || m.interleaved_element_bytes < 8) {
    fail_at(memory, "interleaved_element_bytes", hex(m.interleaved_element_bytes) + " is not a power of two >= 8");
  }
  if (m.sram_base % m.element_bytes != 0) {
    fail_at(memory, "base", hex(m.sram_base) + " is not aligned to element_bytes " + hex(m.element_bytes));
  }
  if (m.interleaved_base < m.sram_base || m.interleaved_base > m.sram_end) {
    fail_at(memory, "interleaved_base",
            hex(m.interleaved_base) + " outside [base, end] = [" + hex(m.sram_base) + ", " + hex(m.sram_end) + "]");
  }
  // Whole elements on both sides of the region boundary, so element indices never overlap.
  if (m.interleaved_base % m.element_bytes != 0) {
    fail_at(memory, "interleaved_base",
            hex(m.interleaved_base) + " is not aligned to element_bytes " + hex(m.element_bytes));
  }
  if ((m.sram_end - m.interleaved_base) % m.interleaved_element_bytes != 0) {
    fail_at(memory, "end",
            hex(m.sram_end) +
                ": region above interleaved_base is not a whole "
                "number of interleaved elements (" +
                hex(m.interleaved_element_bytes) + ")");
  }
  // Rows need instruction fetch, which only region 0 supports.
  if (m.row_region_end <= m.sram_base || m.row_region_end > m.interleaved_base || m.row_region_end % 8 != 0) {
    fail_at(memory, "row_region_end",
            hex(m.row_region_end) + " must be 8-aligned, above base and at most interleaved_base " +
                hex(m.interleaved_base));
  }
  if (m.loader_limit <= m.sram_base || m.loader_limit > m.sram_end || m.loader_limit % 4 != 0) {
    fail_at(memory, "loader_limit",
            hex(m.loader_limit) + " must be 4-aligned, above base and at most end " + hex(m.sram_end));
  }
  if (m.fetch_lookahead_bytes % 4 != 0) {
    fail_at(memory, "fetch_lookahead_bytes", std::to_string(m.fetch_lookahead_bytes) + " is not a multiple of 4");
  }
}

void read_supervisor(YamlMap supervisor, MachineDescription& m) {
  m.supervisor_cycles_per_instruction = supervisor.required_unsigned<uint32_t>("cycles_per_instruction", 1000);
  m.workers = supervisor.required_unsigned<uint32_t>("workers", 64);
  m.bulk_patch_threshold_words = supervisor.required_unsigned<uint32_t>("bulk_patch_threshold_words");
  supervisor.finish();
  if (m.supervisor_cycles_per_instruction == 0) {
    fail_at(supervisor, "cycles_per_instruction", "must be at least 1");
  }
  if (m.workers == 0) fail_at(supervisor, "workers", "must be at least 1");
  if (m.bulk_patch_threshold_words == 0) {
    fail_at(supervisor, "bulk_patch_threshold_words", "must be at least 1");
  }
}

void read_exchange(YamlMap exchange, MachineDescription& m) {
  m.neutral_mux = exchange.required_unsigned<uint32_t>("neutral_mux");
  RouteTiming& r = m.route;
  r.ttm_offset = static_cast<int>(exchange.signed_value("ttm_offset", -1000, 1000));
  r.write_delay_base = static_cast<int>(exchange.signed_value("write_delay_base", 0, 10000));
  r.write_delay_per_row = static_cast<int>(exchange.signed_value("write_delay_per_row", 0, 1000));
  r.paired_write_delay_base = static_cast<int>(exchange.signed_value("paired_write_delay_base", 0, 10000));
  r.receive_tail_events = static_cast<int>(exchange.signed_value("receive_tail_events", 0, 10000));
  exchange.finish();
  // The neutral selection must be a valid XPIC value that names no tile.
  if (m.neutral_mux < m.chip_tiles || m.neutral_mux >= kXpicValueLimit) {
    fail_at(exchange, "neutral_mux",
            hex(m.neutral_mux) + " must name no tile: " + hex(m.chip_tiles) + ".." + hex(kXpicValueLimit - 1));
  }
}

MachineDescription parse_full(YamlMap& root) {
  MachineDescription m;
  m.name = root.string("name");
  check_name(root, m.name);
  m.chip_tiles = root.required_unsigned<uint32_t>("chip_tiles");
  const std::string mapping = root.string("tile_mapping");
  if (mapping != "c600") {
    fail_at(root, "tile_mapping", "'" + mapping + "' is not a known mapping (known: c600)");
  }
  if (m.chip_tiles != kC600ChipTiles) {
    fail_at(root, "chip_tiles", std::to_string(m.chip_tiles) + ": the c600 tile mapping has exactly 1472 tiles");
  }
  read_tiles(root, m);
  read_memory(root.map("memory"), m);
  m.clock_hz = root.real("clock_hz");
  if (!std::isfinite(m.clock_hz) || m.clock_hz <= 0) {
    fail_at(root, "clock_hz", "must be a positive number of hertz");
  }
  read_supervisor(root.map("supervisor"), m);
  YamlMap barrier = root.map("barrier");
  m.barrier_latency_cycles = barrier.required_unsigned<uint32_t>("latency_cycles");
  barrier.finish();
  read_exchange(root.map("exchange"), m);
  root.finish();
  return m;
}

MachineDescription load_machine_at_depth(const std::string& source, int depth, const std::string& relative_to);

MachineDescription parse_at_depth(const std::string& text, const std::string& file, int depth) {
  YamlMap root(parse_yaml_text(text, file), file, "");
  MachineDescription m;
  if (root.has("base")) {
    // A derived machine: same chip, a different name and tile count.
    for (const auto& entry : root.node()) {
      const std::string key = entry.first.IsScalar() ? entry.first.Scalar() : "?";
      if (key != "base" && key != "name" && key != "tiles") {
        yaml_fail(file, entry.first, key, "a file with 'base:' may override only name and tiles");
      }
    }
    const std::string base = root.string("base");
    if (depth >= kMaxBaseDepth) {
      fail_at(root, "base", "'" + base + "': bases nest deeper than " + std::to_string(kMaxBaseDepth) + " (a cycle?)");
    }
    m = load_machine_at_depth(base, depth + 1, file);
    m.name = root.string("name");
    check_name(root, m.name);
    if (root.has("tiles")) read_tiles(root, m);
    root.finish();
  } else {
    m = parse_full(root);
  }
  m.digest = machine_digest(m);
  return m;
}

bool looks_like_path(const std::string& source) {
  return source.find('/') != std::string::npos || source.ends_with(".yaml") || source.ends_with(".yml");
}

MachineDescription load_machine_at_depth(const std::string& source, int depth, const std::string& relative_to) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (fs::is_regular_file(source, ec)) return parse_at_depth(read_text_file(source), source, depth);
  if (looks_like_path(source)) {
    // A base given as a path is looked up next to the file that names it, too.
    if (!relative_to.empty() && fs::path(source).is_relative()) {
      const fs::path beside = fs::path(relative_to).parent_path() / source;
      if (fs::is_regular_file(beside, ec)) {
        return parse_at_depth(read_text_file(beside.string()), beside.string(), depth);
      }
    }
    return parse_at_depth(read_text_file(source), source, depth);
  }
  const std::string embedded = "configs/machines/" + source + ".yaml";
  if (fs::is_regular_file(embedded, ec) || embedded_configs().count(embedded)) {
    return parse_at_depth(read_text_file(embedded), embedded, depth);
  }
  std::string known;
  for (const auto& [path, text] : embedded_configs()) {
    if (path.starts_with("configs/machines/") && path.ends_with(".yaml")) {
      known += (known.empty() ? "" : ", ") + path.substr(17, path.size() - 17 - 5);
    }
  }
  throw InputError(source + ": no such machine file, nor an embedded machine (embedded: " + known + ")");
}

}  // namespace

uint32_t MachineDescription::element_of(uint32_t address) const {
  if (address < interleaved_base) return address / element_bytes;
  return interleaved_base / element_bytes + (address - interleaved_base) / interleaved_element_bytes;
}

bool MachineDescription::in_sram(uint32_t address, uint64_t bytes) const {
  return address >= sram_base && uint64_t{address} + bytes <= uint64_t{sram_end};
}

MachineDescription parse_machine_yaml(const std::string& text, const std::string& file_name) {
  return parse_at_depth(text, file_name, 0);
}

MachineDescription load_machine(const std::string& source) { return load_machine_at_depth(source, 0, ""); }

std::string machine_to_yaml(const MachineDescription& m) {
  char clock[40];
  std::snprintf(clock, sizeof clock, "%.17g", m.clock_hz);
  const RouteTiming& r = m.route;
  std::string t;
  t += "name: " + m.name + "\n";
  t += "tiles: " + std::to_string(m.tiles) + "\n";
  t += "chip_tiles: " + std::to_string(m.chip_tiles) + "\n";
  t += "tile_mapping: c600\n";
  t += "memory:\n";
  t += "  base: " + hex(m.sram_base) + "\n";
  t += "  end: " + hex(m.sram_end) + "\n";
  t += "  element_bytes: " + hex(m.element_bytes) + "\n";
  t += "  interleaved_base: " + hex(m.interleaved_base) + "\n";
  t += "  interleaved_element_bytes: " + hex(m.interleaved_element_bytes) + "\n";
  t += "  row_region_end: " + hex(m.row_region_end) + "\n";
  t += "  loader_limit: " + hex(m.loader_limit) + "\n";
  t += "  fetch_lookahead_bytes: " + std::to_string(m.fetch_lookahead_bytes) + "\n";
  t += std::string("clock_hz: ") + clock + "\n";
  t += "supervisor:\n";
  t += "  cycles_per_instruction: " + std::to_string(m.supervisor_cycles_per_instruction) + "\n";
  t += "  workers: " + std::to_string(m.workers) + "\n";
  t += "  bulk_patch_threshold_words: " + std::to_string(m.bulk_patch_threshold_words) + "\n";
  t += "barrier:\n";
  t += "  latency_cycles: " + std::to_string(m.barrier_latency_cycles) + "\n";
  t += "exchange:\n";
  t += "  neutral_mux: " + hex(m.neutral_mux) + "\n";
  t += "  ttm_offset: " + std::to_string(r.ttm_offset) + "\n";
  t += "  write_delay_base: " + std::to_string(r.write_delay_base) + "\n";
  t += "  write_delay_per_row: " + std::to_string(r.write_delay_per_row) + "\n";
  t += "  paired_write_delay_base: " + std::to_string(r.paired_write_delay_base) + "\n";
  t += "  receive_tail_events: " + std::to_string(r.receive_tail_events) + "\n";
  return t;
}

std::string machine_digest(const MachineDescription& machine) {
  // FNV-1a 64, written out here so the machine layer does not depend on the package layer.
  uint64_t h = 0xcbf29ce484222325ull;
  for (const char ch : machine_to_yaml(machine)) {
    h ^= static_cast<uint8_t>(ch);
    h *= 0x100000001b3ull;
  }
  char text[20];
  std::snprintf(text, sizeof text, "%016llx", static_cast<unsigned long long>(h));
  return text;
}

}  // namespace lockstep::arch
