#pragma once
// Text for an HTML page: the one escaping every page writer uses (reports, the profile
// timeline, the cross-check page).
#include <string>

namespace lockstep::arch {

// Escapes &, <, >, " for text and attribute values.
std::string html_escape(const std::string& text);

}  // namespace lockstep::arch
