#include "bo/acquisition.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

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
      return 0.5 * d * std::log(2.0 * tt);
  }
  return value;
}

ExplorationWeight ParseExplorationWeight(const std::string& spec) {
  ExplorationWeight w;
  if (spec.rfind("constant", 0) == 0) {
    w.policy = BetaPolicy::kConstant;
    if (spec.size() > 9 && spec[8] == ':') w.value = std::stod(spec.substr(9));
    if (!(w.value >= 0)) throw std::invalid_argument("beta constant must be >= 0: " + spec);
  } else if (spec == "srinivas2010") {
    w.policy = BetaPolicy::kSrinivas2010;
  } else if (spec == "kandasamy2015") {
    w.policy = BetaPolicy::kKandasamy2015;
  } else if (spec == "r2b2_ref") {
    w.policy = BetaPolicy::kR2b2Ref;
  } else {
    throw std::invalid_argument("unknown exploration-weight policy '" + spec +
                                "' (use constant[:VALUE], srinivas2010, kandasamy2015, r2b2_ref)");
  }
  return w;
}

Eigen::VectorXd Ucb(const Eigen::VectorXd& mean, const Eigen::VectorXd& var, double beta) {
  return mean + std::sqrt(std::max(beta, 0.0)) * var.cwiseMax(0.0).cwiseSqrt();
}

}  // namespace advbo::bo
