#include "bo/trust_region.h"

#include <cmath>
#include <stdexcept>
#include <string>

namespace advbo::bo {

void TrustRegionOptions::Validate() const {
  auto fail = [](const std::string& what) { throw std::invalid_argument("trust region: " + what); };
  if (!(std::isfinite(length_min) && std::isfinite(length_init) && std::isfinite(length_max)) ||
      !(length_min > 0 && length_min <= length_init && length_init <= length_max))
    fail("need 0 < length_min <= length_init <= length_max, got " + std::to_string(length_min) +
         ", " + std::to_string(length_init) + ", " + std::to_string(length_max));
  if (success_tolerance < 1)
    fail("success_tolerance must be >= 1, got " + std::to_string(success_tolerance));
  if (failure_tolerance < 0)
    fail("failure_tolerance must be >= 0 (0 = automatic), got " +
         std::to_string(failure_tolerance));
  if (!(improvement >= 0) || !std::isfinite(improvement))
    fail("improvement must be finite and >= 0, got " + std::to_string(improvement));
}

TrustRegion::TrustRegion(const TrustRegionOptions& options)
    : opt_(options), length_(options.length_init) {
  opt_.Validate();
}

Eigen::VectorXd TrustRegion::Weights(const Eigen::VectorXd& lengthscales) {
  if (lengthscales.size() == 0)
    throw std::invalid_argument("TrustRegion::Weights: no lengthscales");
  for (Eigen::Index i = 0; i < lengthscales.size(); ++i)
    if (!(lengthscales(i) > 0) || !std::isfinite(lengthscales(i)))
      throw std::invalid_argument("TrustRegion::Weights: lengthscale " + std::to_string(i) +
                                  " is not a positive finite number");
  const double log_mean = lengthscales.array().log().mean();
  return (lengthscales.array().log() - log_mean).exp().matrix();
}

void TrustRegion::Box(const Eigen::VectorXd& center, const Eigen::VectorXd& weights,
                      const Eigen::VectorXd& lb, const Eigen::VectorXd& ub, Eigen::VectorXd* box_lb,
                      Eigen::VectorXd* box_ub) const {
  const Eigen::Index d = center.size();
  if (weights.size() != d || lb.size() != d || ub.size() != d)
    throw std::invalid_argument("TrustRegion::Box: center, weights and bounds differ in size");
  const Eigen::ArrayXd half = 0.5 * length_ * weights.array() * (ub - lb).array();
  *box_lb = (center.array() - half).max(lb.array()).matrix();
  *box_ub = (center.array() + half).min(ub.array()).matrix();
}

int TrustRegion::failure_tolerance(int q, int d) const {
  if (opt_.failure_tolerance > 0) return opt_.failure_tolerance;
  return static_cast<int>(std::ceil(std::max(4.0 / q, static_cast<double>(d) / q)));
}

bool TrustRegion::Update(double y, double best_so_far, int q, int d) {
  if (q < 1 || d < 1) throw std::invalid_argument("TrustRegion::Update: need q >= 1 and d >= 1");
  const bool improved = y > best_so_far + opt_.improvement * std::abs(best_so_far);
  if (improved) {
    ++successes_;
    failures_ = 0;
  } else {
    ++failures_;
    successes_ = 0;
  }
  if (successes_ >= opt_.success_tolerance) {
    length_ = std::min(2.0 * length_, opt_.length_max);
    successes_ = 0;
  } else if (failures_ >= failure_tolerance(q, d)) {
    length_ /= 2.0;
    failures_ = 0;
  }
  if (length_ < opt_.length_min) {
    length_ = opt_.length_init;
    successes_ = failures_ = 0;
    ++restarts_;
  }
  return improved;
}

}  // namespace advbo::bo
