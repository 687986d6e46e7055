#include "algorithms/fts/federated_study.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <random>

#include "algorithms/hpo/hpo_task.h"
#include "bo/grid_sample.h"

namespace advbo::algorithms {
namespace {

std::string Fixed(double v, int prec) {
  char b[64];
  std::snprintf(b, sizeof b, "%.*f", prec, v);
  return b;
}

}  // namespace

void FamilyOptions::Validate() const {
  if (agents < 1) throw std::invalid_argument("--agents must be >= 1");
  if (domain < 0) throw std::invalid_argument("--domain must be >= 0 (0 = the default)");
  if (!(lengthscale > 0) || !std::isfinite(lengthscale))
    throw std::invalid_argument("--lengthscale must be > 0");
  if (!(gap >= 0) || !std::isfinite(gap)) throw std::invalid_argument("--gap must be >= 0");
  if (!(noise > 0) || !std::isfinite(noise)) throw std::invalid_argument("--noise must be > 0");
}

std::unique_ptr<AgentFamily> SyntheticFamily(const FamilyOptions& o) {
  o.Validate();
  auto fam = std::make_unique<AgentFamily>();
  const int k = o.domain > 0 ? o.domain : 1000;
  fam->x = Eigen::VectorXd::LinSpaced(k, 0, 1);
  bo::Rng rng(bo::DeriveSeed(o.seed, 0x6a6d));
  Eigen::VectorXd f =
      bo::SampleGpOnGrid(fam->x.col(0), Eigen::VectorXd::Zero(1), o.lengthscale, 1.0, rng).col(0);
  f = (f.array() - f.minCoeff()) / (f.maxCoeff() - f.minCoeff());
  auto g = std::make_shared<Eigen::MatrixXd>(k, o.agents);
  std::bernoulli_distribution coin(0.5);
  for (int n = 0; n < o.agents; ++n)
    for (int i = 0; i < k; ++i) (*g)(i, n) = f(i) + (coin(rng) ? o.gap : -o.gap);
  for (int n = 0; n < o.agents; ++n) fam->maximum.push_back(g->col(n).maxCoeff());
  // One noise engine per agent, used only from that agent's thread.
  auto noise_rngs = std::make_shared<std::vector<bo::Rng>>();
  for (int n = 0; n < o.agents; ++n) noise_rngs->emplace_back(bo::DeriveSeed(o.seed, 0x4e00 + n));
  const double sd = std::sqrt(o.noise);
  fam->truth = [g](int n, int i) { return (*g)(i, n); };
  fam->evaluate = [g, noise_rngs, sd](int n, int i) {
    std::normal_distribution<double> e(0.0, sd);
    return (*g)(i, n) + e((*noise_rngs)[n]);
  };
  fam->description = "synthetic: GP draw (SE, l = " + Fixed(o.lengthscale, 3) + ") on " +
                     std::to_string(k) + " points, agents f +- " + Fixed(o.gap, 3);
  fam->config = {{"domain", k}, {"gap", o.gap}};
  return fam;
}

std::unique_ptr<AgentFamily> MnistLssvmFamily(const FamilyOptions& o) {
  o.Validate();
  auto fam = std::make_unique<AgentFamily>();
  const int side = o.domain > 0 ? static_cast<int>(std::lround(std::sqrt(o.domain))) : 30;
  fam->x.resize(side * side, 2);
  for (int i = 0; i < side; ++i)
    for (int j = 0; j < side; ++j) fam->x.row(i * side + j) << (i + 0.5) / side, (j + 0.5) / side;
  auto tasks = std::make_shared<std::vector<std::unique_ptr<hpo::HpoTask>>>();
  for (int n = 0; n < o.agents; ++n) {
    hpo::TaskOptions t;
    t.mnist_dir = o.mnist_dir;
    t.offset = 500 * n;
    t.examples = 500;
    t.seed = o.seed;
    t.transform = n % 4 == 3 ? "invert-noise" : "none";
    tasks->push_back(hpo::MakeTask("mnist-lssvm", t));
  }
  const Eigen::VectorXd lo = (*tasks)[0]->SearchLower(), hi = (*tasks)[0]->SearchUpper();
  const Eigen::MatrixXd x = fam->x;
  auto score = [tasks, x, lo, hi](int n, int i) {
    const Eigen::VectorXd u = x.row(i).transpose();
    const Eigen::VectorXd s = lo + u.cwiseProduct(hi - lo);
    return -(*tasks)[n]->Evaluate((*tasks)[n]->ToNatural(s), 50, {}).back();
  };
  fam->truth = score;
  fam->evaluate = score;
  fam->best_label = "mean best validation error";
  fam->report_sign = -1;
  fam->description =
      "mnist-lssvm: RBF LS-SVM (C, lengthscale) per agent on 500 MNIST images, "
      "every 4th agent inverted + noise; objective -validation error";
  fam->config = {{"domain", side * side}, {"images_per_agent", 500}, {"mnist_dir", o.mnist_dir}};
  return fam;
}

StudyCurves RunFederatedStudy(
    const AgentFamily& fam, int agents, const FederatedOptions& options, uint64_t seed,
    const std::function<void(const nlohmann::json& record, double mean)>& on_round) {
  const int n = agents;
  std::vector<double> best(n, -1e300);
  StudyCurves c;
  const auto t0 = std::chrono::steady_clock::now();
  RunFederated(fam.x, n, fam.evaluate, options, seed, [&](const FederatedRound& r) {
    std::vector<double> score(n);
    for (int m = 0; m < n; ++m) {
      best[m] = std::max(best[m], fam.truth(m, r.index[m]));
      score[m] = fam.maximum.empty() ? fam.report_sign * best[m] : fam.maximum[m] - best[m];
    }
    double mean = 0, var = 0;
    for (double s : score) mean += s / n;
    for (double s : score) var += (s - mean) * (s - mean) / std::max(1, n - 1);
    c.mean.push_back(mean);
    c.se.push_back(std::sqrt(var / n));
    c.clipped += r.clipped;
    c.selected += static_cast<long>(r.selected.size());
    nlohmann::json rec = {{"round", r.round},
                          {"index", r.index},
                          {"y", r.y},
                          {"source", r.source},
                          {"selected", r.selected.size()},
                          {"clipped", r.clipped}};
    rec[fam.maximum.empty() ? "mean_best" : "mean_simple_regret"] = mean;
    if (on_round) on_round(rec, mean);
    return true;
  });
  c.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return c;
}

}  // namespace advbo::algorithms
