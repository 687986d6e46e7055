// text::ParseInteger / ParseIntegerList: what every integer option and header accepts.
#include "text/numbers.h"

#include <gtest/gtest.h>

#include <climits>
#include <stdexcept>
#include <string>

namespace advbo::text {
namespace {

TEST(ParseInteger, WholeDecimalIntegersOnly) {
  EXPECT_EQ(ParseInteger("42", "x"), 42);
  EXPECT_EQ(ParseInteger("-7", "x"), -7);
  EXPECT_EQ(ParseInteger("+3", "x"), 3);
  EXPECT_EQ(ParseInteger(std::to_string(LONG_MAX), "x"), LONG_MAX);
  for (const char* bad :
       {"", " 1", "1 ", "1.5", "1e3", "0x10", "abc", "-", "+-1", "1-2", "99999999999999999999"}) {
    try {
      ParseInteger(bad, "--thing");
      ADD_FAILURE() << bad;
    } catch (const std::invalid_argument& e) {
      EXPECT_EQ(std::string(e.what()), "--thing '" + std::string(bad) + "' is not an integer");
    }
  }
}

TEST(ParseIntegerList, SplitsOnTheSeparatorAndNamesTheBadPiece) {
  EXPECT_EQ(ParseIntegerList("3,32,32", ',', "x"), (std::vector<long>{3, 32, 32}));
  EXPECT_EQ(ParseIntegerList("2/5", '/', "x"), (std::vector<long>{2, 5}));
  EXPECT_EQ(ParseIntegerList("7", ',', "x"), (std::vector<long>{7}));
  for (const char* bad : {"", "3,,32", "3,32,", ",3", "3;32", "3, 32"}) {
    try {
      ParseIntegerList(bad, ',', "X-Shape");
      ADD_FAILURE() << bad;
    } catch (const std::invalid_argument& e) {
      EXPECT_EQ(std::string(e.what()).rfind("X-Shape '" + std::string(bad) + "': '", 0), 0u)
          << e.what();
    }
  }
}

TEST(ParseNumberOrFraction, DecimalsAndFractionsAsTyped) {
  EXPECT_EQ(ParseNumberOrFraction("0.3", "x"), 0.3);
  EXPECT_EQ(ParseNumberOrFraction("3e-2", "x"), 0.03);
  EXPECT_EQ(ParseNumberOrFraction("8/255", "x"), 8.0 / 255);
  EXPECT_EQ(ParseNumberOrFraction("0.5/2", "x"), 0.25);
  EXPECT_EQ(ParseNumberOrFraction("-1/4", "x"), -0.25);  // the range is the caller's
  // 8/255 times 255 is 8 again, so the 8-bit radius keeps all 8 steps (unlike 0.031).
  EXPECT_DOUBLE_EQ(ParseNumberOrFraction("8/255", "x") * 255, 8.0);
  for (const char* bad : {"", " 0.3", "0.3 ", "8/", "/255", "8/0", "8//255", "8/255/2", "abc",
                          "nan", "inf", "0x1p3", "8 / 255", "1,5"}) {
    try {
      ParseNumberOrFraction(bad, "--eps");
      ADD_FAILURE() << bad;
    } catch (const std::invalid_argument& e) {
      EXPECT_EQ(std::string(e.what()),
                "--eps '" + std::string(bad) + "' is not a number (write e.g. 0.3 or 8/255)");
    }
  }
  // Numbers that no double holds (overflow, or an underflow to a subnormal or 0, also of a
  // fraction) are numbers all the same, and said to be out of range.
  for (const char* big : {"1e999", "1e-320", "1e-400", "1e300/1e-300", "1e-300/1e300"}) {
    try {
      ParseNumberOrFraction(big, "--split");
      ADD_FAILURE() << big;
    } catch (const std::invalid_argument& e) {
      EXPECT_EQ(std::string(e.what()), "--split '" + std::string(big) +
                                           "' is a number outside the range of doubles "
                                           "(magnitudes 2.2e-308 .. 1.8e308, or 0)");
    }
  }
  EXPECT_EQ(ParseNumberOrFraction("0/5", "x"), 0.0);
  EXPECT_EQ(ParseNumberOrFraction("1e308", "x"), 1e308);
}

// FormatG is printf's %g; with 17 digits every double reads back exactly (option values and
// objective commands carry it), with fewer the shortest text a person reads.
TEST(FormatG, SignificantDigitsAndExactRoundTrip) {
  EXPECT_EQ(FormatG(0.3, 4), "0.3");
  EXPECT_EQ(FormatG(8.0, 6), "8");
  EXPECT_EQ(FormatG(1e-5, 3), "1e-05");
  EXPECT_EQ(FormatG(2.0 / 3, 3), "0.667");
  EXPECT_EQ(FormatG(7.0 / 255, 0), "0.03");  // clamped to 1 digit
  for (double v : {8.0 / 255, 0.1, -1.0 / 3, 1e-300, 123456789.123456789})
    EXPECT_EQ(ParseNumberOrFraction(FormatG(v, 17), "x"), v) << v;
  EXPECT_NE(ParseNumberOrFraction(FormatG(8.0 / 255, 6), "x"), 8.0 / 255);  // 6 digits lose it
  const double xs[] = {0.5, 1.0, 2.0 / 3};
  EXPECT_EQ(JoinG(xs, 3, " ", 3), "0.5 1 0.667");
  EXPECT_EQ(JoinG(xs, 0, " "), "");
  EXPECT_EQ(ParseNumberOrFraction(JoinG(xs + 2, 1, ","), "x"), 2.0 / 3);
}

}  // namespace
}  // namespace advbo::text
