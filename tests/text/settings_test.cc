// text::SplitSettings: the key=value splitter every attack, defense and game-defender spec uses.
#include "text/settings.h"

#include <gtest/gtest.h>

#include <stdexcept>
#include <string>

namespace advbo::text {
namespace {

using Pairs = std::vector<std::pair<std::string, std::string>>;

TEST(SplitSettings, KeepsTheOrderAndSkipsEmptyPieces) {
  EXPECT_EQ(SplitSettings("kernel=se,init=5", "x"), (Pairs{{"kernel", "se"}, {"init", "5"}}));
  EXPECT_EQ(SplitSettings("a=1,,b=2,", "x"), (Pairs{{"a", "1"}, {"b", "2"}}));
  EXPECT_EQ(SplitSettings("beta=constant:1", "x"), (Pairs{{"beta", "constant:1"}}));
  EXPECT_EQ(SplitSettings("a=1,a=2", "x"), (Pairs{{"a", "1"}, {"a", "2"}}));  // caller decides
  EXPECT_TRUE(SplitSettings("", "x").empty());
}

TEST(SplitSettings, RefusesAPieceThatIsNotKeyValueAndNamesIt) {
  for (const char* bad : {"window", "=5", "window=", "a=1,b"}) {
    try {
      SplitSettings(bad, "game defense 'r2b2:noise'");
      ADD_FAILURE() << bad;
    } catch (const std::invalid_argument& e) {
      const std::string text = bad, piece = text.substr(text.rfind(',') + 1);
      EXPECT_EQ(std::string(e.what()),
                "game defense 'r2b2:noise': setting '" + piece + "' is not key=value");
    }
  }
}

}  // namespace
}  // namespace advbo::text
