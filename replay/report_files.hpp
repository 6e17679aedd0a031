#pragma once
// Writing report files safely: every output goes to a temporary name first and is then
// renamed, so a reader never sees half a file and an interrupted run leaves the old one.
#include <string>

namespace lockstep::replay {

// Writes `bytes` to `path` via `path`.tmp and rename(2). Throws InputError naming the
// path if the directory cannot be written.
void write_file_atomically(const std::string& path, const std::string& bytes);

// Joins a directory and a file name ("dir" + "/" + name; just name when dir is empty).
std::string join_path(const std::string& dir, const std::string& name);

}  // namespace lockstep::replay
