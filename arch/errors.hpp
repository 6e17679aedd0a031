#pragma once
// Error kinds shared by every layer. The command maps them to exit codes:
// InputError -> 2 (bad input), everything else that escapes -> 3 (internal).
#include <cstdio>
#include <stdexcept>
#include <string>
#include <string_view>

namespace lockstep {

// Bad input from a user: a file, a key, a flag. The message is one line of the form
// "file:line: key.path: what is wrong" (line and key where they are known).
class InputError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// The compiler produced something it cannot stand behind (a stage check failed).
// Names the stage, phase, tile and event. Exit 3: it is our bug, not the user's.
class CompilerError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// `text` safe to print on a terminal as one line: control characters (escape sequences,
// carriage returns, line feeds, DEL) from a file or an argument become \xNN.
inline std::string printable(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (const char c : text) {
    const auto byte = static_cast<unsigned char>(c);
    if (byte < 0x20 || byte == 0x7f) {
      char escaped[5];
      std::snprintf(escaped, sizeof escaped, "\\x%02x", byte);
      out += escaped;
    } else {
      out += c;
    }
  }
  return out;
}

}  // namespace lockstep
