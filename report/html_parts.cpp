#include "report/html_parts.hpp"

#include <cstdio>

#include "report/html.hpp"

namespace lockstep::replay {

namespace {

// Numbers never break; labels break after their separators (<wbr>), headers at spaces,
// and headings and notes anywhere; a table that is still wider than the page scrolls
// inside its div.scroll instead of running off it.
const char* const kStyle =
    "body{font-family:'DejaVu Sans',Arial,sans-serif;margin:2em;color:#1a1a1f;max-width:1200px}"
    "h1,h2,p{overflow-wrap:anywhere}"
    "div.scroll{max-width:100%;overflow-x:auto;margin:0.5em 0 1.5em}"
    "table{border-collapse:collapse}"
    "th,td{border:1px solid #ccd;padding:3px 5px;text-align:right}"
    "td{white-space:nowrap}td.text,td.wrap{white-space:normal}"
    "th{background:#eef1f5}td.text,th.text{text-align:left}"
    "tr.reference td{font-weight:bold}tr.failed td{color:#c01f1f}"
    "p.note,ol.notes,dl.notes{color:#555;max-width:60em;overflow-wrap:anywhere}"
    "dl.notes dt{font-weight:bold;float:left;margin-right:0.5em}"
    "img{border:1px solid #ccd;max-width:100%;height:auto}";

}  // namespace

std::string page_head(const std::string& title) {
  return "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>" + html_escape(title) +
         "</title>\n<style>" + kStyle + "</style>\n</head>\n<body>\n";
}

std::string breakable(const std::string& text) {
  std::string out;
  for (char c : text) {
    out += html_escape(std::string(1, c));
    if (c == '.' || c == '/' || c == '_' || c == '-') out += "<wbr>";
  }
  return out;
}

std::string text_cell(const std::string& text) { return "<td class=\"text\">" + breakable(text) + "</td>"; }
std::string number_cell(const std::string& text) { return "<td>" + html_escape(text) + "</td>"; }
std::string number_cell(uint64_t value) { return number_cell(std::to_string(value)); }
std::string signed_cell(int64_t value) { return number_cell(std::to_string(value)); }

std::string header_row(const std::vector<std::string>& names, size_t text_columns) {
  std::string out = "<tr>";
  for (size_t i = 0; i < names.size(); ++i) {
    const size_t bar = names[i].find('|');
    const std::string name = names[i].substr(0, bar);
    const std::string tip = bar == std::string::npos ? "" : " title=\"" + html_escape(names[i].substr(bar + 1)) + "\"";
    out += std::string(i < text_columns ? "<th class=\"text\"" : "<th") + tip + ">" + html_escape(name) + "</th>";
  }
  return out + "</tr>\n";
}

std::string link(const std::string& href, const std::string& text) {
  return "<a href=\"" + html_escape(href) + "\">" + html_escape(text) + "</a>";
}

std::string clock_text(double clock_hz) {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, "%g GHz", clock_hz / 1e9);
  return buffer;
}

std::string table_start() { return "<div class=\"scroll\"><table>\n"; }
std::string table_end() { return "</table></div>\n"; }

}  // namespace lockstep::replay
