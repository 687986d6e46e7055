// The option parsers of `advbo bo` (cli/parse.h) on good and bad text.
#include "cli/parse.h"

#include <gtest/gtest.h>

#include <stdexcept>
#include <string>

namespace advbo::cli {
namespace {

std::string ErrorOf(const std::string& text) {
  try {
    ParseCandidates(text, "c.csv");
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "";
}

TEST(ParseCandidates, RowsHeaderAndBlankLines) {
  const Eigen::MatrixXd m = ParseCandidates("a,b\n1,2\n\n 3.5 , -4\r\n5e-1,6\n", "c.csv");
  ASSERT_EQ(m.rows(), 3);
  ASSERT_EQ(m.cols(), 2);
  EXPECT_EQ(m(1, 0), 3.5);
  EXPECT_EQ(m(1, 1), -4);
  EXPECT_EQ(m(2, 0), 0.5);
  EXPECT_EQ(ParseCandidates("7\n", "c.csv").size(), 1);
}

TEST(ParseCandidates, RefusesWhatIsNotATable) {
  EXPECT_NE(ErrorOf("").find("c.csv: no candidate rows"), std::string::npos);
  EXPECT_NE(ErrorOf("x,y\n").find("no candidate rows"), std::string::npos);
  EXPECT_NE(ErrorOf("1,2\n3\n").find("c.csv: line 2: 1 columns, the first row has 2"),
            std::string::npos);
  EXPECT_NE(ErrorOf("1,2\n3,x\n").find("line 2: not a row of finite numbers"), std::string::npos);
  EXPECT_NE(ErrorOf("1,2\nnan,1\n").find("line 2"), std::string::npos);
  EXPECT_NE(ErrorOf("1,2\n1,inf\n").find("line 2"), std::string::npos);
  EXPECT_NE(ErrorOf("1,2\n1,2,\n").find("line 2"), std::string::npos);  // an empty cell
}

}  // namespace
}  // namespace advbo::cli
