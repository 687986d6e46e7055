#include "bo/online_learning.h"

#include <cmath>
#include <stdexcept>
#include <string>

#include "bo/acquisition.h"

namespace advbo::bo {
namespace {

void CheckRates(int k, double eta, double gamma) {
  if (k < 1) throw std::invalid_argument("online learner: need at least one action");
  if (!(eta > 0)) throw std::invalid_argument("online learner: learning rate eta must be > 0");
  if (!(gamma >= 0 && gamma <= 1))
    throw std::invalid_argument("online learner: exploration gamma must be in [0, 1]");
}

Eigen::VectorXd MixUniform(const Eigen::VectorXd& p, double gamma) {
  return ((1.0 - gamma) * p.array() + gamma / static_cast<double>(p.size())).matrix();
}

}  // namespace

Eigen::VectorXd SoftmaxFromLog(const Eigen::VectorXd& lw) {
  const double m = lw.maxCoeff();
  Eigen::VectorXd e = (lw.array() - m).exp().matrix();
  return e / e.sum();
}

int SampleIndex(const Eigen::VectorXd& p, Rng& rng) {
  std::uniform_real_distribution<double> u(0.0, p.sum());
  double r = u(rng), acc = 0.0;
  for (Eigen::Index i = 0; i < p.size(); ++i) {
    acc += p(i);
    if (r < acc) return static_cast<int>(i);
  }
  return static_cast<int>(p.size() - 1);
}

Hedge::Hedge(int k, double eta) : eta_(eta), cumulative_(Eigen::VectorXd::Zero(std::max(k, 0))) {
  CheckRates(k, eta, 0.0);
}

void Hedge::Update(const Eigen::VectorXd& r) {
  if (r.size() != cumulative_.size() || !r.allFinite())
    throw std::invalid_argument("Hedge::Update: need " + std::to_string(cumulative_.size()) +
                                " finite rewards");
  cumulative_ += r;
}

Exp3::Exp3(int k, double eta, double gamma)
    : eta_(eta), gamma_(gamma), estimates_(Eigen::VectorXd::Zero(std::max(k, 0))) {
  CheckRates(k, eta, gamma);
}

Eigen::VectorXd Exp3::Probabilities() const {
  return MixUniform(SoftmaxFromLog(eta_ * estimates_), gamma_);
}

void Exp3::Update(int a, double r) {
  if (a < 0 || a >= estimates_.size()) throw std::invalid_argument("Exp3::Update: bad action");
  if (!std::isfinite(r)) throw std::invalid_argument("Exp3::Update: non-finite reward");
  estimates_(a) += r / Probabilities()(a);
}

Exp3Linear::Exp3Linear(Eigen::MatrixXd features, double eta, double gamma)
    : phi_(std::move(features)), eta_(eta), gamma_(gamma) {
  CheckRates(static_cast<int>(phi_.rows()), eta, gamma);
  estimates_ = Eigen::VectorXd::Zero(phi_.rows());
}

Eigen::VectorXd Exp3Linear::Probabilities() const {
  return MixUniform(SoftmaxFromLog(eta_ * estimates_), gamma_);
}

void Exp3Linear::Update(int a, double r) {
  if (a < 0 || a >= phi_.rows()) throw std::invalid_argument("Exp3Linear::Update: bad action");
  if (!std::isfinite(r)) throw std::invalid_argument("Exp3Linear::Update: non-finite reward");
  const Eigen::VectorXd p = Probabilities();
  const Eigen::MatrixXd q = phi_.transpose() * p.asDiagonal() * phi_;  // [m, m]
  // Pseudo-inverse through a symmetric eigendecomposition (Q may be singular when K < m).
  Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd> es(q);
  const Eigen::VectorXd ev = es.eigenvalues();
  const double tol = 1e-10 * std::max(ev.cwiseAbs().maxCoeff(), 1e-300);
  Eigen::VectorXd inv = ev.unaryExpr([&](double v) { return v > tol ? 1.0 / v : 0.0; });
  const Eigen::VectorXd theta = es.eigenvectors() * inv.asDiagonal() *
                                es.eigenvectors().transpose() * (phi_.row(a).transpose() * r);
  estimates_ += phi_ * theta;
}

void GpMwOptions::Validate() const {
  if (!(eta > 0) || !std::isfinite(eta))
    throw std::invalid_argument("GP-MW: learning rate eta must be finite and > 0");
}

GpMw::GpMw(int k, GpMwOptions options)
    : hedge_(k, (options.Validate(), options.eta)), options_(options) {}

void GpMw::Update(const ExactGP& gp, const Eigen::MatrixXd& joint, double beta) {
  if (joint.rows() != hedge_.num_actions())
    throw std::invalid_argument("GpMw::Update: need one joint input per action (" +
                                std::to_string(hedge_.num_actions()) + ")");
  Eigen::VectorXd mu, var;
  gp.Predict(joint, &mu, &var);
  Eigen::VectorXd r = Ucb(mu, var, beta);
  if (options_.clip_rewards) r = r.cwiseMax(0.0).cwiseMin(1.0);
  hedge_.Update(r);
}

}  // namespace advbo::bo
