// The R2-B2 adversarial-ML game on the shipped MNIST model and VAE: the eps-ball and clip
// anchors hold every round, payoffs sum to 1, success means misclassification; VAE loading
// errors name the file.
#include "defenses/latent_game.h"

#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "data/datasets.h"
#include "oracle/autoencoder.h"
#include "oracle/classifier.h"

namespace advbo::defenses {
namespace {

const std::string kRoot = ADVBO_SOURCE_DIR;

TEST(LatentGame, ClipAnchorsPayoffsAndSuccessHoldEveryRound) {
  auto model = oracle::Classifier::Load(kRoot + "/models/mnist_cw.pt");
  auto vae = oracle::Autoencoder::Load(kRoot + "/models/mnist_vae.pt", 1, 28, 28);
  ASSERT_EQ(vae->latent_dim(), 2);
  data::ImageSet images = data::ReadMnist(kRoot + "/data/mnist/t10k-images-idx3-ubyte.gz",
                                          kRoot + "/data/mnist/t10k-labels-idx1-ubyte.gz", 20);
  const float* x0 = images.image(3);
  const int y = images.labels[3];
  LatentGameOptions opt;
  opt.epsilon = 0.2;
  LatentGame game(*model, *vae, *vae, x0, y, opt);
  EXPECT_EQ(game.space(0).dim(), 2);
  EXPECT_EQ(game.space(1).upper(0), 2.0);
  bo::Rng rng(1);
  int successes = 0;
  for (int t = 0; t < 60; ++t) {
    const Eigen::VectorXd a1 = game.space(0).SampleUniform(1, rng).row(0);
    const Eigen::VectorXd a2 = game.space(1).SampleUniform(1, rng).row(0);
    std::vector<float> x1, x2;
    game.Images(a1, a2, &x1, &x2);
    for (size_t i = 0; i < x1.size(); ++i) {
      ASSERT_LE(std::abs(x1[i] - x0[i]), 0.2 + 1e-6) << "attacker clip anchored on the clean image";
      ASSERT_LE(std::abs(x2[i] - x1[i]), 0.2 + 1e-6)
          << "defender clip anchored on the attacker's image";
      ASSERT_TRUE(x1[i] >= 0 && x1[i] <= 1 && x2[i] >= 0 && x2[i] <= 1);
    }
    const Eigen::VectorXd p = game.Payoffs({a1, a2});
    EXPECT_NEAR(p(0) + p(1), 1.0, 1e-12);
    const auto d = game.RoundDetails({a1, a2}, p);
    // The payoff is the largest wrong-class probability of the defended image x2.
    const Eigen::RowVectorXd probs = model->LogProbabilities(x2.data(), 1).row(0).array().exp();
    double wrong = 0;
    for (int c = 0; c < 10; ++c)
      if (c != y) wrong = std::max(wrong, probs(c));
    EXPECT_NEAR(p(0), wrong, 1e-9);
    Eigen::Index arg;
    probs.maxCoeff(&arg);
    EXPECT_EQ(d["success"].get<bool>(), arg != y);
    successes += d["success"].get<bool>();
  }
  EXPECT_EQ(game.queries(), 60);
  EXPECT_GT(successes, 0);   // random latent moves do fool the model sometimes ...
  EXPECT_LT(successes, 60);  // ... but not always
}

TEST(LatentGame, WithoutADefenderTheModelScoresTheAttackersImage) {
  auto model = oracle::Classifier::Load(kRoot + "/models/mnist_cw.pt");
  auto vae = oracle::Autoencoder::Load(kRoot + "/models/mnist_vae.pt", 1, 28, 28);
  data::ImageSet images = data::ReadMnist(kRoot + "/data/mnist/t10k-images-idx3-ubyte.gz",
                                          kRoot + "/data/mnist/t10k-labels-idx1-ubyte.gz", 5);
  LatentGameOptions on, off;
  off.defender_active = false;
  LatentGame with(*model, *vae, *vae, images.image(1), images.labels[1], on);
  LatentGame without(*model, *vae, *vae, images.image(1), images.labels[1], off);
  const Eigen::Vector2d a1(1.5, -1.0), a2(-2.0, 2.0);
  std::vector<float> x1, x2, y1, y2;
  without.Images(a1, a2, &x1, &x2);
  with.Images(a1, a2, &y1, &y2);
  EXPECT_EQ(x1, x2);
  EXPECT_EQ(x1, y1);  // the attacker's image does not depend on the defender
  EXPECT_NE(y1, y2);  // an active defender changes it
  const Eigen::RowVectorXd probs = model->LogProbabilities(x1.data(), 1).row(0).array().exp();
  double wrong = 0;
  for (int c = 0; c < 10; ++c)
    if (c != images.labels[1]) wrong = std::max(wrong, probs(c));
  EXPECT_NEAR(without.Payoffs({a1, a2})(0), wrong, 1e-9);
  EXPECT_NEAR(without.Payoffs({a1, Eigen::Vector2d(0.3, 0.1)})(0), wrong, 1e-9);
}

TEST(Autoencoder, LoadingErrorsNameTheFileAndTheProblem) {
  try {
    oracle::Autoencoder::Load(kRoot + "/models/missing_vae.pt", 1, 28, 28);
    FAIL();
  } catch (const oracle::ModelError& e) {
    EXPECT_NE(std::string(e.what()).find("missing_vae.pt: autoencoder file not found"),
              std::string::npos);
  }
  try {
    oracle::Autoencoder::Load(kRoot + "/models/mnist_cw.pt", 1, 28, 28);  // a classifier
    FAIL();
  } catch (const oracle::ModelError& e) {
    EXPECT_NE(std::string(e.what()).find("no encode() method"), std::string::npos) << e.what();
  }
}

// The purification-strength action (advbo's extension): w = 0 passes the attacker's image
// through, w = 1 is the thesis' move, w = 1/2 lies halfway before the clip.
TEST(LatentGame, StrengthZeroPassesThroughAndOneIsTheThesisMove) {
  auto model = oracle::Classifier::Load(kRoot + "/models/mnist_cw.pt");
  auto vae = oracle::Autoencoder::Load(kRoot + "/models/mnist_vae.pt", 1, 28, 28);
  data::ImageSet images = data::ReadMnist(kRoot + "/data/mnist/t10k-images-idx3-ubyte.gz",
                                          kRoot + "/data/mnist/t10k-labels-idx1-ubyte.gz", 5);
  LatentGameOptions thesis, strength;
  strength.strength_action = true;
  LatentGame plain(*model, *vae, *vae, images.image(2), images.labels[2], thesis);
  LatentGame game(*model, *vae, *vae, images.image(2), images.labels[2], strength);
  ASSERT_EQ(game.space(1).dim(), 3);
  EXPECT_EQ(game.space(1).lower(2), 0.0);
  EXPECT_EQ(game.space(1).upper(2), 1.0);
  EXPECT_EQ(game.space(1).lower(0), -2.0);
  EXPECT_EQ(game.space(0).dim(), 2) << "the attacker's space is unchanged";
  const Eigen::Vector2d a1(0.7, -1.2), move(1.0, 1.5);
  std::vector<float> x1, x2, t1, t2, h1, h2;
  plain.Images(a1, move, &t1, &t2);
  game.Images(a1, Eigen::Vector3d(move(0), move(1), 0.0), &x1, &x2);
  EXPECT_EQ(x1, t1);
  EXPECT_EQ(x2, x1) << "w = 0: the model scores the attacker's image";
  game.Images(a1, Eigen::Vector3d(move(0), move(1), 1.0), &x1, &x2);
  EXPECT_EQ(x2, t2) << "w = 1: the thesis' move";
  game.Images(a1, Eigen::Vector3d(move(0), move(1), 0.5), &h1, &h2);
  double moved = 0;
  for (size_t i = 0; i < h2.size(); ++i) {
    // Halfway to the (clipped) full move wherever the full move was not clipped.
    if (std::abs(t2[i] - t1[i]) < 0.2 - 1e-6) ASSERT_NEAR(h2[i], 0.5f * (t1[i] + t2[i]), 1e-6);
    ASSERT_LE(std::abs(h2[i] - h1[i]), std::abs(t2[i] - t1[i]) + 1e-6);
    moved = std::max(moved, static_cast<double>(std::abs(h2[i] - h1[i])));
  }
  EXPECT_GT(moved, 0.0);
  EXPECT_THROW(game.Images(a1, move, &x1, &x2), std::invalid_argument)
      << "a latent move without its strength";
  const Eigen::VectorXd p = game.Payoffs({a1, Eigen::Vector3d(0, 0, 0.25)});
  EXPECT_NEAR(game.RoundDetails({}, p)["strength"].get<double>(), 0.25, 1e-6);
}

}  // namespace
}  // namespace advbo::defenses
