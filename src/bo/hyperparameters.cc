#include "bo/hyperparameters.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <optional>
#include <stdexcept>

#include "bo/optimize.h"

namespace advbo::bo {

ExactGP SubsetOf(const ExactGP& gp, int max_points, Rng& rng) {
  if (max_points <= 0 || gp.num_data() <= max_points) return gp;
  ExactGP sub(gp.kernel().Clone(), gp.noise_variance(), gp.standardize());
  std::vector<int> idx(gp.num_data());
  std::iota(idx.begin(), idx.end(), 0);
  std::shuffle(idx.begin(), idx.end(), rng);
  idx.resize(max_points);
  std::sort(idx.begin(), idx.end());
  Eigen::MatrixXd xs(max_points, gp.X().cols());
  Eigen::VectorXd ys(max_points);
  for (int i = 0; i < max_points; ++i) {
    xs.row(i) = gp.X().row(idx[i]);
    ys(i) = gp.y()(idx[i]);
  }
  sub.SetData(xs, ys);
  return sub;
}

FitResult FitHyperparameters(ExactGP* gp, const FitOptions& opt, Rng& rng) {
  if (gp == nullptr || gp->num_data() < 1)
    throw std::invalid_argument("FitHyperparameters: the GP has no data");
  // Optional subset for the likelihood.
  std::optional<ExactGP> subset;
  if (opt.max_points > 0 && gp->num_data() > opt.max_points)
    subset = SubsetOf(*gp, opt.max_points, rng);
  const ExactGP& sub = subset ? *subset : *gp;
  const PairwiseCache cache = sub.kernel().Precompute(sub.X());
  const std::vector<ParamKind> kinds = sub.kernel().ParamKinds();
  const int p = static_cast<int>(kinds.size());
  Eigen::VectorXd lb(p + 1), ub(p + 1);
  for (int i = 0; i < p; ++i) {
    switch (kinds[i]) {
      case ParamKind::kLengthscale:
        lb(i) = std::log(opt.lengthscale_min);
        ub(i) = std::log(opt.lengthscale_max);
        break;
      case ParamKind::kSignalVariance:
        lb(i) = std::log(opt.variance_min);
        ub(i) = std::log(opt.variance_max);
        break;
      case ParamKind::kShape:
        lb(i) = std::log(opt.shape_min);
        ub(i) = std::log(opt.shape_max);
        break;
    }
  }
  const double log_noise = std::log(gp->noise_variance());
  lb(p) = opt.fit_noise ? std::log(opt.noise_min) : log_noise;
  ub(p) = opt.fit_noise ? std::log(opt.noise_max) : log_noise;

  int evals = 0;
  GradObjective neg_lml = [&](const Eigen::VectorXd& theta, Eigen::VectorXd* g) {
    ++evals;
    double v = sub.LogMarginalLikelihoodAt(theta, cache, g);
    if (g) *g = -*g;
    if (g && !opt.fit_noise) (*g)(p) = 0.0;
    return -v;
  };
  Eigen::VectorXd start = gp->LogHyperparameters().cwiseMax(lb).cwiseMin(ub);
  BoxedResult best = MinimizeBoxed(neg_lml, start, lb, ub, opt.max_iterations);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  for (int r = 0; r < opt.restarts; ++r) {
    Eigen::VectorXd x0(p + 1);
    for (int i = 0; i <= p; ++i) x0(i) = lb(i) + u(rng) * (ub(i) - lb(i));
    BoxedResult res = MinimizeBoxed(neg_lml, x0, lb, ub, opt.max_iterations);
    if (res.f < best.f) best = res;
  }
  if (std::isfinite(best.f)) gp->SetLogHyperparameters(best.x);
  return FitResult{-best.f, evals};
}

}  // namespace advbo::bo
