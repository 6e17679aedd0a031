#include "cli/capture_stats_output.hpp"

#include "io/csv.hpp"

namespace lockstep::cli {

void print_phase_stats_csv(const std::vector<arch::CapturePhaseStats>& phases, std::ostream& out) {
  out << "phase,label,execution_count,iterations,transfers,destinations,words,words_delivered\n";
  for (const auto& p : phases) {
    out << p.id << "," << arch::csv_field(p.label) << "," << p.execution_count << "," << p.iterations << ","
        << p.transfers << "," << p.destinations << "," << p.words << "," << p.words_delivered << "\n";
  }
}

nlohmann::ordered_json phase_stats_json(const std::vector<arch::CapturePhaseStats>& phases) {
  nlohmann::ordered_json rows = nlohmann::ordered_json::array();
  for (const auto& p : phases) {
    rows.push_back({{"phase", p.id},
                    {"label", p.label},
                    {"execution_count", p.execution_count},
                    {"iterations", p.iterations},
                    {"transfers", p.transfers},
                    {"destinations", p.destinations},
                    {"words", p.words},
                    {"words_delivered", p.words_delivered}});
  }
  return rows;
}

}  // namespace lockstep::cli
