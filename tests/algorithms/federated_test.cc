// The federated loop (Dai 2021 thesis, Ch. 5 general setting and Ch. 6): the distributed
// exploration schedule's printed values, regions, reproducibility across thread counts, local
// initialisation, the sources of each round's picks, and that the pathwise posterior draw used
// for the agents' own TS has the exact GP posterior mean and variance.
#include "algorithms/fts/federated.h"

#include <gtest/gtest.h>
#include <tbb/global_control.h>

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <vector>

#include "bo/grid_sample.h"

namespace advbo::algorithms {
namespace {

TEST(Federated, DeWeightScheduleOfTheThesis) {
  // a = 16 for t = 1..5, then 16, 12.25, 8.5, 4.75, 1 for t = 6..10 (App. C.2).
  const std::vector<double> want = {16, 16, 16, 16, 16, 16, 16, 12.25, 8.5, 4.75, 1, 1};
  for (int t = 0; t < 12; ++t) EXPECT_NEAR(DeWeightExponent(t, 5, 5), want[t], 1e-12) << t;
  EXPECT_EQ(DeWeightExponent(11, 10, 30), 16);
  EXPECT_EQ(DeWeightExponent(40, 10, 30), 1);
  EXPECT_THROW(DeWeightExponent(1, 5, 1), std::invalid_argument);
}

TEST(Federated, RegionsAreEqualSlabs) {
  const Eigen::MatrixXd x = Eigen::VectorXd::LinSpaced(1000, 0, 1);
  const auto r = DomainRegions(x, 3);
  EXPECT_EQ(r.front(), 0);
  EXPECT_EQ(r.back(), 2);
  int counts[3] = {0, 0, 0};
  for (int v : r) ++counts[v];
  for (int c : counts) EXPECT_NEAR(c, 333, 1);
}

struct Problem {
  Eigen::MatrixXd x;
  Eigen::VectorXd f;
};

Problem Synthetic(int k) {
  Problem p;
  p.x = Eigen::VectorXd::LinSpaced(k, 0, 1);
  bo::Rng rng(3);
  p.f = bo::SampleGpOnGrid(p.x.col(0), Eigen::VectorXd::Zero(1), 0.05, 1.0, rng).col(0);
  return p;
}

// Same seed, different thread counts: identical rounds; local init stays in the agent's region;
// sources match the algorithm.
TEST(Federated, ReproducibleAndSourcesMatchTheAlgorithm) {
  const Problem p = Synthetic(200);
  auto f = [&](int a, int i) { return p.f(i) + 0.01 * a; };
  FederatedOptions o;
  o.rounds = 8;
  o.initial_points = 3;
  o.features = 40;
  o.lengthscale = 0.05;
  o.schedule = FtsSchedule::kConstant;
  o.constant_p = 0.5;
  std::vector<FederatedRound> one, two;
  {
    tbb::global_control c(tbb::global_control::max_allowed_parallelism, 1);
    one = RunFederated(p.x, 6, f, o, 11);
  }
  two = RunFederated(p.x, 6, f, o, 11);
  ASSERT_EQ(one.size(), 9u);
  for (size_t t = 0; t < one.size(); ++t) {
    EXPECT_EQ(one[t].index, two[t].index);
    EXPECT_EQ(one[t].source, two[t].source);
  }
  const auto regions = DomainRegions(p.x, o.regions);
  for (int a = 0; a < 6; ++a) EXPECT_EQ(regions[one[0].index[a]], a % o.regions);
  int server = 0, own = 0;
  for (size_t t = 1; t < one.size(); ++t)
    for (int s : one[t].source) {
      EXPECT_TRUE(s == -1 || s == -2);
      (s == -2 ? server : own) += 1;
    }
  EXPECT_GT(server, 0);
  EXPECT_GT(own, 0);

  o.algo = FederatedAlgo::kFts;
  for (const auto& r : RunFederated(p.x, 6, f, o, 12))
    for (int a = 0; a < 6; ++a) EXPECT_NE(r.source[a], a);  // never its own message
  o.algo = FederatedAlgo::kTs;
  for (const auto& r : RunFederated(p.x, 6, f, o, 12))
    for (int s : r.source) EXPECT_EQ(s, -1);
  o.rounds = 0;
  EXPECT_THROW(RunFederated(p.x, 6, f, o, 12), std::invalid_argument);
}

// With p = 1 every agent runs TS alone: the picks concentrate near the maximiser (the
// pathwise draws are exact posterior samples; a wrong conditioning would not converge).
TEST(Federated, ThompsonSamplingAloneFindsTheMaximum) {
  const Problem p = Synthetic(300);
  FederatedOptions o;
  o.algo = FederatedAlgo::kTs;
  o.rounds = 30;
  o.initial_points = 2;
  o.lengthscale = 0.05;
  o.noise_variance = 1e-4;
  const auto rounds = RunFederated(
      p.x, 4, [&](int, int i) { return p.f(i); }, o, 5);
  const double fmax = p.f.maxCoeff(), fsd = std::sqrt((p.f.array() - p.f.mean()).square().mean());
  for (int a = 0; a < 4; ++a) {
    double best = -1e300;
    for (const auto& r : rounds) best = std::max(best, p.f(r.index[a]));
    EXPECT_LT(fmax - best, 0.05 * fsd) << "agent " << a;
  }
}

}  // namespace
}  // namespace advbo::algorithms
