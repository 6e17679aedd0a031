#pragma once
// Pieces every report page is built from: the page head with its style sheet, cells,
// header rows, links, and the scrolling wrapper that keeps wide tables inside the page.
#include <cstdint>
#include <string>
#include <vector>

namespace lockstep::replay {

// <!DOCTYPE html> ... <body>, with the report's style sheet (no external resources).
std::string page_head(const std::string& title);

// Escaped, with a line-break opportunity (<wbr>) after each '.', '/', '_' and '-'.
std::string breakable(const std::string& text);

std::string text_cell(const std::string& text);    // left-aligned, breakable()
std::string number_cell(const std::string& text);  // right-aligned
std::string number_cell(uint64_t value);
std::string signed_cell(int64_t value);

// A header row; the first `text_columns` are left-aligned. A name may carry a tooltip
// after a '|': "row+64|max row grows by at most 64 bytes".
std::string header_row(const std::vector<std::string>& names, size_t text_columns);

std::string link(const std::string& href, const std::string& text);

// "1.5 GHz".
std::string clock_text(double clock_hz);

// <div class="scroll"><table> ... and its end: a table wider than the page scrolls
// inside its box instead of running off the page.
std::string table_start();
std::string table_end();

}  // namespace lockstep::replay
