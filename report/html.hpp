#pragma once
// The report's HTML: index.html (comparisons and the list of phases) and one page per
// phase (its plot and its rows). Pages link only to files beside them, by relative name.
#include <string>
#include <vector>

#include "io/html_escape.hpp"
#include "report/report_view.hpp"

namespace lockstep::replay {

using arch::html_escape;

// File names of a phase's page and plot files: phase-18.html, phase-18.svg, ...
std::string phase_file(uint32_t phase, const std::string& extension);

std::string index_html(const ReportView& view);
// The page of phases[p]; links to its neighbours.
std::string phase_html(const ReportView& view, size_t p);

}  // namespace lockstep::replay
