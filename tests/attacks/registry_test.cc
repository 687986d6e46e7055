// The attack registry (attacks/registry.h): every entry builds, declares the threat
// model of its family, appears in the generated help and in the CLI reference's table
// (docs/reference/cli.md); evaluate's default ensembles are the registry's ranks.
#include "attacks/registry.h"

#include <gtest/gtest.h>

#include <fstream>
#include <set>
#include <sstream>
#include <string>

#include "attacks/attack.h"

namespace advbo::attacks {
namespace {

std::string Slurp(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

TEST(AttackRegistry, EveryEntryBuildsUnderItsFamilysThreatModel) {
  std::set<std::string> names;
  for (const AttackEntry& e : AttackRegistry()) {
    EXPECT_TRUE(names.insert(e.name).second) << e.name << " registered twice";
    EXPECT_FALSE(e.summary.empty()) << e.name;
    const auto a = MakeAttack(e.name, AttackContext{});
    EXPECT_EQ(a->name(), e.name);
    const auto norms = a->norms();
    switch (e.family) {
      case AttackFamily::kScoreLinf:
        EXPECT_EQ(a->feedback(), oracle::Feedback::kScores) << e.name;
        EXPECT_EQ(norms, std::vector<oracle::Norm>{oracle::Norm::kLinf}) << e.name;
        break;
      case AttackFamily::kScoreL2:
        EXPECT_EQ(a->feedback(), oracle::Feedback::kScores) << e.name;
        EXPECT_EQ(norms, std::vector<oracle::Norm>{oracle::Norm::kL2}) << e.name;
        break;
      case AttackFamily::kLabel:
        EXPECT_EQ(a->feedback(), oracle::Feedback::kLabel) << e.name;
        // Targeted only where the paper defines it, from a start image.
        {
          const std::set<std::string> targeted{"hsja", "sign-opt", "ta", "gta", "cgba", "cgba-h"};
          EXPECT_EQ(a->supports_targeted(), targeted.count(e.name) == 1) << e.name;
        }
        break;
    }
    EXPECT_EQ(FindAttack(e.name + ":x=1"), &e);
    // An unknown setting is refused naming the spec; an entry without settings says so.
    try {
      MakeAttack(e.name + ":nosuchkey=1", AttackContext{});
      ADD_FAILURE() << e.name << " accepted an unknown setting";
    } catch (const std::invalid_argument& err) {
      EXPECT_NE(std::string(err.what()).find("setting"), std::string::npos) << err.what();
    }
  }
  EXPECT_EQ(AttackNames().size(), AttackRegistry().size());
  EXPECT_EQ(FindAttack("sqare"), nullptr);
  try {
    MakeAttack("sqare:p_init=0.1", AttackContext{});
    ADD_FAILURE() << "an unknown attack was built";
  } catch (const std::invalid_argument& err) {
    EXPECT_NE(std::string(err.what()).find("unknown attack 'sqare' (available: bos2,"),
              std::string::npos)
        << err.what();
  }
}

TEST(AttackRegistry, HelpReadmeAndEnsemblesComeFromIt) {
  const std::string help = AttackHelp();
  const std::string readme = Slurp(std::string(ADVBO_SOURCE_DIR) + "/docs/reference/cli.md");
  for (const AttackEntry& e : AttackRegistry())
    EXPECT_NE(help.find(e.name), std::string::npos) << e.name;
  // The CLI reference's table is the registry's (regenerate it from RegistryTable() when this
  // fails).
  const std::string begin = "<!-- attack registry -->\n", end = "<!-- /attack registry -->";
  const auto b = readme.find(begin), en = readme.find(end);
  ASSERT_NE(b, std::string::npos) << "docs/reference/cli.md has no attack registry table";
  ASSERT_NE(en, std::string::npos);
  EXPECT_EQ(readme.substr(b + begin.size(), en - b - begin.size()), RegistryTable())
      << "docs/reference/cli.md's attack table differs from the registry; it should read:\n"
      << RegistryTable();
  using oracle::Feedback;
  using oracle::Norm;
  EXPECT_EQ(DefaultEnsemble(Norm::kLinf, Feedback::kScores), "square");
  EXPECT_EQ(DefaultEnsemble(Norm::kL2, Feedback::kScores), "simba-dct,square-l2");
  EXPECT_EQ(DefaultEnsemble(Norm::kLinf, Feedback::kLabel), "rays,bo-hl,hsja");
  EXPECT_EQ(DefaultEnsemble(Norm::kL2, Feedback::kLabel), "bo-hl,cgba,hsja");
  // Every default member runs under its threat model.
  for (const Norm n : {Norm::kLinf, Norm::kL2})
    for (const Feedback f : {Feedback::kScores, Feedback::kLabel}) {
      std::stringstream ss(DefaultEnsemble(n, f));
      for (std::string m; std::getline(ss, m, ',');)
        EXPECT_EQ(ThreatModelMismatch(*MakeAttack(m, AttackContext{}), m, n, f), "") << m;
    }
}

}  // namespace
}  // namespace advbo::attacks
