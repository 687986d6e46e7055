// BO-BOS (Dai 2021 thesis Alg. 4.1) and Hyperband (Li et al. 2017 Alg. 1): the K1 sequence of
// Fig. 4.1, K1 = infinity never stopping, initial points never stopped, C2 computed under the
// GP from before the iteration, the epoch budget; Hyperband's brackets against Li et al.'s
// Table 1 (R = 81, eta = 3) and successive halving keeping the best.
#include "algorithms/bo_bos/bo_bos.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <map>
#include <memory>

#include "algorithms/hyperband/hyperband.h"
#include "bo/kernel.h"
#include "bo/optimal_stopping.h"

namespace advbo::algorithms {
namespace {

// Exponentially decaying learning curves whose final error grows with the distance to
// (0.3, 0.3): e_n = f + (0.9 - f) exp(-0.3 n), f = 0.05 + 0.5 |x - 0.3|^2.
double FinalError(const Eigen::VectorXd& x) {
  return 0.05 + 0.5 * (x.array() - 0.3).square().sum();
}
CurveObjective Curves(int* calls = nullptr) {
  return [calls](const Eigen::VectorXd& x, int max_epochs, const EpochReport& report) {
    if (calls) ++*calls;
    const double f = FinalError(x);
    for (int n = 1; n <= max_epochs; ++n)
      if (!report(n, f + (0.9 - f) * std::exp(-0.3 * n))) return;
  };
}

BoBosOptions Small() {
  BoBosOptions o;
  o.num_paths = 4000;
  o.epoch_budget = 600;
  o.acquisition_optimizer.num_candidates = 200;
  o.acquisition_optimizer.num_starts = 2;
  o.beta = {bo::BetaPolicy::kConstant, 100.0, 0.1};  // explore: visit bad configurations too
  return o;
}

TEST(BoBos, K1SequenceIsFig41AndBos2KeepsItsOwn) {
  BoBosOptions o;
  EXPECT_DOUBLE_EQ(BoBosK1(o, 1), 100.0);
  EXPECT_DOUBLE_EQ(BoBosK1(o, 2), 100.0 / 0.95);
  EXPECT_NEAR(BoBosK1(o, 6), 100.0 / std::pow(0.95, 5), 1e-9);
  o.gamma = 1.0;
  EXPECT_DOUBLE_EQ(BoBosK1(o, 40), 100.0);  // sequence (d): constant
  // The decision table applies the same K1 with BO-BOS' exponent offset, and BOS^2's
  // default (offset 0) stays k1_base / decay^t.
  bo::Rng rng(1);
  Eigen::VectorXd warm(8);
  for (int i = 0; i < 8; ++i) warm(i) = 0.5 * std::exp(-0.2 * i) + 0.1;
  bo::BosOptions bos;
  bos.num_paths = 500;
  bos.k1_decay = 0.95;
  bos.k1_exponent_offset = -1;
  EXPECT_NEAR(bo::BosDecisionTable::Solve(warm, 50, 0.2, 3, bos, rng).k1(), 100 / 0.95 / 0.95,
              1e-9);
  bo::BosOptions bos2;
  bos2.num_paths = 500;
  EXPECT_NEAR(bo::BosDecisionTable::Solve(warm, 50, 0.2, 3, bos2, rng).k1(),
              100 / std::pow(0.99, 3), 1e-9);
}

TEST(BoBos, SummaryStatisticFromFirstEpochIsTheRunningMean) {
  bo::Rng rng(2);
  Eigen::VectorXd warm(4);
  warm << 0.8, 0.6, 0.5, 0.45;
  bo::BosOptions bos;
  bos.num_paths = 300;
  bos.summary_from_first_step = true;
  const auto table = bo::BosDecisionTable::Solve(warm, 10, 0.3, 1, bos, rng);
  Eigen::VectorXd curve(6);
  curve << 0.8, 0.6, 0.5, 0.45, 0.4, 0.2;
  EXPECT_NEAR(table.SummaryStatistic(curve), curve.mean(), 1e-15);
  bos.summary_from_first_step = false;
  const auto post = bo::BosDecisionTable::Solve(warm, 10, 0.3, 1, bos, rng);
  EXPECT_NEAR(post.SummaryStatistic(curve), 0.3, 1e-15);
}

TEST(BoBos, StopsBadRunsButNeverInitialPointsAndNeverWithInfiniteK1) {
  bo::Rng rng(3);
  BoBosOptions o = Small();
  const BoBosResult res =
      RunBoBos(Curves(), Eigen::VectorXd::Zero(2), Eigen::VectorXd::Ones(2), o, rng);
  int stopped = 0, total = 0;
  for (const auto& r : res.records) {
    total += r.epochs;
    EXPECT_EQ(r.epochs_total, total);
    EXPECT_EQ(static_cast<int>(r.curve.size()), r.epochs);
    if (r.phase == "init") {
      EXPECT_EQ(r.epochs, o.max_epochs) << "initial point " << r.evaluation << " was stopped";
      EXPECT_FALSE(r.early_stopped);
    }
    if (r.early_stopped) {
      ++stopped;
      EXPECT_GT(r.epochs, o.warmup_epochs);
      EXPECT_LT(r.epochs, o.max_epochs);
      EXPECT_TRUE(r.c2[r.epochs - 1]);          // C2 held where it stopped
      EXPECT_GT(FinalError(r.x), r.threshold);  // and the stop was right (theta_1 held)
    }
  }
  EXPECT_EQ(res.epochs_used, total);
  EXPECT_LE(res.epochs_used, o.epoch_budget);
  EXPECT_GT(stopped, 0) << "a finite K1 should stop some clearly worse runs";

  bo::Rng rng2(3);
  o.k1_first = std::numeric_limits<double>::infinity();
  const BoBosResult never =
      RunBoBos(Curves(), Eigen::VectorXd::Zero(2), Eigen::VectorXd::Ones(2), o, rng2);
  for (const auto& r : never.records) {
    EXPECT_FALSE(r.early_stopped);
    if (!r.budget_cut) EXPECT_EQ(r.epochs, o.max_epochs);
  }
}

TEST(BoBos, C2IsComputedUnderTheGpFromBeforeTheIteration) {
  bo::Rng rng(4);
  BoBosOptions o = Small();
  o.fit_hyperparameters = false;  // the GP is then a function of its data alone
  o.epoch_budget = 400;
  const BoBosResult res =
      RunBoBos(Curves(), Eigen::VectorXd::Zero(2), Eigen::VectorXd::Ones(2), o, rng);
  auto gp_from = [&](size_t upto) {  // the GP of records [0, upto)
    bo::ExactGP gp(std::make_unique<bo::StationaryKernel>(bo::KernelFamily::kMatern52, 3, true,
                                                          std::vector<int>{}, 0.2, 1.0),
                   o.noise_variance, true);
    for (size_t i = 0; i < upto; ++i) {
      const auto& r = res.records[i];
      for (int e : o.intermediate_epochs)
        if (e < r.epochs) {
          Eigen::Vector3d z(r.x(0), r.x(1), double(e) / o.max_epochs);
          gp.AddObservation(z, -r.curve[e - 1]);
        }
      gp.AddObservation(Eigen::Vector3d(r.x(0), r.x(1), double(r.epochs) / o.max_epochs), -r.error);
    }
    return gp;
  };
  int checked = 0, differs_from_new = 0;
  for (size_t i = 0; i < res.records.size(); ++i) {
    const auto& r = res.records[i];
    if (r.phase != "bo") continue;
    const auto old_c2 = BoBosC2(gp_from(i), r.x, o.max_epochs, o.kappa);
    EXPECT_EQ(r.c2, old_c2) << "evaluation " << r.evaluation;
    differs_from_new += BoBosC2(gp_from(i + 1), r.x, o.max_epochs, o.kappa) != old_c2;
    ++checked;
  }
  EXPECT_GT(checked, 3);
  EXPECT_GT(differs_from_new, 0) << "the test cannot tell the old GP from the updated one";
}

TEST(BoBos, WithoutEarlyStoppingItIsGpUcbOnFullRuns) {
  bo::Rng rng(5);
  BoBosOptions o = Small();
  o.early_stopping = false;
  o.epoch_budget = 520;
  const BoBosResult res =
      RunBoBos(Curves(), Eigen::VectorXd::Zero(2), Eigen::VectorXd::Ones(2), o, rng);
  ASSERT_EQ(res.records.size(), 11u);  // 10 full runs + one cut at the budget
  for (size_t i = 0; i + 1 < res.records.size(); ++i) EXPECT_EQ(res.records[i].epochs, 50);
  EXPECT_TRUE(res.records.back().budget_cut);
  EXPECT_EQ(res.records.back().epochs, 20);
  EXPECT_EQ(res.epochs_used, 520);
}

TEST(BoBos, RejectsBadOptionsAndBadErrors) {
  bo::Rng rng(6);
  const Eigen::VectorXd lb = Eigen::VectorXd::Zero(2), ub = Eigen::VectorXd::Ones(2);
  for (auto mutate : std::vector<std::function<void(BoBosOptions&)>>{
           [](BoBosOptions& o) { o.kappa = 0.5; }, [](BoBosOptions& o) { o.gamma = 0; },
           [](BoBosOptions& o) { o.gamma = 1.1; }, [](BoBosOptions& o) { o.warmup_epochs = 50; },
           [](BoBosOptions& o) { o.k1_first = -1; }, [](BoBosOptions& o) { o.epoch_budget = 0; },
           [](BoBosOptions& o) { o.intermediate_epochs = {50}; }}) {
    BoBosOptions o = Small();
    mutate(o);
    EXPECT_THROW(RunBoBos(Curves(), lb, ub, o, rng), std::invalid_argument);
  }
  const CurveObjective nan_curve = [](const Eigen::VectorXd&, int, const EpochReport& r) {
    r(1, std::nan(""));
  };
  EXPECT_THROW(RunBoBos(nan_curve, lb, ub, Small(), rng), std::runtime_error);
}

TEST(Hyperband, BracketsMatchLiEtAlTable1) {
  EXPECT_EQ(HyperbandSMax(81, 3), 4);
  EXPECT_EQ(HyperbandSMax(80, 3), 3);
  EXPECT_EQ(HyperbandSMax(1, 3), 0);
  using R = std::vector<std::pair<int, int>>;
  EXPECT_EQ(HyperbandRungs(81, 3, 4), (R{{81, 1}, {27, 3}, {9, 9}, {3, 27}, {1, 81}}));
  EXPECT_EQ(HyperbandRungs(81, 3, 3), (R{{34, 3}, {11, 9}, {3, 27}, {1, 81}}));
  EXPECT_EQ(HyperbandRungs(81, 3, 2), (R{{15, 9}, {5, 27}, {1, 81}}));
  EXPECT_EQ(HyperbandRungs(81, 3, 1), (R{{8, 27}, {2, 81}}));
  EXPECT_EQ(HyperbandRungs(81, 3, 0), (R{{5, 81}}));
  EXPECT_EQ(HyperbandRungs(80, 3, 3), (R{{27, 3}, {9, 9}, {3, 27}, {1, 80}}));
}

TEST(Hyperband, PromotesTheBestAndRespectsTheBudget) {
  bo::Rng rng(7);
  HyperbandOptions o;
  o.epoch_budget = 1500;
  const auto res =
      RunHyperband(Curves(), Eigen::VectorXd::Zero(2), Eigen::VectorXd::Ones(2), o, rng);
  EXPECT_LE(res.epochs_used, 1500);
  EXPECT_GT(res.epochs_used, 1500 - 80);
  // Per (round, bracket, rung): the configurations promoted to rung i + 1 are the
  // floor(n_i / 3) best of rung i.
  std::map<std::tuple<int, int, int>, std::vector<std::pair<double, int>>> rungs;
  int charged = 0;
  for (const auto& r : res.records) {
    rungs[{r.round, r.bracket, r.rung}].emplace_back(r.error, r.config);
    charged += r.epochs_charged;
  }
  EXPECT_EQ(charged, res.epochs_used);
  int checked = 0;
  for (auto& [key, members] : rungs) {
    auto next = rungs.find({std::get<0>(key), std::get<1>(key), std::get<2>(key) + 1});
    if (next == rungs.end()) continue;
    std::sort(members.begin(), members.end());
    std::vector<int> best, promoted;
    for (size_t j = 0; j < next->second.size(); ++j) {
      best.push_back(members[j].second);
      promoted.push_back(next->second[j].second);
    }
    std::sort(best.begin(), best.end());
    std::sort(promoted.begin(), promoted.end());
    EXPECT_EQ(best, promoted);
    ++checked;
  }
  EXPECT_GT(checked, 3);
  // resume = false charges every run in full.
  bo::Rng rng2(7);
  o.resume = false;
  const auto restart =
      RunHyperband(Curves(), Eigen::VectorXd::Zero(2), Eigen::VectorXd::Ones(2), o, rng2);
  for (const auto& r : restart.records) EXPECT_EQ(r.epochs_charged, r.epochs);
}

}  // namespace
}  // namespace advbo::algorithms
