#pragma once
// Every file under configs/, compiled into the binary (see cmake/WriteEmbedded.cmake).
#include <map>
#include <string>
#include <string_view>

namespace lockstep::arch {

// Keys are paths relative to the source root, e.g. "configs/machines/ipu21-c600.yaml".
const std::map<std::string, std::string_view>& embedded_configs();

}  // namespace lockstep::arch
