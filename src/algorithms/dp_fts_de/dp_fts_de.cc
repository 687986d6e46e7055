#include "algorithms/dp_fts_de/dp_fts_de.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <stdexcept>
#include <string>

namespace advbo::algorithms {

double SampledGaussianRdp(double q, double z, int alpha) {
  if (alpha < 2) throw std::invalid_argument("SampledGaussianRdp: the order must be >= 2");
  if (!(q >= 0 && q <= 1)) throw std::invalid_argument("SampledGaussianRdp: q must be in [0, 1]");
  if (!(z > 0) || !std::isfinite(z))
    throw std::invalid_argument("SampledGaussianRdp: the noise multiplier must be finite and > 0");
  if (q == 0) return 0.0;
  if (q == 1) return alpha / (2.0 * z * z);
  const double lq = std::log(q), l1q = std::log1p(-q);
  std::vector<double> terms(alpha + 1);
  for (int k = 0; k <= alpha; ++k)
    terms[k] = std::lgamma(alpha + 1.0) - std::lgamma(k + 1.0) - std::lgamma(alpha - k + 1.0) +
               (alpha - k) * l1q + k * lq + (static_cast<double>(k) * k - k) / (2.0 * z * z);
  const double m = *std::max_element(terms.begin(), terms.end());
  double s = 0;
  for (double t : terms) s += std::exp(t - m);
  return (m + std::log(s)) / (alpha - 1);
}

PrivacyLoss PrivacyLossOf(double q, double z, int steps, double delta, int max_order) {
  if (steps < 0) throw std::invalid_argument("PrivacyLossOf: steps must be >= 0");
  if (!(delta > 0 && delta < 1))
    throw std::invalid_argument("PrivacyLossOf: delta must be in (0, 1)");
  if (max_order < 2) throw std::invalid_argument("PrivacyLossOf: max_order must be >= 2");
  PrivacyLoss best{std::numeric_limits<double>::infinity(), 0};
  for (int a = 2; a <= max_order; ++a) {
    const double eps = steps * SampledGaussianRdp(q, z, a) + std::log(1.0 / delta) / (a - 1);
    if (eps < best.epsilon) best = {eps, a};
  }
  return best;
}

Eigen::VectorXd ClipToNorm(const Eigen::VectorXd& w, double bound) {
  if (!(bound > 0)) throw std::invalid_argument("ClipToNorm: the bound must be > 0");
  return w / std::max(1.0, w.norm() / bound);
}

void ServerOptions::Validate() const {
  if (!(q > 0 && q <= 1)) throw std::invalid_argument("AggregateMessages: q must be in (0, 1]");
  if (!(z >= 0) || !std::isfinite(z))
    throw std::invalid_argument("AggregateMessages: z must be finite and >= 0");
  if (!(clip > 0) || !std::isfinite(clip))
    throw std::invalid_argument("AggregateMessages: the clipping threshold S must be > 0");
}

ServerRound AggregateMessages(const std::vector<Eigen::VectorXd>& messages,
                              const Eigen::MatrixXd& weights, const ServerOptions& o,
                              bo::Rng& rng) {
  if (messages.empty()) throw std::invalid_argument("AggregateMessages: no messages");
  const Eigen::Index m = messages[0].size();
  const int n = static_cast<int>(messages.size());
  for (const auto& w : messages)
    if (w.size() != m || !w.allFinite())
      throw std::invalid_argument("AggregateMessages: messages must be finite and equally long");
  if (weights.cols() != n || weights.rows() < 1)
    throw std::invalid_argument("AggregateMessages: weights must be [P, N] with N = " +
                                std::to_string(n));
  if ((weights.array() < 0).any() || !weights.allFinite())
    throw std::invalid_argument("AggregateMessages: weights must be finite and >= 0");
  o.Validate();
  const Eigen::Index p = weights.rows();
  const double bound = o.clip / std::sqrt(static_cast<double>(p));
  ServerRound out;
  out.joint = Eigen::MatrixXd::Zero(p, m);
  std::uniform_real_distribution<double> u01(0.0, 1.0);
  for (int i = 0; i < n; ++i)  // line 6: Poisson subsampling
    if (u01(rng) < o.q) out.selected.push_back(i);
  for (int i : out.selected) {  // lines 8-10
    out.clipped += messages[i].norm() > bound;
    const Eigen::VectorXd c = ClipToNorm(messages[i], bound);
    for (Eigen::Index r = 0; r < p; ++r) out.joint.row(r) += (weights(r, i) / o.q) * c.transpose();
  }
  const double sd = o.z * weights.maxCoeff() * o.clip / o.q;  // line 11
  std::normal_distribution<double> noise(0.0, 1.0);
  for (Eigen::Index r = 0; r < p; ++r)
    for (Eigen::Index j = 0; j < m; ++j) out.joint(r, j) += sd * noise(rng);
  return out;
}

}  // namespace advbo::algorithms
