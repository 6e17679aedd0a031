// Messages echo file contents and arguments; printable() keeps a terminal safe from them.
#include "io/printable.hpp"

#include <gtest/gtest.h>

#include "io/errors.hpp"

namespace lockstep {
namespace {

TEST(Printable, EscapesControlsLineEndsAndInvalidUtf8KeepsText) {
  EXPECT_EQ(printable("layer.attn: 0x4c000"), "layer.attn: 0x4c000");
  EXPECT_EQ(printable("\x1b[31mred\x1b[0m"), "\\x1b[31mred\\x1b[0m");
  EXPECT_EQ(printable("a\nb\rc\td\x7f"), "a\\x0ab\\x0dc\\x09d\\x7f");
  EXPECT_EQ(printable("gr\xc3\xbc\xc3\x9f \xe2\x86\x92 \xf0\x9f\x98\x80"),
            "gr\xc3\xbc\xc3\x9f \xe2\x86\x92 \xf0\x9f\x98\x80");
  EXPECT_EQ(printable("c\xff.capnp"), "c\\xff.capnp");
  EXPECT_EQ(printable("\xc2\x9b"
                      "2J"),
            "\\xc2\\x9b2J");                                // C1 CSI in UTF-8
  EXPECT_EQ(printable("\xc0\xaf"), "\\xc0\\xaf");           // overlong '/'
  EXPECT_EQ(printable("\xed\xa0\x80"), "\\xed\\xa0\\x80");  // a surrogate
  EXPECT_EQ(printable("\xe2\x86"), "\\xe2\\x86");           // cut short
}

}  // namespace
}  // namespace lockstep
