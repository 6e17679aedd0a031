#include "replay/replay_args.hpp"

#include <set>

#include "compiler/compile.hpp"
#include "io/errors.hpp"
#include "results/results.hpp"

namespace lockstep::replay {
namespace {

uint32_t parse_id(const std::string& text, const std::string& whole) {
  if (text.empty() || text.size() > 9 || text.find_first_not_of("0123456789") != std::string::npos) {
    throw InputError("--phases: '" + whole + "': '" + text + "' is not a phase id");
  }
  return static_cast<uint32_t>(std::stoul(text));
}

}  // namespace

std::vector<uint32_t> parse_phase_list(const std::string& text) {
  std::set<uint32_t> ids;
  size_t start = 0;
  while (start <= text.size()) {
    const size_t comma = text.find(',', start);
    const std::string item = text.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    const size_t dash = item.find('-');
    if (dash == std::string::npos) {
      ids.insert(parse_id(item, text));
    } else {
      const uint32_t first = parse_id(item.substr(0, dash), text);
      const uint32_t last = parse_id(item.substr(dash + 1), text);
      if (last < first) throw InputError("--phases: '" + text + "': range " + item + " runs backwards");
      if (last - first > 100000) throw InputError("--phases: '" + text + "': range " + item + " too long");
      for (uint32_t id = first; id <= last; ++id) ids.insert(id);
    }
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return {ids.begin(), ids.end()};
}

PointSpec parse_point_config(const std::string& text, uint32_t phase) {
  static const std::string kPairedSuffix = "+paired";
  PointSpec spec{phase, text, false};
  if (text.size() > kPairedSuffix.size() &&
      text.compare(text.size() - kPairedSuffix.size(), kPairedSuffix.size(), kPairedSuffix) == 0) {
    spec.config = text.substr(0, text.size() - kPairedSuffix.size());
    spec.paired = true;
  } else if (!is_config_name(text) && text.size() > 1 && text.back() == 'p' &&
             is_config_name(text.substr(0, text.size() - 1))) {
    spec.config = text.substr(0, text.size() - 1);
    spec.paired = true;
  }
  if (!is_config_name(spec.config)) {
    throw InputError("--config: '" + text +
                     "': not latency, automatic, remaining-combined, S<W> or B<W> "
                     "(optionally with a p or +paired suffix)");
  }
  compiler::parse_config(spec.compiler_config());  // the compiler must accept it too
  return spec;
}

}  // namespace lockstep::replay
