#include "io/csv.hpp"

#include "io/errors.hpp"

namespace lockstep::arch {

std::string csv_field(std::string_view field) {
  if (field.find_first_of(",\"\r\n") == std::string_view::npos) return std::string(field);
  std::string quoted = "\"";
  for (char c : field) {
    if (c == '"') quoted += '"';
    quoted += c;
  }
  return quoted + "\"";
}

namespace {

// Reads one record starting at `at` (just after the previous line end); leaves `at` after
// this record's line end and counts the lines it crossed.
class CsvScanner {
 public:
  CsvScanner(std::string_view text, const std::string& file) : text_(text), file_(file) {}

  bool done() const { return at_ >= text_.size(); }

  CsvRecord next() {
    CsvRecord record;
    record.line = line_;
    record.blank = at_ < text_.size() && (text_[at_] == '\n' || text_.substr(at_, 2) == "\r\n");
    while (true) {
      record.fields.push_back(field());
      if (at_ >= text_.size()) return record;
      if (text_[at_] == ',') {
        ++at_;
        continue;
      }
      at_ += text_[at_] == '\r' ? 2 : 1;  // the line end
      ++line_;
      return record;
    }
  }

 private:
  [[noreturn]] void fail(const std::string& what) const {
    throw InputError(file_ + ":" + std::to_string(line_) + ": csv: " + what);
  }

  bool at_line_end() const {
    return text_[at_] == '\n' || (text_[at_] == '\r' && at_ + 1 < text_.size() && text_[at_ + 1] == '\n');
  }

  std::string field() {
    if (at_ < text_.size() && text_[at_] == '"') return quoted();
    std::string out;
    while (at_ < text_.size() && text_[at_] != ',' && !at_line_end()) {
      if (text_[at_] == '"') fail("a double quote inside an unquoted field (quote the whole field)");
      if (text_[at_] == '\r') fail("a carriage return not followed by a line feed");
      out += text_[at_++];
    }
    return out;
  }

  std::string quoted() {
    const size_t opened = line_;
    std::string out;
    ++at_;
    while (true) {
      if (at_ >= text_.size()) {
        throw InputError(file_ + ":" + std::to_string(opened) + ": csv: a quoted field never closes");
      }
      const char c = text_[at_++];
      if (c == '"') {
        if (at_ < text_.size() && text_[at_] == '"') {
          out += '"';
          ++at_;
          continue;
        }
        if (at_ < text_.size() && text_[at_] != ',' && !at_line_end()) {
          fail("text after a closing double quote");
        }
        return out;
      }
      if (c == '\n') ++line_;
      out += c;
    }
  }

  std::string_view text_;
  const std::string& file_;
  size_t at_ = 0;
  size_t line_ = 1;
};

}  // namespace

std::vector<CsvRecord> parse_csv(std::string_view text, const std::string& file_name) {
  std::vector<CsvRecord> records;
  CsvScanner scanner(text, file_name);
  while (!scanner.done()) records.push_back(scanner.next());
  return records;
}

}  // namespace lockstep::arch
