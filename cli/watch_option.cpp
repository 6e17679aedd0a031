#include "cli/watch_option.hpp"

#include <cstdio>

#include "io/errors.hpp"
#include "io/hex.hpp"

namespace lockstep::cli {
namespace watch_option_local {

uint64_t number(const std::string& text, const std::string& spec) {
  size_t used = 0;
  uint64_t value = 0;
  try {
    value = std::stoull(text, &used, 0);
  } catch (const std::exception&) {
    used = 0;
  }
  if (text.empty() || used != text.size() || text[0] == '-' || value > UINT32_MAX)
    throw InputError("--watch " + spec + ": '" + text + "' is not a number (decimal or 0x hex, at most 32 bits)");
  return value;
}

std::string word(uint32_t value) {
  char text[16];
  std::snprintf(text, sizeof text, "0x%08x", value);
  return text;
}

}  // namespace watch_option_local
using namespace watch_option_local;

void add_watch_option(CLI::App& command, std::vector<std::string>& specs) {
  command.add_option("--watch", specs,
                     "TILE:ADDRESS[:BYTES]: report every write into these words of a logical tile (BYTES\n"
                     "default 4, a multiple of 4; ADDRESS 4-aligned): cycle, phase, iteration, the writer\n"
                     "(loader, exchange from tile S address A, kernel, supervisor store, host phase), old\n"
                     "and new word (repeatable; --json: a \"watch\" list)");
}

std::vector<model::WatchRange> parse_watches(const std::vector<std::string>& specs) {
  std::vector<model::WatchRange> out;
  for (const std::string& spec : specs) {
    std::vector<std::string> parts;
    size_t start = 0;
    for (size_t colon = spec.find(':');; colon = spec.find(':', start)) {
      parts.push_back(spec.substr(start, colon == std::string::npos ? std::string::npos : colon - start));
      if (colon == std::string::npos) break;
      start = colon + 1;
    }
    if (parts.size() < 2 || parts.size() > 3) throw InputError("--watch " + spec + ": expected TILE:ADDRESS[:BYTES]");
    out.push_back({static_cast<uint32_t>(number(parts[0], spec)), static_cast<uint32_t>(number(parts[1], spec)),
                   parts.size() == 3 ? static_cast<uint32_t>(number(parts[2], spec)) : 4u});
  }
  return out;
}

std::string watch_text(const std::vector<model::WatchWrite>& writes) {
  std::string out;
  for (const model::WatchWrite& w : writes) {
    out += "watch tile " + std::to_string(w.tile) + " " + arch::hex(w.address) + ": cycle " + std::to_string(w.cycle) +
           " phase " + std::to_string(w.phase) + " iteration " + std::to_string(w.iteration) + ": " + w.writer + ": " +
           word(w.old_word) + " -> " + word(w.new_word) + "\n";
  }
  return out;
}

nlohmann::ordered_json watch_json(const std::vector<model::WatchWrite>& writes) {
  nlohmann::ordered_json list = nlohmann::ordered_json::array();
  for (const model::WatchWrite& w : writes) {
    list.push_back({{"tile", w.tile},
                    {"address", w.address},
                    {"cycle", w.cycle},
                    {"phase", w.phase},
                    {"iteration", w.iteration},
                    {"writer", w.writer},
                    {"old", word(w.old_word)},
                    {"new", word(w.new_word)}});
  }
  return list;
}

}  // namespace lockstep::cli
