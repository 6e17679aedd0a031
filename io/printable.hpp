#pragma once
// Messages echo file contents and arguments; printable() keeps a terminal safe from them.
#include <string>
#include <string_view>

namespace lockstep {

// `text` safe to print on a terminal as one line: control characters (C0, DEL, and C1 such
// as the 8-bit CSI), line ends and bytes that are not valid UTF-8, from a file or an
// argument, become \xNN; valid UTF-8 text is kept.
std::string printable(std::string_view text);

}  // namespace lockstep
