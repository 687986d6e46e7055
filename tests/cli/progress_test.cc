// The progress line fits the terminal (the ~95-column bar wrapped on an
// 80-column terminal, so every redraw added a line).
#include "cli/progress.h"

#include <gtest/gtest.h>

#include <string>

namespace advbo::cli {
namespace {

TEST(ProgressLine, FitsTheTerminalAndKeepsItsParts) {
  const std::string status = "bos2 image 17 q=412 ASR 95.1% | inst 123 best y=-0.013";
  const std::string wide = FormatProgressLine(40, 160, status, 12.4, 37.2, 0);
  EXPECT_EQ(wide.substr(0, 30), "[#######.....................]");  // 28 cells, 7 filled
  EXPECT_NE(wide.find(" 40/160 " + status + " | 12s elapsed, ETA 37s"), std::string::npos);
  EXPECT_GT(wide.size(), 79u);  // this status does not fit 80 columns at full width
  for (int columns : {200, 120, 80, 60, 40, 20}) {
    const std::string line = FormatProgressLine(40, 160, status, 12.4, 37.2, columns);
    EXPECT_LE(static_cast<int>(line.size()), columns - 1) << columns;
    EXPECT_EQ(line[0], '[') << columns;
  }
  // At 80 columns the bar narrows before the status is cut: the counts and the ETA stay.
  const std::string eighty = FormatProgressLine(40, 160, "square success", 1, 3, 80);
  EXPECT_NE(eighty.find("40/160 square success | 1s elapsed, ETA 3s"), std::string::npos);
  EXPECT_EQ(FormatProgressLine(160, 160, "", 1, 0, 0).substr(0, 30),
            "[" + std::string(28, '#') + "]");
}

}  // namespace
}  // namespace advbo::cli
