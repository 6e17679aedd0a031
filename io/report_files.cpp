#include "io/report_files.hpp"

namespace lockstep::replay {

std::string join_path(const std::string& dir, const std::string& name) {
  if (dir.empty()) return name;
  if (dir.back() == '/') return dir + name;
  return dir + "/" + name;
}

}  // namespace lockstep::replay
