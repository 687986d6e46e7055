#include "algorithms/rm_gp_ucb/rm_gp_ucb.h"

#include <cmath>
#include <stdexcept>

namespace advbo::algorithms {

Eigen::VectorXd MetaWeights(const Eigen::VectorXd& cumulative_loss, double eta) {
  if (cumulative_loss.size() < 1)
    throw std::invalid_argument("MetaWeights: need at least one meta-task");
  if (!(eta >= 0) || !std::isfinite(eta))
    throw std::invalid_argument("MetaWeights: the learning rate eta must be finite and >= 0");
  if (!cumulative_loss.allFinite())
    throw std::invalid_argument("MetaWeights: cumulative losses must be finite");
  const Eigen::ArrayXd e = -eta * cumulative_loss.array();
  const Eigen::ArrayXd w = (e - e.maxCoeff()).exp();
  return (w / w.sum()).matrix();
}

double GapEstimate(const Eigen::VectorXd& y, const Eigen::VectorXd& upper,
                   const Eigen::VectorXd& lower, bool mean_form) {
  if (y.size() < 1 || upper.size() != y.size() || lower.size() != y.size())
    throw std::invalid_argument("GapEstimate: y, upper and lower must have the same size >= 1");
  const Eigen::ArrayXd d = (y - upper).array().abs().max((y - lower).array().abs());
  return mean_form ? d.mean() : d.maxCoeff();
}

double NextNu(double nu_prev, double weighted_gap, double r, double epsilon) {
  if (!(nu_prev >= 0 && nu_prev <= 1)) throw std::invalid_argument("NextNu: nu must be in [0, 1]");
  if (!(r > 0 && r < 1)) throw std::invalid_argument("NextNu: r must be in (0, 1)");
  if (!(epsilon > 0) || !std::isfinite(epsilon))
    throw std::invalid_argument("NextNu: epsilon must be finite and > 0");
  if (std::isnan(weighted_gap)) throw std::invalid_argument("NextNu: the weighted gap is NaN");
  const double decay = weighted_gap > 0 ? std::min(r, std::pow(weighted_gap, -epsilon)) : r;
  return nu_prev * decay;
}

MetaUcbAcquisition::MetaUcbAcquisition(const bo::ExactGP& target,
                                       const std::vector<const bo::ExactGP*>& metas,
                                       const Eigen::VectorXd& weights, double nu, double beta,
                                       double tau)
    : target_(target, beta), weights_(weights), nu_(nu) {
  if (static_cast<size_t>(weights.size()) != metas.size())
    throw std::invalid_argument("MetaUcbAcquisition: one weight per meta-task");
  if (!(nu >= 0 && nu <= 1))
    throw std::invalid_argument("MetaUcbAcquisition: nu must be in [0, 1]");
  if (metas.size() > 0 && ((weights.array() < 0).any() || std::abs(weights.sum() - 1) > 1e-9))
    throw std::invalid_argument("MetaUcbAcquisition: weights must form a probability vector");
  if (!(tau >= 0)) throw std::invalid_argument("MetaUcbAcquisition: tau must be >= 0");
  if (metas.empty() && nu != 0)
    throw std::invalid_argument("MetaUcbAcquisition: nu > 0 needs at least one meta-task");
  metas_.reserve(metas.size());
  for (const bo::ExactGP* g : metas) {
    if (g == nullptr || g->X().cols() != target.X().cols())
      throw std::invalid_argument("MetaUcbAcquisition: meta GPs must match the target's dimension");
    metas_.emplace_back(*g, tau);
  }
}

Eigen::VectorXd MetaUcbAcquisition::Evaluate(const Eigen::MatrixXd& x) const {
  Eigen::VectorXd v = (1 - nu_) * target_.Evaluate(x);
  for (size_t i = 0; i < metas_.size(); ++i) v += nu_ * weights_(i) * metas_[i].Evaluate(x);
  return v;
}

double MetaUcbAcquisition::ValueAndGradient(const Eigen::VectorXd& x, Eigen::VectorXd* grad) const {
  Eigen::VectorXd g;
  double v = (1 - nu_) * target_.ValueAndGradient(x, grad ? &g : nullptr);
  if (grad) *grad = (1 - nu_) * g;
  for (size_t i = 0; i < metas_.size(); ++i) {
    const double c = nu_ * weights_(i);
    v += c * metas_[i].ValueAndGradient(x, grad ? &g : nullptr);
    if (grad) *grad += c * g;
  }
  return v;
}

}  // namespace advbo::algorithms
