#include "algorithms/fts/fts.h"

#include <algorithm>
#include <cmath>
#include <memory>
#include <random>
#include <stdexcept>
#include <string>

#include "bo/gp.h"
#include "bo/kernel.h"

namespace advbo::algorithms {

double FtsProbability(int t, FtsSchedule schedule, double value) {
  const double tt = std::max(2, t);  // p_1 = p_2
  switch (schedule) {
    case FtsSchedule::kInverseSqrt:
      return 1.0 - 1.0 / std::sqrt(tt);
    case FtsSchedule::kInverseSqrtAll:
      return 1.0 - 1.0 / std::sqrt(std::max(1, t));
    case FtsSchedule::kInverseSquare:
      return 1.0 - 1.0 / (tt * tt);
    case FtsSchedule::kConstant:
      if (!(value >= 0 && value <= 1))
        throw std::invalid_argument("FtsProbability: a constant p must be in [0, 1]");
      return value;
  }
  return 1.0;
}

Eigen::MatrixXd NormalizedFeatures(const bo::RandomFeatures& features, const Eigen::MatrixXd& x,
                                   double signal_variance) {
  if (!(signal_variance > 0) || !std::isfinite(signal_variance))
    throw std::invalid_argument("NormalizedFeatures: the signal variance must be finite and > 0");
  Eigen::MatrixXd phi = features.Features(x);
  const Eigen::VectorXd norms = phi.rowwise().norm();
  for (Eigen::Index i = 0; i < phi.rows(); ++i)
    if (norms(i) > 0) phi.row(i) *= std::sqrt(signal_variance) / norms(i);
  return phi;
}

FeaturePosterior::FeaturePosterior(const Eigen::MatrixXd& phi, const Eigen::VectorXd& y,
                                   double noise_variance)
    : noise_(noise_variance) {
  if (!(noise_variance > 0) || !std::isfinite(noise_variance))
    throw std::invalid_argument("FeaturePosterior: the noise variance must be finite and > 0");
  if (phi.rows() != y.size())
    throw std::invalid_argument("FeaturePosterior: " + std::to_string(phi.rows()) +
                                " feature rows but " + std::to_string(y.size()) + " outputs");
  const Eigen::Index m = phi.cols();
  Eigen::MatrixXd sigma = phi.transpose() * phi;  // eq. 5.2
  sigma.diagonal().array() += noise_variance;
  llt_.compute(sigma);
  if (llt_.info() != Eigen::Success)
    throw std::invalid_argument("FeaturePosterior: Sigma is not positive definite");
  nu_ = m > 0 ? llt_.solve(phi.transpose() * y) : Eigen::VectorXd();
}

void FeaturePosterior::Predict(const Eigen::MatrixXd& phi, Eigen::VectorXd* mean,
                               Eigen::VectorXd* var) const {
  if (phi.cols() != nu_.size())
    throw std::invalid_argument("FeaturePosterior::Predict: wrong number of features");
  if (mean) *mean = phi * nu_;
  if (var) {
    const Eigen::MatrixXd half = llt_.matrixL().solve(phi.transpose());  // L^{-1} phi^T
    *var = noise_ * half.colwise().squaredNorm().transpose();
  }
}

Eigen::VectorXd FeaturePosterior::Sample(bo::Rng& rng) const {
  std::normal_distribution<double> n01(0.0, 1.0);
  Eigen::VectorXd z(nu_.size());
  for (Eigen::Index i = 0; i < z.size(); ++i) z(i) = n01(rng);
  // Cov = sigma^2 Sigma^{-1} = sigma^2 L^{-T} L^{-1}: w = nu + sigma L^{-T} z.
  return nu_ + std::sqrt(noise_) * llt_.matrixU().solve(z);
}

void FtsOptions::Validate() const {
  if (iterations < 1 || initial_points < 0)
    throw std::invalid_argument("RunFts: iterations must be >= 1 and initial points >= 0");
  if (!(beta > 0) || !(lengthscale > 0) || !(signal_variance > 0) || !(noise_variance > 0))
    throw std::invalid_argument("RunFts: beta, lengthscale, signal and noise variance must be > 0");
  FtsProbability(1, schedule, constant_p);  // validates the constant
}

std::vector<FtsStep> RunFts(const Eigen::MatrixXd& x, const Eigen::MatrixXd& phi,
                            const std::vector<Eigen::VectorXd>& messages,
                            const std::function<double(int)>& evaluate, const FtsOptions& o,
                            bo::Rng& rng) {
  const Eigen::Index k = x.rows();
  if (k < 1) throw std::invalid_argument("RunFts: empty domain");
  if (!messages.empty() && phi.rows() != k)
    throw std::invalid_argument("RunFts: phi must have one row per domain point");
  for (const auto& w : messages)
    if (w.size() != phi.cols())
      throw std::invalid_argument("RunFts: a message's length differs from the feature count");
  o.Validate();

  bo::ExactGP gp(std::make_unique<bo::StationaryKernel>(
                     bo::KernelFamily::kSquaredExponential, static_cast<int>(x.cols()), false,
                     std::vector<int>{}, o.lengthscale, o.signal_variance),
                 o.noise_variance, /*standardize=*/false);
  std::vector<FtsStep> steps;
  auto observe = [&](FtsStep s) {
    s.y = evaluate(s.index);
    gp.AddObservation(x.row(s.index).transpose(), s.y);
    steps.push_back(s);
  };
  // Initial points: distinct random rows (a partial Fisher-Yates shuffle).
  std::vector<int> order(k);
  for (Eigen::Index i = 0; i < k; ++i) order[i] = static_cast<int>(i);
  const int n_init = static_cast<int>(std::min<Eigen::Index>(o.initial_points, k));
  for (int i = 0; i < n_init; ++i) {
    std::uniform_int_distribution<int> pick(i, static_cast<int>(k) - 1);
    std::swap(order[i], order[pick(rng)]);
    FtsStep s;
    s.index = order[i];
    observe(s);
  }
  std::vector<int> unused(messages.size());  // P_N: uniform over the unused messages
  for (size_t n = 0; n < unused.size(); ++n) unused[n] = static_cast<int>(n);
  std::uniform_real_distribution<double> u01(0.0, 1.0);
  for (int t = 1; t <= o.iterations; ++t) {
    FtsStep s;
    s.iteration = t;
    s.p = FtsProbability(t, o.schedule, o.constant_p);
    const double r = u01(rng);         // line 2
    if (r <= s.p || unused.empty()) {  // lines 3-4
      const Eigen::VectorXd draw = gp.SamplePosterior(x, 1, rng).col(0);
      Eigen::VectorXd f = draw;
      if (o.beta != 1.0) {
        Eigen::VectorXd mean, var;
        gp.Predict(x, &mean, &var);
        f = mean + o.beta * (draw - mean);
      }
      Eigen::Index best = 0;
      f.maxCoeff(&best);
      s.index = static_cast<int>(best);
    } else {  // line 6
      std::uniform_int_distribution<size_t> pick(0, unused.size() - 1);
      const size_t j = pick(rng);
      s.agent = unused[j];
      unused.erase(unused.begin() + static_cast<std::ptrdiff_t>(j));
      Eigen::Index best = 0;
      (phi * messages[s.agent]).maxCoeff(&best);
      s.index = static_cast<int>(best);
    }
    observe(s);
  }
  return steps;
}

}  // namespace advbo::algorithms
