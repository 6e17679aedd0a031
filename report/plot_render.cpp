// A phase's plot rendered to SVG, PNG and PDF bytes.
#include "report/cairo_files.hpp"
#include "report/plot.hpp"

namespace lockstep::replay {

PlotFiles render_phase_plot(const PhasePlot& plot) {
  const Drawing draw = [&](cairo_t* cr) { draw_phase_plot(cr, plot); };
  PlotFiles files;
  files.svg = svg_bytes(kPlotWidth, kPlotHeight, draw);
  files.pdf = pdf_bytes(kPlotWidth, kPlotHeight, plot.title, draw);
  files.png = png_bytes(kPlotWidth, kPlotHeight, kPngScale, draw);
  return files;
}

}  // namespace lockstep::replay
