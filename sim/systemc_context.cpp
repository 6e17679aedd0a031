#include "sim/systemc_context.hpp"

#include <spdlog/spdlog.h>

#include <cstdlib>
#include <systemc>

namespace lockstep::sim {
namespace {

std::mutex& kernel_mutex() {
  static std::mutex m;
  return m;
}

// SystemC reports go to our log (stderr), never to stdout; errors still throw.
void report_handler(const sc_core::sc_report& report, const sc_core::sc_actions& actions) {
  if (report.get_severity() >= sc_core::SC_ERROR) {
    spdlog::error("systemc: {}", report.what());
  } else {
    spdlog::debug("systemc: {}", report.what());
  }
  if (actions & sc_core::SC_THROW) throw report;
  if (actions & sc_core::SC_ABORT) std::abort();
}

void configure_once() {
  static const bool done = [] {
    setenv("SC_COPYRIGHT_MESSAGE", "DISABLE", 1);
    sc_core::sc_report_handler::set_handler(report_handler);
    sc_core::sc_report_handler::set_actions(sc_core::SC_INFO, sc_core::SC_DO_NOTHING);
    sc_core::sc_report_handler::set_actions(sc_core::SC_WARNING, sc_core::SC_LOG);
    return true;
  }();
  (void)done;
}

}  // namespace

FreshSimulationContext::FreshSimulationContext() : lock_(kernel_mutex()) {
  configure_once();
  sc_core::sc_curr_simcontext = new sc_core::sc_simcontext;
  sc_core::sc_default_global_context = sc_core::sc_curr_simcontext;
}

FreshSimulationContext::~FreshSimulationContext() {
  delete sc_core::sc_curr_simcontext;
  sc_core::sc_curr_simcontext = nullptr;
  sc_core::sc_default_global_context = nullptr;
}

}  // namespace lockstep::sim

// libsystemc.so refers to sc_main from its own main(); our executables have their own
// main and never call it, but the symbol must exist for the link.
int sc_main(int, char**) { return 0; }
