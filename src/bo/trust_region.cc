#include "bo/trust_region.h"

#include <algorithm>
#include <cmath>
#include <random>
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

namespace {

// Uniform point of the 1-D set [lo, hi] \ [ilo, ihi] (ilo, ihi inside [lo, hi]; the set
// has positive length), from one U(0, 1) draw u.
double OutsideInterval(double lo, double hi, double ilo, double ihi, double u) {
  const double left = ilo - lo, right = hi - ihi;
  const double s = u * (left + right);
  return s < left ? lo + s : ihi + (s - left);
}

}  // namespace

std::vector<int> MoveUniformSample(Eigen::MatrixXd* z, const Eigen::VectorXd& lb_old,
                                   const Eigen::VectorXd& ub_old, const Eigen::VectorXd& lb_new,
                                   const Eigen::VectorXd& ub_new, Rng& rng) {
  const Eigen::Index d = z->cols();
  if (lb_old.size() != d || ub_old.size() != d || lb_new.size() != d || ub_new.size() != d)
    throw std::invalid_argument("MoveUniformSample: the boxes need the sample's " +
                                std::to_string(d) + " coordinates");
  if (!((ub_old - lb_old).array() > 0).all() || !((ub_new - lb_new).array() > 0).all())
    throw std::invalid_argument("MoveUniformSample: a box has lb >= ub in some coordinate");
  const Eigen::ArrayXd ilo = lb_old.array().max(lb_new.array());
  const Eigen::ArrayXd ihi = ub_old.array().min(ub_new.array());
  const Eigen::ArrayXd width_new = (ub_new - lb_new).array();
  // f_i = |I_i| / |B'_i|; suffix[i] = prod_{k >= i} f_k (suffix[d] = 1), so |I| / |B'| = suffix[0].
  const Eigen::ArrayXd f = ((ihi - ilo).max(0.0) / width_new).min(1.0);
  std::vector<double> suffix(d + 1, 1.0);
  for (Eigen::Index i = d - 1; i >= 0; --i) suffix[i] = suffix[i + 1] * f(i);
  const double log_ratio =  // log(|B| / |B'|)
      (ub_old - lb_old).array().log().sum() - width_new.log().sum();
  const double keep = std::min(1.0, std::exp(log_ratio));
  // Residual law: on I with mass |I| (1/|B'| - 1/|B|)+ = suffix0 (1 - |B'|/|B|)+, on B' \ I
  // with mass 1 - suffix0 (both before normalising).
  const double suffix0 = suffix[0];
  const double mass_in = suffix0 * std::max(0.0, 1.0 - std::exp(-log_ratio));
  const double mass_out = 1.0 - suffix0;
  std::uniform_real_distribution<double> unif(0.0, 1.0);
  std::vector<int> redrawn;
  for (Eigen::Index c = 0; c < z->rows(); ++c) {
    bool inside = true;
    for (Eigen::Index i = 0; i < d && inside; ++i)
      inside = (*z)(c, i) >= ilo(i) && (*z)(c, i) <= ihi(i);
    if (inside && (keep >= 1.0 || unif(rng) < keep)) continue;
    redrawn.push_back(static_cast<int>(c));
    if (mass_in > 0 && unif(rng) * (mass_in + mass_out) < mass_in) {
      for (Eigen::Index i = 0; i < d; ++i) (*z)(c, i) = ilo(i) + (ihi(i) - ilo(i)) * unif(rng);
      continue;
    }
    // Uniform on B' \ I, coordinate by coordinate, one U(0, 1) draw u each (as a fresh
    // uniform point): while every earlier coordinate fell in I, coordinate i falls in I_i with
    // probability p = f_i (1 - suffix[i+1]) / (1 - suffix[i]) -- when u < p, and then at u / p
    // of I_i, else at (u - p) / (1 - p) of B'_i \ I_i; after one fell outside, the rest are
    // uniform on B'.
    bool all_in = true;
    for (Eigen::Index i = 0; i < d; ++i) {
      const double u = unif(rng);
      const double p = all_in ? f(i) * (1.0 - suffix[i + 1]) / (1.0 - suffix[i]) : 0.0;
      if (!all_in) {
        (*z)(c, i) = lb_new(i) + width_new(i) * u;
      } else if (u < p) {
        (*z)(c, i) = ilo(i) + (ihi(i) - ilo(i)) * (u / p);
      } else {
        all_in = false;
        const double v = (u - p) / (1.0 - p);
        (*z)(c, i) = ihi(i) > ilo(i) ? OutsideInterval(lb_new(i), ub_new(i), ilo(i), ihi(i), v)
                                     : lb_new(i) + width_new(i) * v;
      }
    }
  }
  return redrawn;
}

}  // namespace advbo::bo
