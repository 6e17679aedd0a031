#include "replay/report_files.hpp"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>

#include "arch/errors.hpp"

namespace lockstep::replay {

void write_file_atomically(const std::string& path, const std::string& bytes) {
  const std::string temp = path + ".tmp";
  {
    std::ofstream out(temp, std::ios::binary | std::ios::trunc);
    if (!out) throw InputError(path + ": cannot write: " + std::strerror(errno));
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    out.flush();
    if (!out) {
      std::remove(temp.c_str());
      throw InputError(path + ": cannot write: " + std::strerror(errno));
    }
  }
  if (std::rename(temp.c_str(), path.c_str()) != 0) {
    const std::string why = std::strerror(errno);
    std::remove(temp.c_str());
    throw InputError(path + ": cannot rename the temporary file into place: " + why);
  }
}

std::string join_path(const std::string& dir, const std::string& name) {
  if (dir.empty()) return name;
  if (dir.back() == '/') return dir + name;
  return dir + "/" + name;
}

}  // namespace lockstep::replay
