#include "attacks/bo_hard_label/bo_hard_label.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <stdexcept>
#include <utility>
#include <vector>

#include "attacks/hsja/hsja.h"
#include "attacks/rays/rays.h"
#include "bo/acquisition.h"
#include "bo/gp.h"
#include "bo/hyperparameters.h"
#include "bo/kernel.h"

namespace advbo::attacks {
namespace {

// Candidates for the next direction: random vertices and small flips of the best ones.
Eigen::MatrixXd Candidates(const Eigen::MatrixXd& x, const Eigen::VectorXd& y, int dim,
                           bo::Rng& rng) {
  constexpr int kRandom = 500, kBest = 5, kFlips = 100;
  std::bernoulli_distribution coin(0.5);
  std::uniform_int_distribution<int> pick(0, dim - 1), count(1, 3);
  std::vector<int> order(y.size());
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(), [&](int a, int b) { return y(a) < y(b); });
  const int best = std::min<int>(kBest, static_cast<int>(order.size()));
  Eigen::MatrixXd c(kRandom + best * kFlips, dim);
  for (int i = 0; i < kRandom; ++i)
    for (int k = 0; k < dim; ++k) c(i, k) = coin(rng) ? 1.0 : -1.0;
  for (int b = 0; b < best; ++b)
    for (int f = 0; f < kFlips; ++f) {
      const int row = kRandom + b * kFlips + f;
      c.row(row) = x.row(order[b]);
      for (int n = count(rng); n > 0; --n) c(row, pick(rng)) *= -1;
    }
  return c;
}

}  // namespace

std::vector<float> UpsampleSigns(const Eigen::VectorXd& z, int channels, int height, int width,
                                 int side) {
  std::vector<float> d(static_cast<size_t>(channels) * height * width);
  for (int c = 0; c < channels; ++c)
    for (int i = 0; i < height; ++i)
      for (int j = 0; j < width; ++j)
        d[(static_cast<size_t>(c) * height + i) * width + j] = static_cast<float>(
            z((static_cast<Eigen::Index>(c) * side + i * side / height) * side + j * side / width));
  return d;
}

void BoHardLabelOptions::Validate(const std::string& name) const {
  if (side < 1 || side > 64)
    throw std::invalid_argument("attack '" + name + "': side must be in [1, 64]");
  if (!(bo_fraction >= 0 && bo_fraction <= 1))
    throw std::invalid_argument("attack '" + name + "': bo_fraction must be in [0, 1]");
  if (bo_max_queries < 0)
    throw std::invalid_argument("attack '" + name + "': bo_max_queries must be >= 0");
  if (patience < 0) throw std::invalid_argument("attack '" + name + "': patience must be >= 0");
  if (fit_every < 1) throw std::invalid_argument("attack '" + name + "': fit_every must be >= 1");
}

BoHardLabelAttack::BoHardLabelAttack(BoHardLabelOptions options, std::string name)
    : LabelAttack(std::move(name), {oracle::Norm::kLinf}), options_(options) {
  options_.Validate(this->name());
}

AttackResult BoHardLabelAttack::Run(oracle::QueryOracle& oracle, bo::Rng& rng,
                                    const AttackProgress& progress) const {
  const double t0 = NowSeconds();
  const int c = oracle.model().channels(), h = oracle.model().height(), w = oracle.model().width();
  const int s = std::min({options_.side, h, w}), dim = c * s * s;
  RaySearch search(oracle, 1e-3);
  const long bo_budget = std::min(static_cast<long>(options_.bo_fraction * oracle.budget()),
                                  static_cast<long>(options_.bo_max_queries));
  bo::ExactGP gp(std::make_unique<bo::StationaryKernel>(bo::KernelFamily::kMatern52, dim, false,
                                                        std::vector<int>{}, 1.0, 1.0),
                 1e-4);
  bo::ExplorationWeight beta{bo::BetaPolicy::kKandasamy2015};
  bo::FitOptions fit;
  fit.restarts = 1;
  Eigen::MatrixXd x(0, dim);
  Eigen::VectorXd y(0);
  Eigen::VectorXd z = Eigen::VectorXd::Ones(dim), best_z = z;
  double best = std::numeric_limits<double>::infinity();
  std::bernoulli_distribution coin(0.5);
  int t = 0;
  auto stop = [&] { return oracle.remaining() <= 0 || oracle.succeeded(); };
  while (!stop() && oracle.queries() < bo_budget) {
    ++t;
    if (t > 1 && t <= 5) {
      for (int k = 0; k < dim; ++k) z(k) = coin(rng) ? 1.0 : -1.0;
    } else if (t > 5) {
      const Eigen::MatrixXd cand = Candidates(x, y, dim, rng);
      Eigen::VectorXd mean, var;
      gp.Predict(cand, &mean, &var);
      const double b = std::sqrt(beta.Beta(t, dim));
      Eigen::Index arg;
      (mean.array() - b * var.array().max(0).sqrt()).minCoeff(&arg);
      z = cand.row(arg).transpose();
    }
    const double r = search.Search(UpsampleSigns(z, c, h, w, s), best);
    if (!std::isfinite(r)) continue;  // no boundary within radius 1: nothing to observe
    if (r < best) best = r, best_z = z;
    x.conservativeResize(x.rows() + 1, Eigen::NoChange);
    x.row(x.rows() - 1) = z.transpose();
    y.conservativeResize(y.size() + 1);
    y(y.size() - 1) = r;
    gp.AddObservation(z, r);  // O(N^2) Cholesky row-append, not a refactorisation
    if (x.rows() % options_.fit_every == 0) bo::FitHyperparameters(&gp, fit, rng);
    if (progress) progress(oracle.queries(), oracle.best_objective());
  }
  const double after_bo = best;
  std::vector<float> d = UpsampleSigns(best_z, c, h, w, s);
  if (!stop()) {
    if (!std::isfinite(best)) best = search.Search(d, best);
    best = search.Hierarchical(&d, best, progress, options_.patience);
  }
  long hsja_from = -1;
  if (!stop() && std::isfinite(best)) {
    // RayS stalled (a plateau of sign directions: under 8-bit queries the radius moves in
    // whole grid steps): HopSkipJump's continuous steps from its closest adversarial point.
    hsja_from = oracle.queries();
    std::vector<float> start(oracle.clean());
    for (size_t k = 0; k < start.size(); ++k)
      start[k] = std::clamp(start[k] + static_cast<float>(best) * d[k], 0.0f, 1.0f);
    HsjaIterate(oracle, HsjaOptions{}, std::move(start), rng, progress);
  }
  AttackResult r;
  FinishResult(oracle, t0, &r);
  r.details["bo_hl_evaluations"] = t;
  r.details["bo_hl_hsja_from"] =
      hsja_from >= 0 ? nlohmann::json(hsja_from) : nlohmann::json(nullptr);
  r.details["bo_hl_radius_after_bo"] =
      std::isfinite(after_bo) ? nlohmann::json(after_bo) : nlohmann::json(nullptr);
  return r;
}

}  // namespace advbo::attacks
