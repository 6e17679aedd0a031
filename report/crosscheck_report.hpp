#pragma once
// The cross-check report folder: crosscheck.csv (a line per cycle row), outputs.csv (a line
// per output binding), scatter.svg and scatter.png, and index.html, which holds everything
// itself (the plot inline), so it can be mailed alone.
#include <string>

#include "sim/device/crosscheck.hpp"

namespace lockstep::replay {

// kind,name,label,invocation,epoch,phase,simulated_cycles,device_cycles,error_percent
std::string crosscheck_csv_text(const Crosscheck& check);
// binding,simulated_bytes,device_bytes,equal,first_difference
std::string outputs_csv_text(const Crosscheck& check);
// The page; `scatter_svg` is inlined.
std::string crosscheck_html(const Crosscheck& check, const std::string& scatter_svg);

// Writes every file into the existing folder `dir` (atomically each; index.html last).
void write_crosscheck_report(const Crosscheck& check, const std::string& dir);

}  // namespace lockstep::replay
