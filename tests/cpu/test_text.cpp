// core/text.hpp: parse_whole (what the command line's counts and --set values accept) and
// printable (what a message may echo of its input).
#include <gtest/gtest.h>

#include "core/text.hpp"

namespace kbench {
namespace {

TEST(ParseWhole, WholeNumbersInRangeOnly) {
  EXPECT_EQ(parse_whole("7", 1, 10), 7);
  EXPECT_EQ(parse_whole("-3", -5, 5), -3);
  EXPECT_EQ(parse_whole("1099511627776", 0, 1LL << 40), 1LL << 40);
  for (const char* bad : {"", "2.5", "1e3", "12abc", "abc", "11", "0", "99999999999999999999"})
    EXPECT_FALSE(parse_whole(bad, 1, 10).has_value()) << bad;
}

// Control characters, C1 controls and stray bytes are shown as \xNN; other UTF-8 is kept.
TEST(Printable, EscapesWhatWouldActOnTheTerminal) {
  EXPECT_EQ(printable("softmax"), "softmax");
  EXPECT_EQ(printable("\x1b[31mred\x1b[0m"), "\\x1b[31mred\\x1b[0m");
  EXPECT_EQ(printable("a\nb\rc\td"), "a\\x0ab\\x0dc\\x09d");
  EXPECT_EQ(printable("\xc2\x9b" "2J"), "\\xc2\\x9b" "2J");  // U+009B, CSI in one character
  EXPECT_EQ(printable("\x7f"), "\\x7f");
  EXPECT_EQ(printable("\xff\xfe"), "\\xff\\xfe");                // not UTF-8
  EXPECT_EQ(printable("\xe2\x82"), "\\xe2\\x82");                // cut short
  EXPECT_EQ(printable("5 \xc2\xb5s"), "5 \xc2\xb5s");            // µ stays
}

// Past the limit, the start and the end are kept and what was left out is counted; a multi-byte
// character or an escape is never split.
TEST(Printable, LongTextKeepsItsEnds) {
  const std::string long_text = "unknown op '" + std::string(100000, 'a') + "' (expected add, copy)";
  const std::string shown = printable(long_text, 300);
  EXPECT_LE(shown.size(), 340u);
  EXPECT_EQ(shown.rfind("unknown op 'aaa", 0), 0u) << shown;
  EXPECT_NE(shown.find("' (expected add, copy)"), std::string::npos) << shown;
  EXPECT_NE(shown.find(" bytes left out ...] "), std::string::npos) << shown;
  const std::string escapes = printable(std::string(1000, '\x1b'), 100);  // each \x1b is one unit
  const auto cut = escapes.find(" [... "), resume = escapes.find("...] ");
  ASSERT_NE(cut, std::string::npos) << escapes;
  EXPECT_EQ(cut % 4, 0u) << escapes;
  EXPECT_EQ((escapes.size() - resume - 5) % 4, 0u) << escapes;
  EXPECT_EQ(printable(std::string(200, 'a'), 200), std::string(200, 'a'));  // at the limit: whole
}

}  // namespace
}  // namespace kbench
