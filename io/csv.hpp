#pragma once
// CSV as RFC 4180 has it: fields that hold a comma, a double quote, CR or LF are quoted
// (quotes doubled), so a label can never shift a column; reading undoes exactly that.
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace lockstep::arch {

// `field` as it goes into a CSV line: as is, or quoted when it needs to be.
std::string csv_field(std::string_view field);

struct CsvRecord {
  size_t line = 0;                  // where the record starts (1-based)
  bool blank = false;               // an empty line
  std::vector<std::string> fields;  // unquoted
};

// The records of `text` (LF or CRLF line ends; the last line end optional). InputError
// "file:line: csv: what" for a quote inside an unquoted field, text after a closing quote
// or a quoted field that never closes.
std::vector<CsvRecord> parse_csv(std::string_view text, const std::string& file_name);

}  // namespace lockstep::arch
