#pragma once
// One drawing rendered to the bytes of an SVG, a PNG or a PDF through cairo's stream
// surfaces, the same bytes on every run; shared by the report's plots and the cross-check's.
#include <cairo.h>

#include <functional>
#include <string>

namespace lockstep::replay {

// Draws on a context already scaled to the drawing's own units.
using Drawing = std::function<void(cairo_t*)>;

// SVG 1.1, its groups numbered from 1 (canonical_surface_ids).
std::string svg_bytes(double width, double height, const Drawing& draw);
// RGB, `scale` pixels to the drawing's unit.
std::string png_bytes(double width, double height, double scale, const Drawing& draw);
// With `title` and no creation date, which would change the bytes from run to run.
std::string pdf_bytes(double width, double height, const std::string& title, const Drawing& draw);

// cairo names an SVG's groups after its surfaces' process-wide serial numbers
// (id="surface153"), which depend on how many surfaces the process made before: renumbered
// 1, 2, ... in order of first appearance, so that the bytes depend on the drawing only.
std::string canonical_surface_ids(const std::string& svg);

}  // namespace lockstep::replay
