#include "bo/hyperparameters.h"

#include <tbb/parallel_for.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <limits>
#include <numeric>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

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

namespace {

// The box of the free log-hyperparameters: one coordinate per kernel parameter (by its kind)
// and, unless noise_free, the log noise variance (fixed at log_noise when it is not fitted).
void LogBox(const std::vector<ParamKind>& kinds, const FitOptions& opt, double log_noise,
            bool noise_free, Eigen::VectorXd* lb, Eigen::VectorXd* ub) {
  const int p = static_cast<int>(kinds.size());
  lb->resize(noise_free ? p : p + 1);
  ub->resize(lb->size());
  for (int i = 0; i < p; ++i) {
    switch (kinds[i]) {
      case ParamKind::kLengthscale:
        (*lb)(i) = std::log(opt.lengthscale_min);
        (*ub)(i) = std::log(opt.lengthscale_max);
        break;
      case ParamKind::kSignalVariance:
        (*lb)(i) = std::log(opt.variance_min);
        (*ub)(i) = std::log(opt.variance_max);
        break;
      case ParamKind::kShape:
        (*lb)(i) = std::log(opt.shape_min);
        (*ub)(i) = std::log(opt.shape_max);
        break;
    }
  }
  if (!noise_free) {
    (*lb)(p) = opt.fit_noise ? std::log(opt.noise_min) : log_noise;
    (*ub)(p) = opt.fit_noise ? std::log(opt.noise_max) : log_noise;
  }
}

// The log prior over the free coordinates (MAP fits): log-normal and gamma priors on the
// lengthscales, signal variance and (when fitted) noise, with its gradient.
class LogPrior {
 public:
  LogPrior(const std::vector<ParamKind>& kinds, const FitOptions& opt, int nfree, bool noise_free)
      : priors_(nfree, nullptr), gammas_(nfree, nullptr) {
    const int p = static_cast<int>(kinds.size());
    for (int i = 0; i < p; ++i) {
      if (kinds[i] == ParamKind::kLengthscale && opt.lengthscale_prior.enabled())
        priors_[i] = &opt.lengthscale_prior;
      if (kinds[i] == ParamKind::kSignalVariance && opt.variance_prior.enabled())
        priors_[i] = &opt.variance_prior;
      if (kinds[i] == ParamKind::kLengthscale && opt.lengthscale_gamma.enabled())
        gammas_[i] = &opt.lengthscale_gamma;
      if (kinds[i] == ParamKind::kSignalVariance && opt.variance_gamma.enabled())
        gammas_[i] = &opt.variance_gamma;
    }
    if (!noise_free && opt.fit_noise && opt.noise_prior.enabled()) priors_[p] = &opt.noise_prior;
    if (!noise_free && opt.fit_noise && opt.noise_gamma.enabled()) gammas_[p] = &opt.noise_gamma;
  }
  // log p(theta) up to a constant; adds its gradient to *g when g is given.
  double operator()(const Eigen::VectorXd& theta, Eigen::VectorXd* g) const {
    double lp = 0.0;
    for (size_t i = 0; i < priors_.size(); ++i) {
      if (priors_[i]) {
        const double z = (theta(i) - priors_[i]->mean) / priors_[i]->sd;
        lp -= 0.5 * z * z;
        if (g) (*g)(i) -= z / priors_[i]->sd;
      }
      if (gammas_[i]) {  // a log v - b v with v = exp(theta_i)
        const double v = std::exp(theta(i));
        lp += gammas_[i]->shape * theta(i) - gammas_[i]->rate * v;
        if (g) (*g)(i) += gammas_[i]->shape - gammas_[i]->rate * v;
      }
    }
    return lp;
  }

 private:
  std::vector<const LogNormalPrior*> priors_;
  std::vector<const GammaPrior*> gammas_;
};

}  // namespace

void FitOptions::Validate() const {
  if (restarts < 0 || max_iterations < 0 || max_points < 0)
    throw std::invalid_argument("FitOptions: restarts, max_iterations and max_points must be >= 0");
  const std::pair<double, double> ranges[] = {{lengthscale_min, lengthscale_max},
                                              {variance_min, variance_max},
                                              {noise_min, noise_max},
                                              {shape_min, shape_max}};
  const char* names[] = {"lengthscale", "variance", "noise", "shape"};
  for (int i = 0; i < 4; ++i)
    if (!(ranges[i].first > 0 && ranges[i].first <= ranges[i].second) ||
        !std::isfinite(ranges[i].second))
      throw std::invalid_argument(std::string("FitOptions: ") + names[i] +
                                  "_min and _max must satisfy 0 < min <= max, finite");
}

FitResult FitHyperparameters(ExactGP* gp, const FitOptions& opt, Rng& rng) {
  if (gp == nullptr || gp->num_data() < 1)
    throw std::invalid_argument("FitHyperparameters: the GP has no data");
  opt.Validate();
  // Optional subset for the likelihood.
  std::optional<ExactGP> subset;
  if (opt.max_points > 0 && gp->num_data() > opt.max_points)
    subset = SubsetOf(*gp, opt.max_points, rng);
  const ExactGP& sub = subset ? *subset : *gp;
  const PairwiseCache cache = sub.kernel().Precompute(sub.X());
  const std::vector<ParamKind> kinds = sub.kernel().ParamKinds();
  const int p = static_cast<int>(kinds.size());
  // Noise-free mode (noise 0, not fitted): optimise the kernel parameters only.
  const bool noise_free = !opt.fit_noise && gp->noise_variance() == 0.0;
  const int nfree = noise_free ? p : p + 1;
  Eigen::VectorXd lb, ub;
  LogBox(kinds, opt, std::log(gp->noise_variance()), noise_free, &lb, &ub);
  const LogPrior log_prior(kinds, opt, nfree, noise_free);
  std::atomic<int> evals{0};
  GradObjective neg_lml = [&](const Eigen::VectorXd& theta, Eigen::VectorXd* g) {
    ++evals;
    double v;
    if (noise_free) {
      Eigen::VectorXd full(p + 1), gf;
      full << theta, -std::numeric_limits<double>::infinity();
      v = sub.LogMarginalLikelihoodAt(full, cache, g ? &gf : nullptr);
      if (g) *g = gf.head(p);
    } else {
      v = sub.LogMarginalLikelihoodAt(theta, cache, g);
    }
    if (g && !noise_free && !opt.fit_noise) (*g)(p) = 0.0;
    if (std::isfinite(v)) v += log_prior(theta, g);
    if (g) *g = -*g;
    return -v;
  };
  // Start 0 is the warm start, starts 1..restarts uniform in the log box, drawn in order from
  // rng; the starts are optimised in parallel (TBB; each as alone) and the best taken in start
  // order, so the fit does not depend on the thread count.
  std::vector<Eigen::VectorXd> starts{
      gp->LogHyperparameters().head(nfree).cwiseMax(lb).cwiseMin(ub)};
  std::uniform_real_distribution<double> u(0.0, 1.0);
  for (int r = 0; r < opt.restarts; ++r) {
    Eigen::VectorXd x0(nfree);
    for (int i = 0; i < nfree; ++i) x0(i) = lb(i) + u(rng) * (ub(i) - lb(i));
    starts.push_back(x0);
  }
  std::vector<BoxedResult> results(starts.size());
  tbb::parallel_for(size_t{0}, starts.size(), [&](size_t r) {
    results[r] = MinimizeBoxed(neg_lml, starts[r], lb, ub, opt.max_iterations);
  });
  BoxedResult best = results[0];
  for (size_t r = 1; r < results.size(); ++r)
    if (results[r].f < best.f) best = results[r];
  Eigen::VectorXd theta = gp->LogHyperparameters();
  theta.head(nfree) = best.x;
  if (std::isfinite(best.f)) gp->SetLogHyperparameters(theta);
  const double lp = std::isfinite(best.f) ? log_prior(best.x, nullptr) : 0.0;
  return FitResult{-best.f - lp, evals.load(), -best.f};
}

FitResult FitHyperparametersOn(ExactGP* gp, const Eigen::MatrixXd& x, const Eigen::VectorXd& y,
                               const FitOptions& options, Rng& rng) {
  if (gp == nullptr) throw std::invalid_argument("FitHyperparametersOn: null GP");
  if (x.rows() < 1) throw std::invalid_argument("FitHyperparametersOn: empty fitting dataset");
  ExactGP fit(gp->kernel().Clone(), gp->noise_variance(), gp->standardize());
  fit.SetData(x, y);
  FitResult r = FitHyperparameters(&fit, options, rng);
  gp->SetLogHyperparameters(fit.LogHyperparameters());
  return r;
}

}  // namespace advbo::bo
