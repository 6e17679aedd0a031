#include "io/file_names.hpp"

#include <cstdio>

namespace lockstep::arch {

std::string escaped_file_name(const std::string& name) {
  if (name.empty()) return "%";  // never "" (which would name the folder itself)
  std::string escaped;
  for (size_t i = 0; i < name.size(); ++i) {
    const unsigned char c = static_cast<unsigned char>(name[i]);
    const bool safe = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' ||
                      c == '-' || (c == '.' && i > 0);
    if (safe) {
      escaped += static_cast<char>(c);
    } else {
      char hex[4];
      std::snprintf(hex, sizeof hex, "%%%02X", c);
      escaped += hex;
    }
  }
  return escaped;
}

}  // namespace lockstep::arch
