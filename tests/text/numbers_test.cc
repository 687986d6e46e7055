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

}  // namespace
}  // namespace advbo::text
