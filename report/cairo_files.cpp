#include "report/cairo_files.hpp"

#include <cairo-pdf.h>
#include <cairo-svg.h>

#include <cctype>
#include <cmath>
#include <map>
#include <stdexcept>

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

// Draws on a fresh context of `surface`, scaled by `scale`.
void draw_on(cairo_surface_t* surface, double scale, const Drawing& draw) {
  check(cairo_surface_status(surface), "create surface");
  cairo_t* cr = cairo_create(surface);
  cairo_scale(cr, scale, scale);
  draw(cr);
  const cairo_status_t status = cairo_status(cr);
  cairo_destroy(cr);
  check(status, "draw");
}

// Finishes a stream surface, so that every byte of it has been written, and frees it.
void finish(cairo_surface_t* surface, const char* what) {
  cairo_surface_finish(surface);
  const cairo_status_t status = cairo_surface_status(surface);
  cairo_surface_destroy(surface);
  check(status, what);
}

}  // namespace

std::string svg_bytes(double width, double height, const Drawing& draw) {
  std::string bytes;
  cairo_surface_t* svg = cairo_svg_surface_create_for_stream(append_bytes, &bytes, width, height);
  cairo_svg_surface_restrict_to_version(svg, CAIRO_SVG_VERSION_1_1);
  draw_on(svg, 1.0, draw);
  finish(svg, "write SVG");
  return canonical_surface_ids(bytes);
}

std::string png_bytes(double width, double height, double scale, const Drawing& draw) {
  std::string bytes;
  cairo_surface_t* png = cairo_image_surface_create(CAIRO_FORMAT_RGB24, static_cast<int>(std::lround(width * scale)),
                                                    static_cast<int>(std::lround(height * scale)));
  draw_on(png, scale, draw);
  const cairo_status_t status = cairo_surface_write_to_png_stream(png, append_bytes, &bytes);
  cairo_surface_destroy(png);
  check(status, "write PNG");
  return bytes;
}

std::string pdf_bytes(double width, double height, const std::string& title, const Drawing& draw) {
  std::string bytes;
  cairo_surface_t* pdf = cairo_pdf_surface_create_for_stream(append_bytes, &bytes, width, height);
  cairo_pdf_surface_set_metadata(pdf, CAIRO_PDF_METADATA_CREATE_DATE, nullptr);
  cairo_pdf_surface_set_metadata(pdf, CAIRO_PDF_METADATA_TITLE, title.c_str());
  draw_on(pdf, 1.0, draw);
  finish(pdf, "write PDF");
  return bytes;
}

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

}  // namespace lockstep::replay
