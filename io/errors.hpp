#pragma once
// Error kinds shared by every layer. The command maps them to exit codes:
// InputError -> 2 (bad input), everything else that escapes -> 3 (internal).
#include <stdexcept>
#include <string>

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

}  // namespace lockstep
