#pragma once
// The per-phase frontier plot: horizon (y) against max row bytes (x), one labelled point
// per configuration. Drawn once by draw_phase_plot on any cairo context, then rendered to
// SVG, PNG and PDF from that one drawing so the three files always agree.
#include <cairo.h>

#include <optional>
#include <string>
#include <vector>

namespace lockstep::replay {

struct PlotPoint {
  std::string name;  // B256, or B256p for the paired-width alternative
  double max_row_bytes = 0;
  double horizon = 0;
  bool paired = false;       // drawn as a triangle
  bool on_frontier = false;  // filled marker
  bool passed = true;        // payload check; failures are drawn in red
  bool reference = false;    // ringed in black
};

struct PhasePlot {
  std::string title;     // e.g. "Phase 18: layer.attn.qkv"
  std::string subtitle;  // e.g. "executed 27 times; reference B1024"
  std::string reference_name;
  std::vector<PlotPoint> points;
  // The phase's lower bound on the horizon (a horizon no schedule can beat), drawn as a
  // dashed line across the plot; the y axis always reaches down to it.
  std::optional<double> lower_bound;
};

// Size of the drawing in user units (points for PDF/SVG; the PNG is scaled up).
inline constexpr double kPlotWidth = 900;
inline constexpr double kPlotHeight = 600;
inline constexpr double kPngScale = 1.5;

// Draws the whole plot into a kPlotWidth x kPlotHeight user space.
void draw_phase_plot(cairo_t* cr, const PhasePlot& plot);

// The three renderings, as file bytes. Deterministic: no dates, no random ids.
struct PlotFiles {
  std::string svg;
  std::string png;
  std::string pdf;
};
PlotFiles render_phase_plot(const PhasePlot& plot);

}  // namespace lockstep::replay
