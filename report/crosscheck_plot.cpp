// Drawing the cross-check scatter plot (log-log, y = x) and rendering it to SVG and PNG.
#include "report/crosscheck_plot.hpp"

#include <cairo.h>

#include <algorithm>
#include <cmath>

#include "report/cairo_files.hpp"
#include "report/cairo_text.hpp"
#include "report/plot_axis.hpp"
#include "report/plot_labels.hpp"

namespace lockstep::replay {

namespace {

constexpr double kWidth = 900, kHeight = 640, kPngScale = 1.5;
constexpr double kLeft = 105, kRight = kWidth - 35, kTop = 72, kBottom = kHeight - 100;
constexpr size_t kLabelled = 6;  // the rows with the largest |error| get a label

constexpr Rgb kInk{0.10, 0.10, 0.12}, kMuted{0.38, 0.40, 0.44}, kGrid{0.88, 0.89, 0.91};
constexpr Rgb kPhase{0.12, 0.39, 0.71}, kKernel{0.85, 0.45, 0.10}, kTotal{0.10, 0.10, 0.12};

Rgb color_of(RowKind kind) { return kind == RowKind::Phase ? kPhase : kind == RowKind::Kernel ? kKernel : kTotal; }

// Decades covering [lo, hi] (at least one), as powers of ten.
struct LogAxis {
  int first = 0, last = 1;
  double fraction(double value) const { return (std::log10(value) - first) / double(last - first); }
};

LogAxis log_axis(double lo, double hi) {
  LogAxis axis;
  axis.first = static_cast<int>(std::floor(std::log10(lo)));
  axis.last = std::max(axis.first + 1, static_cast<int>(std::ceil(std::log10(hi))));
  return axis;
}

std::string decade_text(int power) {
  if (power >= 0 && power <= 6) return tick_text(std::pow(10.0, power));
  return "1e" + std::to_string(power);
}

double px(const LogAxis& a, double v) { return kLeft + a.fraction(v) * (kRight - kLeft); }
double py(const LogAxis& a, double v) { return kBottom - a.fraction(v) * (kBottom - kTop); }

void draw_axes(cairo_t* cr, const LogAxis& axis) {
  cairo_set_line_width(cr, 1);
  set_font(cr, 11);
  for (int p = axis.first; p <= axis.last; ++p) {
    const double v = std::pow(10.0, p);
    set_color(cr, kGrid);
    cairo_move_to(cr, px(axis, v), kTop);
    cairo_line_to(cr, px(axis, v), kBottom);
    cairo_move_to(cr, kLeft, py(axis, v));
    cairo_line_to(cr, kRight, py(axis, v));
    cairo_stroke(cr);
    set_color(cr, kInk);
    show_text(cr, decade_text(p), px(axis, v), kBottom + 19, 0.5);
    show_text(cr, decade_text(p), kLeft - 8, py(axis, v) + 4, 1);
  }
  set_color(cr, kInk);
  cairo_rectangle(cr, kLeft, kTop, kRight - kLeft, kBottom - kTop);
  cairo_stroke(cr);
  // y = x: the diagonal of the square decade grid.
  cairo_set_source_rgb(cr, 0.55, 0.55, 0.58);
  const double dash[] = {5, 4};
  cairo_set_dash(cr, dash, 2, 0);
  cairo_move_to(cr, kLeft, kBottom);
  cairo_line_to(cr, kRight, kTop);
  cairo_stroke(cr);
  cairo_set_dash(cr, nullptr, 0, 0);
  set_font(cr, 12.5);
  set_color(cr, kInk);
  show_text(cr, "simulated cycles (log)", (kLeft + kRight) / 2, kBottom + 44, 0.5);
  cairo_save(cr);
  cairo_translate(cr, 26, (kTop + kBottom) / 2);
  cairo_rotate(cr, -M_PI / 2);
  show_text(cr, "device cycles (log)", 0, 0, 0.5);
  cairo_restore(cr);
}

void draw_legend(cairo_t* cr) {
  set_font(cr, 11);
  double x = kLeft;
  const double y = kHeight - 26;
  for (RowKind kind : {RowKind::Phase, RowKind::Kernel, RowKind::Total}) {
    set_color(cr, color_of(kind));
    cairo_new_sub_path(cr);
    cairo_arc(cr, x + 5, y, 4.5, 0, 2 * M_PI);
    cairo_fill(cr);
    set_color(cr, kInk);
    const std::string text = std::string(row_kind_name(kind)) + (kind == RowKind::Total ? "" : "s");
    show_text(cr, text, x + 15, y + 4);
    x += 15 + text_width(cr, text) + 26;
  }
  set_color(cr, kMuted);
  show_text(cr, "dashed: y = x (simulation exact)", x, y + 4);
}

std::string subtitle(const Crosscheck& c, size_t plotted) {
  const size_t left_out = c.rows.size() - plotted;
  auto number = [](double v, const char* unit) {
    if (std::isnan(v)) return std::string("n/a");
    char text[48];
    std::snprintf(text, sizeof text, "%.4g%s", v, unit);
    return std::string(text);
  };
  return std::to_string(plotted) + " rows; MAPE " + number(c.statistics.mape_percent, "%") +
         " over phases and kernels; Pearson r of log cycles " + number(c.statistics.pearson_log, "") +
         (left_out > 0 ? "; " + std::to_string(left_out) + " left out (zero or missing)" : "");
}

void draw_scatter(cairo_t* cr, const Crosscheck& c) {
  start_page(cr);

  std::vector<const CycleRow*> rows;
  double lo = 1, hi = 10;
  for (const auto& row : c.rows) {
    if (!row.simulated || !row.device || *row.simulated == 0 || *row.device == 0) continue;
    const double a = double(*row.simulated), b = double(*row.device);
    lo = rows.empty() ? std::min(a, b) : std::min({lo, a, b});
    hi = rows.empty() ? std::max(a, b) : std::max({hi, a, b});
    rows.push_back(&row);
  }
  set_color(cr, kInk);
  set_font(cr, 17, true);
  show_text(cr, "Simulated against device cycles", kLeft, 30);
  set_font(cr, 12);
  set_color(cr, kMuted);
  show_text(cr, subtitle(c, rows.size()), kLeft, 52);
  const LogAxis axis = log_axis(lo, hi);
  draw_axes(cr, axis);
  draw_legend(cr);

  std::vector<Box> markers;
  for (const CycleRow* row : rows) {
    const double x = px(axis, double(*row->simulated)), y = py(axis, double(*row->device));
    set_color(cr, color_of(row->kind));
    cairo_new_sub_path(cr);
    cairo_arc(cr, x, y, 4.5, 0, 2 * M_PI);
    cairo_fill(cr);
    markers.push_back({x - 5, y - 5, 10, 10});
  }
  // Labels: the total, then the rows furthest from y = x.
  std::vector<const CycleRow*> labelled(rows);
  std::stable_sort(labelled.begin(), labelled.end(), [](const CycleRow* a, const CycleRow* b) {
    if ((a->kind == RowKind::Total) != (b->kind == RowKind::Total)) return a->kind == RowKind::Total;
    return std::fabs(a->error_percent()) > std::fabs(b->error_percent());
  });
  labelled.resize(std::min(labelled.size(), kLabelled));
  set_font(cr, 10.5);
  std::vector<LabelRequest> requests;
  std::vector<std::string> texts;
  for (const CycleRow* row : labelled) {
    // Phase rows as the stack's query tool names them: "phase P/E" (and the invocation).
    const std::string name = row->kind != RowKind::Phase
                                 ? row->name
                                 : row->name + "/" + std::to_string(row->epoch) +
                                       (row->invocation > 0 ? " inv " + std::to_string(row->invocation) : "");
    texts.push_back(name + " " + percent_text(row->error_percent()) + "%");
    requests.push_back(
        {px(axis, double(*row->simulated)), py(axis, double(*row->device)), text_width(cr, texts.back()), 13});
  }
  const auto placed = place_labels(requests, markers, {kLeft + 2, kTop + 2, kRight - kLeft - 4, kBottom - kTop - 4});
  for (size_t i = 0; i < placed.size(); ++i) {
    const Box& box = placed[i].box;
    if (placed[i].leader) {
      set_color(cr, kMuted);
      cairo_set_line_width(cr, 0.8);
      cairo_move_to(cr, requests[i].anchor_x, requests[i].anchor_y);
      cairo_line_to(cr, std::clamp(requests[i].anchor_x, box.x, box.x + box.w),
                    std::clamp(requests[i].anchor_y, box.y, box.y + box.h));
      cairo_stroke(cr);
    }
    set_color(cr, kInk);
    show_text(cr, texts[i], box.x, box.y + 10);
  }
}

}  // namespace

ScatterFiles render_crosscheck_scatter(const Crosscheck& check_result) {
  const Drawing draw = [&](cairo_t* cr) { draw_scatter(cr, check_result); };
  ScatterFiles files;
  files.svg = svg_bytes(kWidth, kHeight, draw);
  files.png = png_bytes(kWidth, kHeight, kPngScale, draw);
  return files;
}

}  // namespace lockstep::replay
