#include <sstream>

#include "sim/backend.hpp"

namespace lockstep::sim {

std::string hazard_name(HazardKind kind) {
  switch (kind) {
    case HazardKind::RowFetchConflict:
      return "row-fetch-conflict";
    case HazardKind::SendReceiveConflict:
      return "send-receive-conflict";
    case HazardKind::InstructionAccess:
      return "instruction-access";
    case HazardKind::WriteOutOfRange:
      return "write-out-of-range";
    case HazardKind::MuxLeftOpen:
      return "mux-left-open";
    case HazardKind::NoPointer:
      return "no-pointer";
    case HazardKind::OverlappingReceives:
      return "overlapping-receives";
    case HazardKind::SimultaneousControls:
      return "simultaneous-controls";
    case HazardKind::ControlAtMessageStart:
      return "control-at-message-start";
    case HazardKind::Paired:
      return "paired";
    case HazardKind::Encoding:
      return "encoding";
    case HazardKind::StreamConflict:
      return "stream-conflict";
    case HazardKind::DoubleWrite:
      return "double-write";
  }
  return "unknown";
}

// ETYPE (IPU21-DEVICE.md section 16).
constexpr uint32_t kMemoryConflict = 6, kInvalidExchangeConfiguration = 7, kInvalidMemoryAddress = 8, kInvalidPc = 10,
                   kInvalidInstruction = 12, kExchangeError = 13;
// Exchange receive error (TDI_CTXT_STS.ERERR).
constexpr uint32_t kClashInstruction = 1, kClashInstructionFetch = 2, kAddress = 3;

ChipError chip_error(const Hazard& hazard) {
  switch (hazard.kind) {
    case HazardKind::RowFetchConflict:
      return {kExchangeError, kClashInstructionFetch};  // "likely ERERR 2"
    case HazardKind::InstructionAccess:
      return hazard.step ? ChipError{kInvalidPc, 0} : ChipError{kExchangeError, kClashInstruction};  // "likely ERERR 1"
    case HazardKind::WriteOutOfRange:
      return hazard.step ? ChipError{kInvalidMemoryAddress, 0}
                         : ChipError{kExchangeError, kAddress};  // "likely ERERR 3"
    case HazardKind::SendReceiveConflict:
      return {kMemoryConflict, 0};
    case HazardKind::Paired:
      return {kInvalidExchangeConfiguration, 0};
    case HazardKind::Encoding:
      return {kInvalidInstruction, 0};
    case HazardKind::MuxLeftOpen:          // later words are written: silent
    case HazardKind::NoPointer:            // the pointer is undefined: silent
    case HazardKind::OverlappingReceives:  // encoder and scheduler rules
    case HazardKind::SimultaneousControls:
    case HazardKind::ControlAtMessageStart:
    case HazardKind::StreamConflict:
    case HazardKind::DoubleWrite:  // Lockstep's own check
      break;
  }
  return {};
}

std::string exception_name(uint32_t exception) {
  static const char* const names[] = {"none",
                                      "retirement break",
                                      "PBRK0",
                                      "PBRK1",
                                      "break on sync",
                                      "floating point",
                                      "memory conflict",
                                      "invalid exchange configuration",
                                      "invalid memory address",
                                      "invalid operand",
                                      "invalid PC",
                                      "data break",
                                      "invalid instruction",
                                      "exchange error",
                                      "memory error",
                                      "instruction break"};
  return exception < 16 ? names[exception] : "exception " + std::to_string(exception);
}

std::string receive_error_name(uint32_t receive_error) {
  static const char* const names[] = {"none",    "instruction clash", "instruction-fetch clash", "address",
                                      "workers", "data break",        "configuration",           "modification"};
  return receive_error < 8 ? names[receive_error] : "receive error " + std::to_string(receive_error);
}

std::string describe(const Hazard& hazard) {
  std::ostringstream s;
  s << "hazard " << hazard_name(hazard.kind) << ": tile " << hazard.tile << " phase " << hazard.phase << " iteration "
    << hazard.iteration << " cycle " << hazard.cycle << " row+0x" << std::hex << hazard.row_offset << std::dec << " ["
    << hazard.instruction << "]: " << hazard.detail;
  const ChipError chip = chip_error(hazard);
  if (chip.exception == 0) {
    s << " (on the chip: no exception)";
  } else {
    s << " (on the chip: exception " << chip.exception << " " << exception_name(chip.exception);
    if (chip.receive_error != 0)
      s << ", receive error " << chip.receive_error << " " << receive_error_name(chip.receive_error);
    s << ")";
  }
  return s.str();
}

}  // namespace lockstep::sim
