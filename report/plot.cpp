// Drawing the per-phase frontier plot on a cairo context.
#include "report/plot.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <utility>

#include "report/cairo_text.hpp"
#include "report/plot_axis.hpp"
#include "report/plot_groups.hpp"
#include "report/plot_labels.hpp"

namespace lockstep::replay {

namespace {

constexpr double kLeft = 95, kRight = kPlotWidth - 35, kTop = 72, kBottom = kPlotHeight - 118;
constexpr double kMarker = 4.5;  // circle radius; triangles are a little larger
constexpr double kRing = 10;     // reference ring radius

constexpr Rgb kInk{0.10, 0.10, 0.12};
constexpr Rgb kMuted{0.38, 0.40, 0.44};
constexpr Rgb kGrid{0.88, 0.89, 0.91};
constexpr Rgb kFrontier{0.12, 0.39, 0.71};
constexpr Rgb kOther{0.50, 0.60, 0.72};
constexpr Rgb kFailed{0.80, 0.12, 0.12};
constexpr Rgb kBound{0.13, 0.50, 0.24};

void marker_path(cairo_t* cr, double x, double y, bool paired) {
  if (paired) {
    const double s = kMarker * 1.35;
    cairo_move_to(cr, x, y - s);
    cairo_line_to(cr, x + s * 0.95, y + s * 0.7);
    cairo_line_to(cr, x - s * 0.95, y + s * 0.7);
    cairo_close_path(cr);
  } else {
    cairo_new_sub_path(cr);
    cairo_arc(cr, x, y, kMarker, 0, 2 * M_PI);
  }
}

void draw_marker(cairo_t* cr, double x, double y, bool paired, bool filled, Rgb color) {
  marker_path(cr, x, y, paired);
  if (filled) {
    set_color(cr, color);
  } else {
    cairo_set_source_rgb(cr, 1, 1, 1);
  }
  cairo_fill_preserve(cr);
  set_color(cr, color);
  cairo_set_line_width(cr, 1.3);
  cairo_stroke(cr);
}

void draw_ring(cairo_t* cr, double x, double y) {
  cairo_new_sub_path(cr);
  cairo_arc(cr, x, y, kRing, 0, 2 * M_PI);
  cairo_set_source_rgb(cr, 0, 0, 0);
  cairo_set_line_width(cr, 1.8);
  cairo_stroke(cr);
}

void draw_frame_and_axes(cairo_t* cr, const AxisScale& xs, const AxisScale& ys) {
  cairo_set_line_width(cr, 1);
  set_font(cr, 11);
  for (double t : xs.ticks) {
    const double x = kLeft + xs.fraction(t) * (kRight - kLeft);
    set_color(cr, kGrid);
    cairo_move_to(cr, x, kTop);
    cairo_line_to(cr, x, kBottom);
    cairo_stroke(cr);
    set_color(cr, kInk);
    cairo_move_to(cr, x, kBottom);
    cairo_line_to(cr, x, kBottom + 5);
    cairo_stroke(cr);
    show_text(cr, tick_text(t), x, kBottom + 19, 0.5);
  }
  for (double t : ys.ticks) {
    const double y = kBottom - ys.fraction(t) * (kBottom - kTop);
    set_color(cr, kGrid);
    cairo_move_to(cr, kLeft, y);
    cairo_line_to(cr, kRight, y);
    cairo_stroke(cr);
    set_color(cr, kInk);
    cairo_move_to(cr, kLeft - 5, y);
    cairo_line_to(cr, kLeft, y);
    cairo_stroke(cr);
    show_text(cr, tick_text(t), kLeft - 8, y + 4, 1);
  }
  set_color(cr, kInk);
  cairo_rectangle(cr, kLeft, kTop, kRight - kLeft, kBottom - kTop);
  cairo_stroke(cr);

  set_font(cr, 12.5);
  show_text(cr, "max row bytes (largest row of any tile in the phase)", (kLeft + kRight) / 2, kBottom + 44, 0.5);
  cairo_save(cr);
  cairo_translate(cr, 26, (kTop + kBottom) / 2);
  cairo_rotate(cr, -M_PI / 2);
  show_text(cr, "horizon (cycles after the barrier)", 0, 0, 0.5);
  cairo_restore(cr);
}

void draw_bound_sample(cairo_t* cr, double x, double y) {
  const double dash[] = {5, 3};
  set_color(cr, kBound);
  cairo_set_line_width(cr, 1.4);
  cairo_set_dash(cr, dash, 2, 0);
  cairo_move_to(cr, x, y);
  cairo_line_to(cr, x + 18, y);
  cairo_stroke(cr);
  cairo_set_dash(cr, nullptr, 0, 0);
}

void draw_legend(cairo_t* cr, const std::string& reference_name, bool bound) {
  set_font(cr, 11);
  const double y = kPlotHeight - 42;
  double x = 30;
  auto item = [&](const std::string& text) {
    set_color(cr, kInk);
    show_text(cr, text, x, y + 4);
    x += text_width(cr, text) + 26;
  };
  // Shapes in ink, fills in colour: the legend keeps the two meanings apart.
  draw_marker(cr, x + 5, y, false, false, kInk);
  x += 15;
  item("word32");
  draw_marker(cr, x + 5, y, true, false, kInk);
  x += 15;
  item("paired64 (name + p)");
  draw_marker(cr, x + 5, y, false, true, kFrontier);
  x += 15;
  item("on the frontier");
  draw_marker(cr, x + 5, y, false, false, kOther);
  x += 15;
  item("dominated");
  draw_marker(cr, x + 5, y, false, false, kFailed);
  x += 15;
  item("payload failed");
  draw_ring(cr, x + 8, y);
  x += 24;
  item("reference " + reference_name);
  if (bound) {
    draw_bound_sample(cr, x, y);
    x += 24;
    item("lower bound");
  }
}

// Text cut in the middle to fit `width` ("Phase 18: layer.enc…attn.qkv").
std::string fit_text(cairo_t* cr, const std::string& text, double width) {
  if (text_width(cr, text) <= width) return text;
  const std::string ellipsis = "\u2026";
  for (size_t keep = text.size(); keep > 2; --keep) {
    const size_t head = (keep + 1) / 2, tail = keep / 2;
    auto continuation = [&](size_t at) { return (static_cast<unsigned char>(text[at]) & 0xc0) == 0x80; };
    if (continuation(head) || continuation(text.size() - tail)) continue;  // whole UTF-8 characters only
    std::string candidate = text.substr(0, head) + ellipsis + text.substr(text.size() - tail);
    if (text_width(cr, candidate) <= width) return candidate;
  }
  return ellipsis;
}

// The footnotes of shortened labels, packed into at most two lines under the legend.
void draw_footnotes(cairo_t* cr, const std::vector<Footnote>& footnotes) {
  if (footnotes.empty()) return;
  set_font(cr, 10);
  set_color(cr, kMuted);
  const double width = kPlotWidth - 60;
  std::vector<std::string> lines(1);
  size_t shown = 0;
  for (const Footnote& f : footnotes) {
    const std::string item = "[" + std::to_string(f.number) + "] " + f.text;
    const std::string joined = lines.back().empty() ? item : lines.back() + "   " + item;
    if (text_width(cr, joined) <= width) {
      lines.back() = joined;
    } else if (lines.size() < 2 && text_width(cr, item) <= width) {
      lines.push_back(item);
    } else {
      break;
    }
    ++shown;
  }
  if (shown < footnotes.size()) lines.back() += "   ... the rest on the phase page";
  for (size_t i = 0; i < lines.size(); ++i) {
    show_text(cr, fit_text(cr, lines[i], width), 30, kPlotHeight - 22 + 13 * static_cast<double>(i));
  }
}

// The dashed lower-bound line across the frame at device height y, labelled at its right
// end; returns the label's box so point labels keep clear of it.
Box draw_bound(cairo_t* cr, double y, double bound) {
  const double dash[] = {5, 3};
  set_color(cr, kBound);
  cairo_set_line_width(cr, 1.4);
  cairo_set_dash(cr, dash, 2, 0);
  cairo_move_to(cr, kLeft, y);
  cairo_line_to(cr, kRight, y);
  cairo_stroke(cr);
  cairo_set_dash(cr, nullptr, 0, 0);
  set_font(cr, 10.5);
  const std::string text = "lower bound " + tick_text(bound);
  const double w = text_width(cr, text);
  // Above the line when there is room inside the frame, else just below it.
  const double baseline = y - 4 > kTop + 12 ? y - 4 : y + 13;
  show_text(cr, text, kRight - 4, baseline, 1);
  return {kRight - 6 - w, baseline - 11, w + 4, 14};
}

}  // namespace

void draw_phase_plot(cairo_t* cr, const PhasePlot& plot) {
  start_page(cr);

  set_color(cr, kInk);
  set_font(cr, 17, true);
  show_text(cr, fit_text(cr, plot.title, kPlotWidth - 20 - kLeft), kLeft, 30);
  set_font(cr, 12);
  set_color(cr, kMuted);
  show_text(cr, fit_text(cr, plot.subtitle, kPlotWidth - 20 - kLeft), kLeft, 52);

  double x_min = 0, x_max = 1, y_min = 0, y_max = 1;
  if (!plot.points.empty()) {
    x_min = x_max = plot.points[0].max_row_bytes;
    y_min = y_max = plot.points[0].horizon;
    for (const auto& p : plot.points) {
      x_min = std::min(x_min, p.max_row_bytes);
      x_max = std::max(x_max, p.max_row_bytes);
      y_min = std::min(y_min, p.horizon);
      y_max = std::max(y_max, p.horizon);
    }
    if (plot.lower_bound) y_min = std::min(y_min, *plot.lower_bound);
  }
  const AxisScale xs = nice_axis(x_min, x_max);
  const AxisScale ys = nice_axis(y_min, y_max);
  draw_frame_and_axes(cr, xs, ys);
  const bool has_bound = plot.lower_bound.has_value() && !plot.points.empty();
  draw_legend(cr, plot.reference_name, has_bound);

  auto to_x = [&](double v) { return kLeft + xs.fraction(v) * (kRight - kLeft); };
  auto to_y = [&](double v) { return kBottom - ys.fraction(v) * (kBottom - kTop); };

  std::vector<Box> obstacles;
  if (has_bound) obstacles.push_back(draw_bound(cr, to_y(*plot.lower_bound), *plot.lower_bound));
  const PlotGroups grouped = group_points(plot.points);
  draw_footnotes(cr, grouped.footnotes);
  struct Group {
    double x = 0, y = 0;  // device units
    std::string label;
    bool reference = false, frontier = false, passed = false;
  };
  std::vector<Group> groups;
  for (const PointGroup& g : grouped.groups) {
    groups.push_back({to_x(g.max_row_bytes), to_y(g.horizon), g.label, g.reference, g.frontier, g.passed});
  }

  // Markers: dominated first, frontier on top, failures last so they stay visible.
  for (int pass = 0; pass < 3; ++pass) {
    for (const PlotPoint& p : plot.points) {
      const int layer = !p.passed ? 2 : (p.on_frontier ? 1 : 0);
      if (layer != pass) continue;
      const Rgb color = !p.passed ? kFailed : (p.on_frontier ? kFrontier : kOther);
      draw_marker(cr, to_x(p.max_row_bytes), to_y(p.horizon), p.paired, p.on_frontier, color);
    }
  }
  for (const Group& g : groups) {
    if (g.reference) draw_ring(cr, g.x, g.y);
  }

  // Labels: the reference first, then frontier points, then the rest.
  std::vector<size_t> order(groups.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    auto rank = [&](const Group& g) { return g.reference ? 0 : (g.frontier ? 1 : 2); };
    return rank(groups[a]) < rank(groups[b]);
  });
  set_font(cr, 10.5);
  cairo_font_extents_t font;
  cairo_font_extents(cr, &font);
  std::vector<LabelRequest> requests;
  for (const Group& g : groups) {
    const double r = g.reference ? kRing + 1 : kMarker + 2;
    obstacles.push_back({g.x - r, g.y - r, 2 * r, 2 * r});
  }
  for (size_t i : order) {
    const Group& g = groups[i];
    requests.push_back(
        {g.x, g.y, text_width(cr, g.label) + 2, font.ascent + font.descent, g.reference ? kRing + 3 : kMarker + 3});
  }
  const Box area{kLeft + 1, kTop + 1, kRight - kLeft - 2, kBottom - kTop - 2};
  const auto placements = place_labels(requests, obstacles, area);
  for (size_t k = 0; k < order.size(); ++k) {
    const Group& g = groups[order[k]];
    const Box& b = placements[k].box;
    if (placements[k].leader) {
      const double cx = std::clamp(g.x, b.x, b.x + b.w);
      const double cy = std::clamp(g.y, b.y, b.y + b.h);
      set_color(cr, kMuted);
      cairo_set_line_width(cr, 0.7);
      cairo_move_to(cr, g.x, g.y);
      cairo_line_to(cr, cx, cy);
      cairo_stroke(cr);
    }
    cairo_set_source_rgba(cr, 1, 1, 1, 0.8);
    cairo_rectangle(cr, b.x, b.y, b.w, b.h);
    cairo_fill(cr);
    set_color(cr, !g.passed ? kFailed : (g.frontier || g.reference ? kInk : kMuted));
    show_text(cr, g.label, b.x + 1, b.y + font.ascent);
  }
}

}  // namespace lockstep::replay
