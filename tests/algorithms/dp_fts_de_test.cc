// DP-FTS-DE (Dai 2021 thesis, Ch. 6): the Renyi-DP accountant against the Fig. 6.4 caption's
// printed privacy losses and the Gaussian closed form, and the server step of Alg. 6.1
// (clipping bound per block, noise standard deviation, subsampling rate, the weighted sum).
#include "algorithms/dp_fts_de/dp_fts_de.h"

#include <gtest/gtest.h>

#include <cmath>
#include <stdexcept>
#include <vector>

namespace advbo::algorithms {
namespace {

TEST(DpFtsDe, AccountantMatchesThePrintedPrivacyLosses) {
  const double delta = std::pow(200.0, -1.1);
  EXPECT_NEAR(PrivacyLossOf(0.15, 1.0, 40, delta).epsilon, 5.93, 0.005);
  EXPECT_NEAR(PrivacyLossOf(0.25, 1.0, 40, delta).epsilon, 9.91, 0.005);
  EXPECT_NEAR(PrivacyLossOf(0.5, 1.0, 40, delta).epsilon, 20.12, 0.005);
  EXPECT_NEAR(PrivacyLossOf(0.25, 1.2, 40, delta).epsilon, 7.39, 0.005);
  EXPECT_NEAR(PrivacyLossOf(0.25, 1.5, 40, delta).epsilon, 5.22, 0.005);
}

TEST(DpFtsDe, RdpClosedFormsAndMonotonicity) {
  for (int a : {2, 5, 32}) {
    EXPECT_NEAR(SampledGaussianRdp(1.0, 1.3, a), a / (2 * 1.3 * 1.3), 1e-12);
    EXPECT_EQ(SampledGaussianRdp(0.0, 1.3, a), 0.0);
    // q -> 1 from below approaches the Gaussian mechanism
    EXPECT_NEAR(SampledGaussianRdp(1 - 1e-12, 1.3, a), a / (2 * 1.3 * 1.3), 1e-6);
    EXPECT_LT(SampledGaussianRdp(0.1, 1.3, a), SampledGaussianRdp(0.2, 1.3, a));
    EXPECT_GT(SampledGaussianRdp(0.1, 1.0, a), SampledGaussianRdp(0.1, 2.0, a));
  }
  // alpha = 2: log(1 + q^2 (e^{1/z^2} - 1)) exactly.
  EXPECT_NEAR(SampledGaussianRdp(0.3, 0.8, 2), std::log(1 + 0.09 * (std::exp(1 / 0.64) - 1)),
              1e-12);
  const double delta = 1e-5;
  EXPECT_LT(PrivacyLossOf(0.25, 1, 10, delta).epsilon, PrivacyLossOf(0.25, 1, 20, delta).epsilon);
  EXPECT_THROW(SampledGaussianRdp(0.5, 1.0, 1), std::invalid_argument);
  EXPECT_THROW(SampledGaussianRdp(1.5, 1.0, 2), std::invalid_argument);
  EXPECT_THROW(SampledGaussianRdp(0.5, 0.0, 2), std::invalid_argument);
  EXPECT_THROW(PrivacyLossOf(0.5, 1.0, 10, 1.0), std::invalid_argument);
}

TEST(DpFtsDe, ClippingBoundsEveryBlock) {
  Eigen::VectorXd w(3);
  w << 3, 4, 0;  // norm 5
  EXPECT_NEAR(ClipToNorm(w, 2.0).norm(), 2.0, 1e-12);
  EXPECT_EQ(ClipToNorm(w, 7.0), w);
  // Without noise and with q = 1, one agent and weight 1 the output is its clipped vector:
  // norm <= S / sqrt(P) per block.
  for (int p : {1, 2, 4}) {
    ServerOptions o{1.0, 0.0, 11.0};
    bo::Rng rng(1);
    const ServerRound r = AggregateMessages({w * 10}, Eigen::MatrixXd::Ones(p, 1), o, rng);
    for (int i = 0; i < p; ++i) EXPECT_LE(r.joint.row(i).norm(), 11.0 / std::sqrt(p) + 1e-12);
    EXPECT_EQ(r.clipped, 1);
  }
}

// Noise: all-zero messages leave pure noise of std z phi_max S / q; 10^5 draws within 1 %.
TEST(DpFtsDe, NoiseStandardDeviationAndSamplingRate) {
  const int n = 400, m = 250, p = 2;
  std::vector<Eigen::VectorXd> msgs(n, Eigen::VectorXd::Zero(m));
  Eigen::MatrixXd weights = Eigen::MatrixXd::Constant(p, n, 0.5);
  weights(1, 3) = 0.8;  // phi_max
  ServerOptions o{0.25, 1.2, 11.0};
  double sum2 = 0;
  int count = 0, selected = 0;
  bo::Rng rng(2);
  for (int round = 0; round < 200; ++round) {
    const ServerRound r = AggregateMessages(msgs, weights, o, rng);
    sum2 += r.joint.squaredNorm();
    count += static_cast<int>(r.joint.size());
    selected += static_cast<int>(r.selected.size());
    EXPECT_EQ(r.clipped, 0);
  }
  const double sd = std::sqrt(sum2 / count), want = 1.2 * 0.8 * 11.0 / 0.25;
  EXPECT_EQ(count, 100000);
  EXPECT_NEAR(sd / want, 1.0, 0.01);
  EXPECT_NEAR(selected / (200.0 * n), 0.25, 0.01);
}

// Without noise the region vectors are q^-1 sum_{selected} phi_n^(i) omega_n.
TEST(DpFtsDe, WeightedSumOfTheSelectedAgents) {
  std::vector<Eigen::VectorXd> msgs = {Eigen::Vector2d(1, 0), Eigen::Vector2d(0, 1),
                                       Eigen::Vector2d(1, 1)};
  Eigen::MatrixXd w(2, 3);
  w << 0.6, 0.3, 0.1, 0.1, 0.2, 0.7;
  ServerOptions o{0.5, 0.0, 100.0};
  bo::Rng rng(3);
  const ServerRound r = AggregateMessages(msgs, w, o, rng);
  Eigen::MatrixXd want = Eigen::MatrixXd::Zero(2, 2);
  for (int i : r.selected) want += (w.col(i) / 0.5) * msgs[i].transpose();
  EXPECT_LT((r.joint - want).norm(), 1e-12);
  EXPECT_THROW(AggregateMessages({}, w, o, rng), std::invalid_argument);
  EXPECT_THROW(AggregateMessages(msgs, w.leftCols(2), o, rng), std::invalid_argument);
  EXPECT_THROW(AggregateMessages(msgs, w, {0.0, 1.0, 1.0}, rng), std::invalid_argument);
}

}  // namespace
}  // namespace advbo::algorithms
