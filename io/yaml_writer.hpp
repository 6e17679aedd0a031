#pragma once
// Scalars for the canonical YAML the package and capture writers emit.
#include <cstdint>
#include <string>

namespace lockstep::arch {

// A double-quoted scalar, so labels with ':' or '#' survive; control bytes as \xNN.
std::string yaml_quoted(const std::string& text);

}  // namespace lockstep::arch
