#pragma once
// Paths of report files. Writing them: io/atomic_file.hpp.
#include <string>

namespace lockstep::replay {

// Joins a directory and a file name ("dir" + "/" + name; just name when dir is empty).
std::string join_path(const std::string& dir, const std::string& name);

}  // namespace lockstep::replay
