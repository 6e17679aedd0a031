#include "results/config_name.hpp"

namespace lockstep::replay {

bool is_config_name(const std::string& name) {
  if (name == "latency" || name == "automatic" || name == "remaining-combined") return true;
  if (name.size() < 2 || (name[0] != 'S' && name[0] != 'B')) return false;
  const std::string words = name.substr(1);
  for (char c : words) {
    if (c < '0' || c > '9') return false;
  }
  return words[0] != '0' && words.size() <= 9;
}

}  // namespace lockstep::replay
