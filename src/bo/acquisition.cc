#include "bo/acquisition.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

namespace advbo::bo {

double ExplorationWeight::Beta(int t, int d, double domain_size) const {
  const double tt = std::max(1, t);
  const double pi2 = M_PI * M_PI;
  switch (policy) {
    case BetaPolicy::kConstant:
      return value;
    case BetaPolicy::kSrinivas2010:
      if (domain_size > 0) return 2.0 * std::log(domain_size * tt * tt * pi2 / (6.0 * delta));
      return 2.0 * std::log(tt * tt * 2.0 * pi2 / (3.0 * delta)) +
             2.0 * d * std::log(tt * tt * d * std::sqrt(std::log(4.0 * d / delta)));
    case BetaPolicy::kKandasamy2015:
      return 0.2 * d * std::log(2.0 * tt);
    case BetaPolicy::kR2b2Ref:
    case BetaPolicy::kR2b2Joint:
      return 0.5 * d * std::log(2.0 * tt);
  }
  return value;
}

namespace {

// The finite number after "NAME:" in spec, or throws naming the spec (found by fuzzing:
// std::stod threw std::out_of_range on "constant:1e4444", which escaped as a crash).
double NumberAfterColon(const std::string& spec, size_t name_length) {
  const std::string text = spec.substr(name_length + 1);
  char* end = nullptr;
  const double v = std::strtod(text.c_str(), &end);
  if (text.empty() || end != text.c_str() + text.size() || !std::isfinite(v))
    throw std::invalid_argument("exploration weight '" + spec + "': '" + text +
                                "' is not a finite number");
  return v;
}

}  // namespace

ExplorationWeight ParseExplorationWeight(const std::string& spec) {
  ExplorationWeight w;
  auto has_value = [&](const std::string& name) {
    if (spec == name) return false;
    if (spec.rfind(name + ":", 0) == 0) return true;
    throw std::invalid_argument("unknown exploration-weight policy '" + spec +
                                "' (use constant[:VALUE], srinivas2010[:DELTA], "
                                "kandasamy2015, r2b2_ref, r2b2_joint)");
  };
  if (spec.rfind("constant", 0) == 0) {
    w.policy = BetaPolicy::kConstant;
    if (has_value("constant")) w.value = NumberAfterColon(spec, 8);
    if (!(w.value >= 0)) throw std::invalid_argument("beta constant must be >= 0: " + spec);
  } else if (spec.rfind("srinivas2010", 0) == 0) {
    w.policy = BetaPolicy::kSrinivas2010;
    if (has_value("srinivas2010")) w.delta = NumberAfterColon(spec, 12);
    if (!(w.delta > 0 && w.delta < 1))
      throw std::invalid_argument("srinivas2010 confidence delta must be in (0, 1): " + spec);
  } else if (spec == "kandasamy2015") {
    w.policy = BetaPolicy::kKandasamy2015;
  } else if (spec == "r2b2_ref") {
    w.policy = BetaPolicy::kR2b2Ref;
  } else if (spec == "r2b2_joint") {
    w.policy = BetaPolicy::kR2b2Joint;
  } else {
    throw std::invalid_argument("unknown exploration-weight policy '" + spec +
                                "' (use constant[:VALUE], srinivas2010[:DELTA], kandasamy2015, "
                                "r2b2_ref, r2b2_joint)");
  }
  return w;
}

Eigen::VectorXd Ucb(const Eigen::VectorXd& mean, const Eigen::VectorXd& var, double beta) {
  return mean + std::sqrt(std::max(beta, 0.0)) * var.cwiseMax(0.0).cwiseSqrt();
}

double NormalPdf(double z) { return 0.3989422804014327 * std::exp(-0.5 * z * z); }
double NormalCdf(double z) { return 0.5 * std::erfc(-z * 0.7071067811865476); }

namespace {

constexpr double kMinStd = 1e-12;

double GoalSign(Goal g) { return g == Goal::kMaximize ? 1.0 : -1.0; }

// Single-point posterior with gradients.
void PointPosterior(const ExactGP& gp, const Eigen::VectorXd& x, double* mu, double* var,
                    Eigen::VectorXd* dmu, Eigen::VectorXd* dvar) {
  Eigen::VectorXd m, v;
  Eigen::MatrixXd dm, dv;
  gp.PredictWithGradient(x.transpose(), &m, &v, dmu ? &dm : nullptr, dvar ? &dv : nullptr);
  *mu = m(0);
  *var = v(0);
  if (dmu) *dmu = dm.row(0).transpose();
  if (dvar) *dvar = dv.row(0).transpose();
}

// EI and PI as functions of (improvement I, sigma), with their partial derivatives.
ImprovementAcquisition::Terms EiTerms(double imp, double sigma) {
  if (sigma < kMinStd) return {std::max(imp, 0.0), imp > 0 ? 1.0 : 0.0, 0.0};
  const double z = imp / sigma, cdf = NormalCdf(z), pdf = NormalPdf(z);
  return {imp * cdf + sigma * pdf, cdf, pdf};
}

ImprovementAcquisition::Terms PiTerms(double imp, double sigma) {
  if (sigma < kMinStd) return {imp > 0 ? 1.0 : 0.0, 0.0, 0.0};
  const double z = imp / sigma, pdf = NormalPdf(z);
  return {NormalCdf(z), pdf / sigma, -z * pdf / sigma};
}

}  // namespace

UcbAcquisition::UcbAcquisition(const ExactGP& gp, double beta, Goal goal)
    : gp_(gp), sqrt_beta_(std::sqrt(beta)), sign_(GoalSign(goal)) {
  if (!(beta >= 0)) throw std::invalid_argument("UcbAcquisition: beta must be >= 0");
}

Eigen::VectorXd UcbAcquisition::Evaluate(const Eigen::MatrixXd& x) const {
  Eigen::VectorXd mu, var;
  gp_.Predict(x, &mu, &var);
  return sign_ * mu + sqrt_beta_ * var.cwiseMax(0.0).cwiseSqrt();
}

double UcbAcquisition::ValueAndGradient(const Eigen::VectorXd& x, Eigen::VectorXd* grad) const {
  double mu, var;
  Eigen::VectorXd dmu, dvar;
  PointPosterior(gp_, x, &mu, &var, grad ? &dmu : nullptr, grad ? &dvar : nullptr);
  const double sd = std::sqrt(std::max(var, 0.0));
  if (grad) {
    *grad = sign_ * dmu;
    if (sd > kMinStd) *grad += sqrt_beta_ * dvar / (2.0 * sd);
  }
  return sign_ * mu + sqrt_beta_ * sd;
}

ImprovementAcquisition::ImprovementAcquisition(const ExactGP& gp, double best, double xi, Goal goal,
                                               TermsFunction h)
    : gp_(gp), best_(best), xi_(xi), sign_(GoalSign(goal)), h_(h) {
  if (!std::isfinite(best) || !(xi >= 0))
    throw std::invalid_argument("EI/PI: the incumbent must be finite and xi >= 0");
}

Eigen::VectorXd ImprovementAcquisition::Evaluate(const Eigen::MatrixXd& x) const {
  Eigen::VectorXd mu, var;
  gp_.Predict(x, &mu, &var);
  Eigen::VectorXd out(x.rows());
  for (Eigen::Index i = 0; i < x.rows(); ++i)
    out(i) = h_(sign_ * (mu(i) - best_) - xi_, std::sqrt(std::max(var(i), 0.0))).value;
  return out;
}

double ImprovementAcquisition::ValueAndGradient(const Eigen::VectorXd& x,
                                                Eigen::VectorXd* grad) const {
  double mu, var;
  Eigen::VectorXd dmu, dvar;
  PointPosterior(gp_, x, &mu, &var, grad ? &dmu : nullptr, grad ? &dvar : nullptr);
  const double sd = std::sqrt(std::max(var, 0.0));
  const Terms t = h_(sign_ * (mu - best_) - xi_, sd);
  if (grad) {
    *grad = t.d_improvement * sign_ * dmu;
    if (sd > kMinStd) *grad += t.d_sigma * dvar / (2.0 * sd);
  }
  return t.value;
}

ExpectedImprovement::ExpectedImprovement(const ExactGP& gp, double best, double xi, Goal goal)
    : ImprovementAcquisition(gp, best, xi, goal, &EiTerms) {}

ProbabilityOfImprovement::ProbabilityOfImprovement(const ExactGP& gp, double best, double xi,
                                                   Goal goal)
    : ImprovementAcquisition(gp, best, xi, goal, &PiTerms) {}

ThompsonSample::ThompsonSample(const ExactGP& gp, int num_features, Rng& rng, Goal goal)
    : sign_(GoalSign(goal)) {
  const auto* k = dynamic_cast<const StationaryKernel*>(&gp.kernel());
  if (!k)
    throw std::invalid_argument(
        "ThompsonSample: random Fourier features need a stationary (SE/Matern) kernel, got " +
        gp.kernel().Describe());
  RandomFeatures features(*k, num_features, rng);
  const Eigen::VectorXd yt = (gp.y().array() - gp.y_shift()) / gp.y_scale();
  RffPosterior post(features, gp.X(), yt, std::max(gp.noise_variance(), 1e-6));
  f_ = std::make_unique<FeatureFunction>(features, post.SampleWeights(rng));
}

Eigen::VectorXd ThompsonSample::Evaluate(const Eigen::MatrixXd& x) const {
  return sign_ * f_->Evaluate(x);
}

double ThompsonSample::ValueAndGradient(const Eigen::VectorXd& x, Eigen::VectorXd* grad) const {
  const double v = f_->ValueAndGradient(x, grad);
  if (grad) *grad *= sign_;
  return sign_ * v;
}

int ThompsonSampleIndex(const ExactGP& gp, const Eigen::MatrixXd& candidates, Rng& rng, Goal goal) {
  if (candidates.rows() < 1) throw std::invalid_argument("ThompsonSampleIndex: empty set");
  const Eigen::VectorXd f = gp.SamplePosterior(candidates, 1, rng).col(0) * GoalSign(goal);
  Eigen::Index best = 0;
  f.maxCoeff(&best);
  return static_cast<int>(best);
}

ExpectedUcb::ExpectedUcb(const ExactGP& gp, std::vector<int> own_dims, std::vector<int> other_dims,
                         Eigen::MatrixXd other_samples, double beta, Eigen::VectorXd weights)
    : gp_(gp),
      own_(std::move(own_dims)),
      other_(std::move(other_dims)),
      samples_(std::move(other_samples)),
      sqrt_beta_(std::sqrt(beta)) {
  const int d = static_cast<int>(own_.size() + other_.size());
  if (gp.num_data() > 0 && d != gp.X().cols())
    throw std::invalid_argument("ExpectedUcb: own + other dimensions (" + std::to_string(d) +
                                ") differ from the GP input dimension");
  std::vector<int> seen(d, 0);
  for (int a : own_) {
    if (a < 0 || a >= d || seen[a]++) throw std::invalid_argument("ExpectedUcb: bad own dims");
  }
  for (int a : other_) {
    if (a < 0 || a >= d || seen[a]++) throw std::invalid_argument("ExpectedUcb: bad other dims");
  }
  if (samples_.rows() < 1 || samples_.cols() != static_cast<Eigen::Index>(other_.size()))
    throw std::invalid_argument("ExpectedUcb: other_samples must be [S >= 1, |other_dims|]");
  if (!(beta >= 0)) throw std::invalid_argument("ExpectedUcb: beta must be >= 0");
  if (weights.size() == 0) weights = Eigen::VectorXd::Ones(samples_.rows());
  if (weights.size() != samples_.rows() || (weights.array() < 0).any() || !(weights.sum() > 0))
    throw std::invalid_argument("ExpectedUcb: weights must be [S], >= 0, not all zero");
  weights_ = weights / weights.sum();
}

Eigen::MatrixXd ExpectedUcb::Joint(const Eigen::VectorXd& x) const {
  Eigen::MatrixXd j(samples_.rows(), static_cast<Eigen::Index>(own_.size() + other_.size()));
  for (size_t a = 0; a < own_.size(); ++a) j.col(own_[a]).setConstant(x(a));
  for (size_t a = 0; a < other_.size(); ++a) j.col(other_[a]) = samples_.col(a);
  return j;
}

Eigen::VectorXd ExpectedUcb::Evaluate(const Eigen::MatrixXd& x) const {
  Eigen::VectorXd out(x.rows());
  for (Eigen::Index i = 0; i < x.rows(); ++i)
    out(i) = ValueAndGradient(x.row(i).transpose(), nullptr);
  return out;
}

double ExpectedUcb::ValueAndGradient(const Eigen::VectorXd& x, Eigen::VectorXd* grad) const {
  if (x.size() != static_cast<Eigen::Index>(own_.size()))
    throw std::invalid_argument("ExpectedUcb: wrong input size");
  Eigen::VectorXd mu, var;
  Eigen::MatrixXd dmu, dvar;
  gp_.PredictWithGradient(Joint(x), &mu, &var, grad ? &dmu : nullptr, grad ? &dvar : nullptr);
  const Eigen::ArrayXd sd = var.cwiseMax(0.0).cwiseSqrt().array();
  if (grad) {
    grad->setZero(own_.size());
    for (Eigen::Index s = 0; s < samples_.rows(); ++s) {
      for (size_t a = 0; a < own_.size(); ++a) {
        double g = dmu(s, own_[a]);
        if (sd(s) > kMinStd) g += sqrt_beta_ * dvar(s, own_[a]) / (2.0 * sd(s));
        (*grad)(a) += weights_(s) * g;
      }
    }
  }
  return weights_.dot((mu.array() + sqrt_beta_ * sd).matrix());
}

}  // namespace advbo::bo
