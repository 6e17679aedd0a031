#include <sstream>

#include "sim/backend.hpp"

namespace lockstep::sim {

std::string hazard_name(HazardKind kind) {
  switch (kind) {
    case HazardKind::RowFetchConflict: return "row-fetch-conflict";
    case HazardKind::SendReceiveConflict: return "send-receive-conflict";
    case HazardKind::InstructionAccess: return "instruction-access";
    case HazardKind::WriteOutOfRange: return "write-out-of-range";
    case HazardKind::MuxLeftOpen: return "mux-left-open";
    case HazardKind::NoPointer: return "no-pointer";
    case HazardKind::OverlappingReceives: return "overlapping-receives";
    case HazardKind::SimultaneousControls: return "simultaneous-controls";
    case HazardKind::ControlAtMessageStart: return "control-at-message-start";
    case HazardKind::Paired: return "paired";
    case HazardKind::Encoding: return "encoding";
    case HazardKind::StreamConflict: return "stream-conflict";
    case HazardKind::DoubleWrite: return "double-write";
  }
  return "unknown";
}

std::string describe(const Hazard& hazard) {
  std::ostringstream s;
  s << "hazard " << hazard_name(hazard.kind) << ": tile " << hazard.tile << " phase "
    << hazard.phase << " iteration " << hazard.iteration << " cycle " << hazard.cycle
    << " row+0x" << std::hex << hazard.row_offset << std::dec << " [" << hazard.instruction
    << "]: " << hazard.detail;
  return s.str();
}

}  // namespace lockstep::sim
