// The defense registry (defenses/registry.h): every entry parses, says truly whether
// it is randomised, is paired with the adaptive attack that knows it, and appears in --help and
// in the CLI reference's table (docs/reference/cli.md).
#include "defenses/registry.h"

#include <gtest/gtest.h>

#include <fstream>
#include <set>
#include <sstream>
#include <string>

#include "attacks/attack.h"
#include "defenses/defense.h"
#include "defenses/game_defense.h"

namespace advbo::defenses {
namespace {

TEST(DefenseRegistry, EveryEntryParsesAndPairsWithItsAdaptiveAttack) {
  std::set<std::string> names;
  for (const DefenseEntry& e : DefenseRegistry()) {
    EXPECT_TRUE(names.insert(e.name).second) << e.name;
    EXPECT_EQ(e.example.rfind(e.name, 0), 0u) << e.example;
    const std::string adaptive = AdaptiveAttackOf(e, "square");
    if (e.kind == DefenseKind::kGame) {
      EXPECT_TRUE(IsGameDefense(e.example)) << e.example;
      EXPECT_NO_THROW(ParseGameDefense(e.example)) << e.example;
    } else {
      const DefensePipeline p = ParseDefense(e.example);
      EXPECT_EQ(p.randomized(), e.randomized) << e.example;
      EXPECT_EQ(adaptive, p.AdaptiveAttack("square"));
    }
    // The pairing: EOT exactly for the randomised ones, the AAA inversion for AAA, OARS for
    // the detector, the plain attack otherwise -- and MakeAttack takes it.
    EXPECT_EQ(adaptive.rfind("eot:k=10/", 0) == 0, e.randomized) << adaptive;
    EXPECT_EQ(adaptive.rfind("aaa-adaptive:", 0) == 0, e.name == "aaa") << adaptive;
    EXPECT_EQ(adaptive.rfind("oars:", 0) == 0, e.kind == DefenseKind::kDetector) << adaptive;
    EXPECT_NO_THROW(attacks::MakeAttack(adaptive, attacks::AttackContext{})) << adaptive;
    EXPECT_NE(DefenseHelp().find(e.example), std::string::npos) << e.example;
  }
}

TEST(DefenseRegistry, TheReadmeTableIsTheRegistrys) {
  std::ifstream in(std::string(ADVBO_SOURCE_DIR) + "/docs/reference/cli.md");
  std::stringstream ss;
  ss << in.rdbuf();
  const std::string readme = ss.str();
  const std::string begin = "<!-- defense registry -->\n", end = "<!-- /defense registry -->";
  const auto b = readme.find(begin), en = readme.find(end);
  ASSERT_NE(b, std::string::npos) << "docs/reference/cli.md has no defense registry table";
  ASSERT_NE(en, std::string::npos);
  EXPECT_EQ(readme.substr(b + begin.size(), en - b - begin.size()), DefenseTable())
      << "docs/reference/cli.md's defense table differs from the registry; it should read:\n"
      << DefenseTable();
}

}  // namespace
}  // namespace advbo::defenses
