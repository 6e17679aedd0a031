// The sendpicp prefix bit 27 (ps) selects what the payload's PIC value is: 0 the incoming
// pointer, 1 the incoming format (docs/ipu21-exchange.md section 4, project decision).
#include <gtest/gtest.h>

#include "arch/instruction.hpp"
#include "model/row_schedule.hpp"

namespace lockstep::model {
namespace {

using arch::Opcode;

// A receiver-only sendpicp (sctl 0) issued at event 0, then the return.
RowSchedule schedule_sendpicp(uint32_t pic_selector) {
  arch::Instruction p{.op = Opcode::SendPicP, .words = 4};
  p.xpic = 0x640;
  p.pic = pic_selector == 0 ? 0x19000 : 1;
  p.pic_selector = pic_selector;
  std::vector<uint32_t> row = arch::encode(p);
  arch::encode_into({.op = Opcode::Return}, row);
  return schedule_row(row);
}

TEST(SendPicPSelector, ZeroSetsThePicPointer) {
  const RowSchedule s = schedule_sendpicp(0);
  ASSERT_TRUE(s.issues.empty()) << s.issues[0].detail;
  ASSERT_EQ(s.controls.size(), 2u);
  EXPECT_EQ(s.controls[0].kind, ControlKind::Xpic);
  EXPECT_EQ(s.controls[1].kind, ControlKind::PicPointer);
  EXPECT_EQ(s.controls[1].event, 1);  // t + 1
  EXPECT_EQ(s.controls[1].value, 0x19000u);
}

TEST(SendPicPSelector, OneSetsTheIncomingFormat) {
  const RowSchedule s = schedule_sendpicp(1);
  ASSERT_TRUE(s.issues.empty()) << s.issues[0].detail;
  ASSERT_EQ(s.controls.size(), 2u);
  EXPECT_EQ(s.controls[0].kind, ControlKind::Xpic);
  EXPECT_EQ(s.controls[1].kind, ControlKind::PicFormat);
  EXPECT_EQ(s.controls[1].event, 1);
  EXPECT_EQ(s.controls[1].value, 1u);
  EXPECT_EQ(s.horizon, 4);
}

}  // namespace
}  // namespace lockstep::model
