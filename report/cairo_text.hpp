#pragma once
// The page, colour and text on a cairo context, shared by the report's plots and the cross-check's.
#include <cairo.h>

#include <string>

namespace lockstep::replay {

struct Rgb {
  double r, g, b;
};

// A white page whose text is measured unhinted, so that SVG, PDF and PNG place labels alike.
void start_page(cairo_t* cr);
void set_color(cairo_t* cr, Rgb c);
void set_font(cairo_t* cr, double size, bool bold = false);  // DejaVu Sans
double text_width(cairo_t* cr, const std::string& text);
// Text with its left edge at x and its baseline at y; align 0 = left, 0.5 = centre, 1 = right.
void show_text(cairo_t* cr, const std::string& text, double x, double y, double align = 0);

}  // namespace lockstep::replay
