#pragma once
// `--watch TILE:ADDRESS[:BYTES]` (run, replay, device simulate): the words to watch, and every
// write into them as text lines or JSON records (model/watch.hpp).
#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "model/watch.hpp"

namespace lockstep::cli {

// Adds the repeatable option; the specs land in `specs`.
void add_watch_option(CLI::App& command, std::vector<std::string>& specs);
// "3:0x60000:16" (BYTES defaults to 4; numbers decimal or 0x hex). InputError naming the spec
// when it is not TILE:ADDRESS[:BYTES]; the backend checks the range against the machine.
std::vector<model::WatchRange> parse_watches(const std::vector<std::string>& specs);
// "watch tile 1 0x70000: cycle 190 phase 1 iteration 0: exchange from tile 0 address 0x60000:
// 0x00000000 -> 0x01400080", one a write.
std::string watch_text(const std::vector<model::WatchWrite>& writes);
nlohmann::ordered_json watch_json(const std::vector<model::WatchWrite>& writes);

}  // namespace lockstep::cli
