#pragma once
// Hazards found while executing an exchange phase or a supervisor step. The numbers are the
// classes of IPU21-EXCHANGE.md section 7 (the same values as sim::HazardKind); the model
// layer keeps its own enum so it does not depend on sim/.
#include <cstdint>
#include <string>

namespace lockstep::model {

enum class HazardClass : uint8_t {
  RowFetchConflict = 1,
  SendReceiveConflict = 2,
  InstructionAccess = 3,
  WriteOutOfRange = 4,
  MuxLeftOpen = 5,
  NoPointer = 6,
  OverlappingReceives = 7,
  SimultaneousControls = 8,
  ControlAtMessageStart = 9,
  Paired = 10,
  Encoding = 11,
  StreamConflict = 12,
  DoubleWrite = 13,
};

// One hazard, located on a tile's event clock (or cycle, for supervisor steps).
struct ModelHazard {
  HazardClass kind = HazardClass::Encoding;
  uint32_t tile = 0;        // logical tile
  int64_t event = 0;        // event of the phase (exchange) or cycle offset (steps)
  uint32_t row_offset = 0;  // byte offset in the row of the instruction at fault
  std::string instruction;  // arch::describe of that instruction, or what stood for it
  std::string detail;
  bool step = false;  // found by the supervisor or a kernel, not by an exchange row
};

}  // namespace lockstep::model
