// Rendering one drawing to SVG, PNG and PDF bytes through cairo's stream surfaces.
#include <cairo-pdf.h>
#include <cairo-svg.h>

#include <cctype>
#include <cmath>
#include <map>
#include <stdexcept>

#include "report/plot.hpp"

namespace lockstep::replay {

namespace {

cairo_status_t append_bytes(void* closure, const unsigned char* data, unsigned int length) {
  static_cast<std::string*>(closure)->append(reinterpret_cast<const char*>(data), length);
  return CAIRO_STATUS_SUCCESS;
}

void check(cairo_status_t status, const char* what) {
  if (status != CAIRO_STATUS_SUCCESS) {
    throw std::runtime_error(std::string("cairo: ") + what + ": " + cairo_status_to_string(status));
  }
}

// Draws on a fresh context of `surface`, then finishes the surface so every byte of a
// stream surface has been written.
void draw_on(cairo_surface_t* surface, const PhasePlot& plot, double scale) {
  check(cairo_surface_status(surface), "create surface");
  cairo_t* cr = cairo_create(surface);
  cairo_scale(cr, scale, scale);
  draw_phase_plot(cr, plot);
  const cairo_status_t status = cairo_status(cr);
  cairo_destroy(cr);
  check(status, "draw");
}

// cairo names an SVG's groups after its surfaces' process-wide serial numbers
// (id="surface153"), which depend on how many surfaces the process made before. Renumber
// them 1, 2, ... in order of first appearance so the bytes depend on the drawing only.
std::string canonical_surface_ids(const std::string& svg) {
  static const std::string kWord = "surface";
  std::map<std::string, std::string> renamed;
  std::string out;
  out.reserve(svg.size());
  size_t at = 0;
  while (true) {
    const size_t hit = svg.find(kWord, at);
    if (hit == std::string::npos) break;
    size_t end = hit + kWord.size();
    while (end < svg.size() && std::isdigit(static_cast<unsigned char>(svg[end]))) ++end;
    out.append(svg, at, hit - at);
    if (end == hit + kWord.size()) {
      out += kWord;
    } else {
      const std::string number = svg.substr(hit + kWord.size(), end - hit - kWord.size());
      auto [it, inserted] = renamed.try_emplace(number, std::to_string(renamed.size() + 1));
      out += kWord + it->second;
    }
    at = end;
  }
  out.append(svg, at, std::string::npos);
  return out;
}

}  // namespace

PlotFiles render_phase_plot(const PhasePlot& plot) {
  PlotFiles files;

  cairo_surface_t* svg = cairo_svg_surface_create_for_stream(append_bytes, &files.svg, kPlotWidth, kPlotHeight);
  cairo_svg_surface_restrict_to_version(svg, CAIRO_SVG_VERSION_1_1);
  draw_on(svg, plot, 1.0);
  cairo_surface_finish(svg);
  const cairo_status_t svg_status = cairo_surface_status(svg);
  cairo_surface_destroy(svg);
  check(svg_status, "write SVG");
  files.svg = canonical_surface_ids(files.svg);

  cairo_surface_t* pdf = cairo_pdf_surface_create_for_stream(append_bytes, &files.pdf, kPlotWidth, kPlotHeight);
  // A PDF records its creation date by default; leaving it out keeps the bytes
  // identical from run to run.
  cairo_pdf_surface_set_metadata(pdf, CAIRO_PDF_METADATA_CREATE_DATE, nullptr);
  cairo_pdf_surface_set_metadata(pdf, CAIRO_PDF_METADATA_TITLE, plot.title.c_str());
  draw_on(pdf, plot, 1.0);
  cairo_surface_finish(pdf);
  const cairo_status_t pdf_status = cairo_surface_status(pdf);
  cairo_surface_destroy(pdf);
  check(pdf_status, "write PDF");

  const int width = static_cast<int>(std::lround(kPlotWidth * kPngScale));
  const int height = static_cast<int>(std::lround(kPlotHeight * kPngScale));
  cairo_surface_t* png = cairo_image_surface_create(CAIRO_FORMAT_RGB24, width, height);
  draw_on(png, plot, kPngScale);
  const cairo_status_t png_status = cairo_surface_write_to_png_stream(png, append_bytes, &files.png);
  cairo_surface_destroy(png);
  check(png_status, "write PNG");
  return files;
}

}  // namespace lockstep::replay
