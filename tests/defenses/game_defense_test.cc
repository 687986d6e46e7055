// Game defenders in the query loop (Dai 2021 thesis Sec. 8.4.2.2): spec parsing, the clip
// around the attacker's image, one round per query through the oracle's feedback, and a
// level-1 defender that learns the best response to a known payoff.
#include "defenses/game_defense.h"

#include <gtest/gtest.h>

#include <cmath>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "attacks/adaptive/adaptive.h"
#include "data/datasets.h"
#include "oracle/autoencoder.h"
#include "oracle/classifier.h"

namespace advbo::defenses {
namespace {

const std::string kRoot = ADVBO_SOURCE_DIR;

TEST(ParseGameDefense, SpecsAndErrors) {
  EXPECT_TRUE(IsGameDefense("r2b2:latent"));
  EXPECT_TRUE(IsGameDefense("random:jpeg"));
  EXPECT_FALSE(IsGameDefense("jpeg:quality=75"));
  const GameDefenseSpec s = ParseGameDefense("r2b2:jpeg+noise");
  EXPECT_EQ(s.agent, "r2b2");
  EXPECT_FALSE(s.latent);
  ASSERT_EQ(s.stages.size(), 2u);
  EXPECT_EQ(s.stages[0].name, "jpeg");
  EXPECT_EQ(s.Spec(), "r2b2:jpeg+noise");
  EXPECT_TRUE(ParseGameDefense("random:latent").latent);
  for (const char* bad :
       {"r2b2:", "r2b2:median", "r2b2:jpeg+jpeg", "level2:latent", "r2b2:latent+x"}) {
    try {
      ParseGameDefense(bad);
      ADD_FAILURE() << bad << " accepted";
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find("game defense"), std::string::npos) << e.what();
    }
  }
}

// advbo serve's default window: added only to a game defender that names none.
TEST(ParseGameDefense, WithDefaultWindowAddsAWindowOnlyWhereNoneIsNamed) {
  EXPECT_EQ(WithDefaultWindow("r2b2:jpeg+noise", 100), "r2b2:jpeg+noise:window=100");
  EXPECT_EQ(WithDefaultWindow("random:latent:beta=r2b2_joint", 100),
            "random:latent:window=100,beta=r2b2_joint");
  EXPECT_EQ(WithDefaultWindow("r2b2:noise:window=0", 100), "r2b2:noise:window=0")
      << "an explicit window (here: the exact GP) is kept";
  EXPECT_EQ(WithDefaultWindow("r2b2:noise:beta=constant:1,window=7", 100),
            "r2b2:noise:beta=constant:1,window=7");
  EXPECT_EQ(WithDefaultWindow("jpeg:quality=75", 100), "jpeg:quality=75");
  EXPECT_EQ(WithDefaultWindow("none", 100), "none");
  EXPECT_EQ(ParseGameDefense(WithDefaultWindow("r2b2:bits", 100)).window, 100);
  EXPECT_THROW(WithDefaultWindow("r2b2:bits", -1), std::invalid_argument);
  EXPECT_THROW(WithDefaultWindow("r2b2:nonsense", 100), std::invalid_argument);
}

TEST(ParseGameDefense, WindowSetting) {
  const GameDefenseSpec w = ParseGameDefense("r2b2:jpeg+noise:window=50");
  EXPECT_EQ(w.window, 50);
  EXPECT_EQ(w.Spec(), "r2b2:jpeg+noise:window=50");
  EXPECT_EQ(ParseGameDefense("random:latent:window=7").Spec(), "random:latent:window=7");
  EXPECT_EQ(ParseGameDefense("r2b2:noise").window, GameDefenseSpec::kDefaultDefenderWindow);
  const GameDefenseSpec b = ParseGameDefense("r2b2:noise:window=10,beta=constant:1");
  EXPECT_EQ(b.window, 10);
  EXPECT_EQ(b.beta, "constant:1");
  EXPECT_EQ(b.Spec(), "r2b2:noise:window=10,beta=constant:1");
  EXPECT_EQ(ParseGameDefense("r2b2:noise:beta=r2b2_joint").Spec(), "r2b2:noise:beta=r2b2_joint");
  for (const char* bad : {"r2b2:noise:window=-1", "r2b2:noise:window=x", "r2b2:noise:window=",
                          "r2b2:noise:beta=2", "r2b2:noise:window=2000000", "r2b2:noise:gamma=1"}) {
    try {
      ParseGameDefense(bad);
      ADD_FAILURE() << bad << " accepted";
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find("game defense"), std::string::npos) << e.what();
    }
  }
}

// Plays `rounds` rounds of a level-1 noise-sigma defender against the payoff
// y(a) = 4 (a - 0.6)^2 - 1 (the test below); returns the defender.
std::unique_ptr<GameDefense> PlayKnownPayoff(const std::string& spec, int rounds) {
  GameDefenseOptions o;
  o.candidates = 101;
  o.refit_every = 10;
  auto d = std::make_unique<GameDefense>(ParseGameDefense(spec), nullptr, 1, 4, 4, o);
  std::vector<float> img(16, 0.5f);
  for (int t = 0; t < rounds; ++t) {
    d->Transform(img.data(), 1);
    oracle::QueryResult r;
    r.objective =
        Eigen::VectorXd::Constant(1, 4.0 * std::pow(d->PendingActions()[0](0) - 0.6, 2) - 1.0);
    d->Feedback(r);
  }
  return d;
}

TEST(GameDefense, WindowBoundsTheGpAndKeepsEveryAction) {
  // window 15: the GP holds at most 30 rounds; every action is still reported.
  const auto w = PlayKnownPayoff("r2b2:noise:window=15", 70);
  EXPECT_EQ(w->rounds(), 70);
  EXPECT_EQ(w->Actions().rows(), 70);
  EXPECT_LE(w->gp_rounds(), 30);
  EXPECT_GE(w->gp_rounds(), 15);
  // It still plays the best response from its window.
  double dist = 0;
  for (int t = 60; t < 70; ++t) dist += std::abs(w->Action(t)(0) - 0.6) / 10;
  EXPECT_LT(dist, 0.1);
  // A window the game never fills (2 x 40 > 70 rounds) is the exact GP: the same actions.
  const auto exact = PlayKnownPayoff("r2b2:noise", 70);
  const auto wide = PlayKnownPayoff("r2b2:noise:window=40", 70);
  EXPECT_EQ(exact->gp_rounds(), 70);
  EXPECT_EQ(wide->gp_rounds(), 70);
  EXPECT_TRUE(exact->Actions() == wide->Actions());
  // The windowed defender differs from the exact one only after its first drop (round 30).
  EXPECT_TRUE(exact->Actions().topRows(30) == w->Actions().topRows(30));
}

TEST(GameDefense, ParameterisedActionsMapOntoTheStageRanges) {
  GameDefense d(ParseGameDefense("r2b2:jpeg+noise"), nullptr, 1, 28, 28, {});
  EXPECT_EQ(d.action_dim(), 2);
  EXPECT_EQ(d.PipelineFor(Eigen::Vector2d(0.0, 1.0)).Spec(), "jpeg:quality=10+noise:sigma=0.1");
  EXPECT_EQ(d.PipelineFor(Eigen::Vector2d(1.0, 0.0)).Spec(), "jpeg:quality=95");  // sigma 0: off
  EXPECT_EQ(d.PipelineFor(d.NeutralAction()).Spec(), "jpeg:quality=95");
  EXPECT_THROW(GameDefense(ParseGameDefense("r2b2:latent"), nullptr, 1, 28, 28, {}),
               std::invalid_argument);
}

TEST(GameDefense, LatentDefenderStaysInTheBallAroundTheAttackersImageEveryQuery) {
  auto model = oracle::Classifier::Load(kRoot + "/models/mnist_cw.pt");
  auto vae = oracle::Autoencoder::Load(kRoot + "/models/mnist_vae.pt", 1, 28, 28);
  data::ImageSet images = data::ReadMnist(kRoot + "/data/mnist/t10k-images-idx3-ubyte.gz",
                                          kRoot + "/data/mnist/t10k-labels-idx1-ubyte.gz", 4);
  GameDefenseOptions o;
  o.epsilon = 0.1;
  o.candidates = 50;
  auto defender =
      std::make_shared<GameDefense>(ParseGameDefense("r2b2:latent"), vae.get(), 1, 28, 28, o);
  oracle::Referee orc(*model, images.image(0), images.labels[0], -1, 0.3, 40);
  std::vector<float> seen_attacker, seen_defended;
  int feedback_rounds = 0;
  auto transform = [&](float* x, int n) {
    seen_attacker.assign(x, x + 784 * n);
    defender->Transform(x, n);
    seen_defended.assign(x, x + 784 * n);
  };
  auto learn = [&](const oracle::QueryResult& r) {
    defender->Feedback(r);
    feedback_rounds += static_cast<int>(r.objective.size());
  };
  orc.set_defense(oracle::WithLearner(oracle::WithInputStage(oracle::Undefended(*model), transform),
                                      learn, images.labels[0], -1));
  std::mt19937 g(3);
  std::uniform_real_distribution<float> u(-0.3f, 0.3f);
  for (int batch = 0; batch < 10; ++batch) {
    const int n = 1 + batch % 3;
    std::vector<float> x(784 * n);
    for (int i = 0; i < n; ++i)
      for (int p = 0; p < 784; ++p) x[i * 784 + p] = images.image(0)[p] + u(g);
    orc.Query(x.data(), n);
    for (size_t p = 0; p < seen_attacker.size(); ++p) {
      ASSERT_LE(std::abs(seen_defended[p] - seen_attacker[p]), 0.1 + 1e-6);
      ASSERT_TRUE(seen_defended[p] >= 0 && seen_defended[p] <= 1);
    }
    if (batch == 0) {
      EXPECT_EQ(defender->Actions().row(0).norm(), 0.0);  // the neutral first move
    }
  }
  EXPECT_EQ(feedback_rounds, orc.queries());
  EXPECT_EQ(defender->rounds(), orc.queries());
  EXPECT_GT((defender->Actions().bottomRows(5).rowwise() - defender->Actions().row(0))
                .rowwise()
                .norm()
                .maxCoeff(),
            0.0)
      << "a level-1 defender moves away from its first action";
}

TEST(GameDefense, LevelOneDefenderLearnsTheBestResponseToAKnownPayoff) {
  // Attacker objective y(a) = 4 (a - 0.6)^2 - 1 for noise sigma a in [0, 1]: the defender's
  // payoff -y peaks at the interior point a = 0.6 (not at an end of the range).
  GameDefenseOptions o;
  o.candidates = 101;
  o.refit_every = 10;
  GameDefense d(ParseGameDefense("r2b2:noise"), nullptr, 1, 4, 4, o);
  std::vector<float> img(16, 0.5f);
  for (int t = 0; t < 40; ++t) {
    d.Transform(img.data(), 1);
    ASSERT_EQ(d.PendingActions().size(), 1u);
    oracle::QueryResult r;
    r.objective =
        Eigen::VectorXd::Constant(1, 4.0 * std::pow(d.PendingActions()[0](0) - 0.6, 2) - 1.0);
    d.Feedback(r);
  }
  const Eigen::MatrixXd acts = d.Actions();
  double dist = 0;
  for (int t = 30; t < 40; ++t) dist += std::abs(acts(t, 0) - 0.6) / 10;
  EXPECT_LT(dist, 0.1);
  double early = 0;
  for (int t = 1; t < 11; ++t) early += std::abs(acts(t, 0) - 0.6) / 10;
  EXPECT_LT(dist, early);
}

// EOT against a game defender (evaluate's adaptive attack for r2b2/random): each of the k
// samples of a query is one round of the game, and the defender learns from each sample's
// own score (it failed with "feedback for 1 queries, 10 were transformed" before).
TEST(GameDefense, EotQueriesAreKRoundsEachScoredOnItsOwnSample) {
  auto model = oracle::Classifier::Load(kRoot + "/models/mnist_cw.pt");
  const data::ImageSet set = data::ReadMnist(kRoot + "/data/mnist/t10k-images-idx3-ubyte.gz",
                                             kRoot + "/data/mnist/t10k-labels-idx1-ubyte.gz", 1);
  auto d = std::make_shared<GameDefense>(ParseGameDefense("random:noise"), nullptr, 1, 28, 28,
                                         GameDefenseOptions{});
  oracle::Referee orc(*model, set.image(0), set.labels[0], -1, 0.3, 30);
  std::vector<Eigen::VectorXd> seen;
  orc.set_defense(oracle::WithLearner(
      oracle::WithInputStage(oracle::Undefended(*model),
                             [d](float* x, int n) { d->Transform(x, n); }),
      [&](const oracle::QueryResult& r) {
        seen.push_back(r.objective);
        d->Feedback(r);
      },
      set.labels[0], -1));
  attacks::EotOracle view(orc, 3);
  std::vector<float> x(set.image(0), set.image(0) + 784);
  const oracle::QueryResult r = view.Query(x.data(), 1);
  ASSERT_EQ(seen.size(), 1u);
  ASSERT_EQ(seen[0].size(), 3);  // one score per sample
  EXPECT_EQ(d->rounds(), 3);
  EXPECT_EQ(r.objective.size(), 1);  // the attack gets one (averaged) answer
}

}  // namespace
}  // namespace advbo::defenses
