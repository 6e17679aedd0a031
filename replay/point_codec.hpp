#pragma once
// Point results as bytes, to cross a pipe (worker processes) or MPI (ranks) unchanged.
#include <string>
#include <string_view>

#include "replay/point.hpp"

namespace lockstep::replay {

std::string encode_point_result(const PointResult& result);
// Throws std::runtime_error on truncated or malformed bytes.
PointResult decode_point_result(std::string_view bytes);

}  // namespace lockstep::replay
