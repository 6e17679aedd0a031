// The cross-check report's files.
#include "report/crosscheck_report.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "io/atomic_file.hpp"
#include "io/csv.hpp"
#include "report/crosscheck_plot.hpp"
#include "report/html.hpp"

namespace lockstep::replay {

namespace {

std::string optional_text(const std::optional<uint64_t>& value) { return value ? std::to_string(*value) : ""; }

std::string statistic_text(double value, const char* format) {
  if (std::isnan(value)) return "n/a";
  char text[48];
  std::snprintf(text, sizeof text, format, value);
  return text;
}

std::string cell(const std::string& text, bool is_text = false) {
  return std::string(is_text ? "<td class=\"text\">" : "<td>") + html_escape(text) + "</td>";
}

std::string header(std::initializer_list<const char*> names, size_t text_columns) {
  std::string out = "<tr>";
  size_t i = 0;
  for (const char* name : names) {
    out += std::string(i++ < text_columns ? "<th class=\"text\">" : "<th>") + html_escape(name) + "</th>";
  }
  return out + "</tr>\n";
}

std::string threshold_text(const std::optional<double>& bound) {
  return bound ? percent_text(*bound) + "%" : std::string("none");
}

std::string summary_html(const Crosscheck& c) {
  const ErrorStatistics& s = c.statistics;
  std::string out = "<p>Simulated: <code>" + html_escape(c.simulated_dir) + "</code> (runner " +
                    html_escape(c.simulated.runner) + ", " + html_escape(c.simulated.package) + "). Device: <code>" +
                    html_escape(c.device_dir) + "</code> (runner " + html_escape(c.device.runner) + ", " +
                    html_escape(c.device.package) + ").</p>\n";
  out += "<p><b>" + std::string(c.passed() ? "Passed" : "FAILED") + "</b>. MAPE " +
         statistic_text(s.mape_percent, "%.4f%%") + " over " + std::to_string(s.rows) +
         " phase and kernel rows; Pearson r of log10 cycles " + statistic_text(s.pearson_log, "%.6f") +
         ", of plain cycles " + statistic_text(s.pearson, "%.6f") + ". Bounds on |error|: total " +
         threshold_text(c.thresholds.total_percent) + ", phase " + threshold_text(c.thresholds.phase_percent) +
         ", kernel " + threshold_text(c.thresholds.kernel_percent) + ".</p>\n";
  if (!c.failures.empty()) {
    out += "<ul class=\"failures\">\n";
    for (const auto& f : c.failures) out += "<li>" + html_escape(f) + "</li>\n";
    out += "</ul>\n";
  }
  return out;
}

std::string outputs_table(const Crosscheck& c) {
  std::string out = "<h2>Outputs</h2>\n<table>\n" +
                    header({"binding", "simulated bytes", "device bytes", "equal", "first difference"}, 1);
  for (const auto& o : c.outputs) {
    out += std::string(o.equal() ? "<tr>" : "<tr class=\"failed\">") + cell(o.name, true) +
           cell(optional_text(o.simulated_bytes)) + cell(optional_text(o.device_bytes)) +
           cell(o.equal() ? "yes" : "no") + cell(optional_text(o.first_difference)) + "</tr>\n";
  }
  return out + "</table>\n";
}

std::string rows_table(const Crosscheck& c) {
  std::string out = "<h2>Cycles</h2>\n<table>\n" +
                    header({"kind", "name", "label", "invocation", "epoch", "simulated", "device", "error %"}, 3);
  for (const auto& r : c.rows) {
    const bool phase = r.kind == RowKind::Phase;
    const bool bad = std::find_if(c.failures.begin(), c.failures.end(), [&](const std::string& f) {
                       return f.rfind(r.describe() + ":", 0) == 0;
                     }) != c.failures.end();
    out += std::string(bad ? "<tr class=\"failed\">" : "<tr>") + cell(row_kind_name(r.kind), true) +
           cell(r.name, true) + cell(r.label, true) + cell(phase ? std::to_string(r.invocation) : "") +
           cell(phase ? std::to_string(r.epoch) : "") + cell(optional_text(r.simulated)) +
           cell(optional_text(r.device)) + cell(percent_text(r.error_percent())) + "</tr>\n";
  }
  return out + "</table>\n";
}

}  // namespace

std::string crosscheck_csv_text(const Crosscheck& c) {
  std::string out = "kind,name,label,invocation,epoch,phase,simulated_cycles,device_cycles,error_percent\n";
  for (const auto& r : c.rows) {
    const bool phase = r.kind == RowKind::Phase;
    out += std::string(row_kind_name(r.kind)) + "," + arch::csv_field(r.name) + "," + arch::csv_field(r.label) + "," +
           (phase ? std::to_string(r.invocation) : "") + "," + (phase ? std::to_string(r.epoch) : "") + "," +
           (phase ? std::to_string(r.phase) : "") + "," + optional_text(r.simulated) + "," + optional_text(r.device) +
           "," + percent_text(r.error_percent()) + "\n";
  }
  return out;
}

std::string outputs_csv_text(const Crosscheck& c) {
  std::string out = "binding,simulated_bytes,device_bytes,equal,first_difference\n";
  for (const auto& o : c.outputs) {
    out += arch::csv_field(o.name) + "," + optional_text(o.simulated_bytes) + "," + optional_text(o.device_bytes) +
           "," + (o.equal() ? "yes" : "no") + "," + optional_text(o.first_difference) + "\n";
  }
  return out;
}

std::string crosscheck_html(const Crosscheck& c, const std::string& scatter_svg) {
  std::string svg = scatter_svg;
  if (svg.rfind("<?xml", 0) == 0) svg.erase(0, svg.find("?>") + 2);  // inline: no XML declaration
  return "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta "
         "charset=\"utf-8\">\n<title>Cross-check</title>\n"
         "<style>body{font-family:'DejaVu "
         "Sans',Arial,sans-serif;margin:2em;color:#1a1a1f;max-width:1200px}"
         "table{border-collapse:collapse;margin:0.5em 0 1.5em}th,td{border:1px solid "
         "#ccd;padding:3px 8px;"
         "text-align:right}th{background:#eef1f5}td.text,th.text{text-align:left}tr.failed "
         "td{color:#c01f1f}"
         "ul.failures{color:#c01f1f}</style>\n</head>\n<body>\n<h1>Cross-check: simulation against "
         "device</h1>\n" +
         summary_html(c) + "<div class=\"plot\">" + svg +
         "</div>\n<p>Also as <a href=\"scatter.svg\">SVG</a> and <a href=\"scatter.png\">PNG</a>; "
         "the rows as "
         "<a href=\"crosscheck.csv\">crosscheck.csv</a> and <a "
         "href=\"outputs.csv\">outputs.csv</a>. Error = "
         "(simulated &minus; device) / device &times; 100.</p>\n" +
         outputs_table(c) + rows_table(c) + "</body>\n</html>\n";
}

void write_crosscheck_report(const Crosscheck& c, const std::string& dir) {
  const ScatterFiles plot = render_crosscheck_scatter(c);
  arch::write_file_atomically(dir + "/crosscheck.csv", crosscheck_csv_text(c));
  arch::write_file_atomically(dir + "/outputs.csv", outputs_csv_text(c));
  arch::write_file_atomically(dir + "/scatter.svg", plot.svg);
  arch::write_file_atomically(dir + "/scatter.png", plot.png);
  arch::write_file_atomically(dir + "/index.html", crosscheck_html(c, plot.svg));
}

}  // namespace lockstep::replay
