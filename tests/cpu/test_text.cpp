// core/text.hpp's parse_whole: what the command line's counts and --set values accept.
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

}  // namespace
}  // namespace kbench
