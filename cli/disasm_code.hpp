#pragma once
// `lockstep disasm PACKAGE --tile T --code`: the tile's supervisor code as the model executes
// it (supervisor/supervisor_code.hpp), with its symbols and the step each sequence lowers.
#include <cstdint>
#include <string>

#include "formats/package.hpp"

namespace lockstep::cli {

// Prints the code area's instructions (data tables and stack are summarised). Returns the
// exit code.
int disasm_code(const arch::Package& package, const std::string& file, uint32_t tile, uint32_t invocations, bool json);

}  // namespace lockstep::cli
