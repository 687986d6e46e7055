#include "bo/random_features.h"

#include <cmath>
#include <stdexcept>
#include <string>

#include "bo/gp.h"

namespace advbo::bo {

RandomFeatures::RandomFeatures(const StationaryKernel& kernel, int num_features, Rng& rng)
    : input_dim_(kernel.input_dim()), active_(kernel.active_dims()) {
  if (num_features < 1) throw std::invalid_argument("RandomFeatures: num_features must be >= 1");
  const int a = static_cast<int>(active_.size());
  Eigen::VectorXd ls = kernel.lengthscales();
  if (ls.size() == 1) ls = Eigen::VectorXd::Constant(a, ls(0));
  const double nu = MaternNu(kernel.family());
  std::normal_distribution<double> n01(0.0, 1.0);
  std::chi_squared_distribution<double> chi2(std::isfinite(nu) ? 2.0 * nu : 1.0);
  std::uniform_real_distribution<double> phase(0.0, 2.0 * M_PI);
  w_.resize(num_features, a);
  b_.resize(num_features);
  for (int m = 0; m < num_features; ++m) {
    // Student-t with 2nu dof = Gaussian / sqrt(chi2_{2nu} / 2nu).
    const double t = std::isfinite(nu) ? std::sqrt(2.0 * nu / chi2(rng)) : 1.0;
    for (int j = 0; j < a; ++j) w_(m, j) = n01(rng) * t / ls(j);
    b_(m) = phase(rng);
  }
  scale_ = std::sqrt(2.0 * kernel.variance() / num_features);
}

Eigen::MatrixXd RandomFeatures::Features(const Eigen::MatrixXd& x) const {
  if (x.cols() != input_dim_)
    throw std::invalid_argument("RandomFeatures: inputs have " + std::to_string(x.cols()) +
                                " columns, expected " + std::to_string(input_dim_));
  Eigen::MatrixXd xa(x.rows(), static_cast<Eigen::Index>(active_.size()));
  for (size_t j = 0; j < active_.size(); ++j) xa.col(j) = x.col(active_[j]);
  Eigen::MatrixXd z = xa * w_.transpose();  // [N, M]
  z.rowwise() += b_.transpose();
  return (z.array().cos() * scale_).matrix();
}

Eigen::MatrixXd RandomFeatures::Jacobian(const Eigen::VectorXd& x) const {
  if (x.size() != input_dim_) throw std::invalid_argument("RandomFeatures::Jacobian: wrong size");
  Eigen::VectorXd xa(active_.size());
  for (size_t j = 0; j < active_.size(); ++j) xa(j) = x(active_[j]);
  Eigen::ArrayXd s = -((w_ * xa + b_).array().sin() * scale_);  // [M]
  Eigen::MatrixXd jac = Eigen::MatrixXd::Zero(b_.size(), input_dim_);
  for (size_t j = 0; j < active_.size(); ++j)
    jac.col(active_[j]) = (s * w_.col(j).array()).matrix();
  return jac;
}

RffPosterior::RffPosterior(RandomFeatures features, const Eigen::MatrixXd& x,
                           const Eigen::VectorXd& y, double noise)
    : features_(std::move(features)) {
  if (x.rows() != y.size()) throw std::invalid_argument("RffPosterior: X and y sizes differ");
  if (!(noise > 0)) throw std::invalid_argument("RffPosterior: noise variance must be > 0");
  const int m = features_.num_features();
  Eigen::MatrixXd a = Eigen::MatrixXd::Identity(m, m);
  Eigen::VectorXd rhs = Eigen::VectorXd::Zero(m);
  if (x.rows() > 0) {
    const Eigen::MatrixXd phi = features_.Features(x);
    a.selfadjointView<Eigen::Lower>().rankUpdate(phi.transpose(), 1.0 / noise);
    a = a.selfadjointView<Eigen::Lower>();
    rhs = phi.transpose() * y / noise;
  }
  double jitter = 0.0;
  chol_a_ = CholeskyWithJitter(a, &jitter);
  mean_ = chol_a_.triangularView<Eigen::Lower>().solve(rhs);
  chol_a_.triangularView<Eigen::Lower>().transpose().solveInPlace(mean_);
}

Eigen::VectorXd RffPosterior::SampleWeights(Rng& rng) const {
  // w = mean + L^{-T} z has covariance (L L^T)^{-1} = A^{-1}.
  std::normal_distribution<double> n01(0.0, 1.0);
  Eigen::VectorXd z = Eigen::VectorXd::NullaryExpr(mean_.size(), [&]() { return n01(rng); });
  chol_a_.triangularView<Eigen::Lower>().transpose().solveInPlace(z);
  return mean_ + z;
}

void RffPosterior::Predict(const Eigen::MatrixXd& xs, Eigen::VectorXd* mean,
                           Eigen::VectorXd* var) const {
  const Eigen::MatrixXd phi = features_.Features(xs);
  if (mean) *mean = phi * mean_;
  if (var) {
    Eigen::MatrixXd v = chol_a_.triangularView<Eigen::Lower>().solve(phi.transpose());
    *var = v.colwise().squaredNorm().transpose();
  }
}

FeatureFunction::FeatureFunction(RandomFeatures features, Eigen::VectorXd weights)
    : features_(std::move(features)), w_(std::move(weights)) {
  if (w_.size() != features_.num_features())
    throw std::invalid_argument("FeatureFunction: weights do not match the features");
}

Eigen::VectorXd FeatureFunction::Evaluate(const Eigen::MatrixXd& x) const {
  return features_.Features(x) * w_;
}

double FeatureFunction::ValueAndGradient(const Eigen::VectorXd& x, Eigen::VectorXd* grad) const {
  const double v = (features_.Features(x.transpose()) * w_)(0);
  if (grad) *grad = features_.Jacobian(x).transpose() * w_;
  return v;
}

}  // namespace advbo::bo
