// GP-UCB acquisition (Srinivas et al. 2010) with the exploration weight beta_t as an
// explicit, named policy (DESIGN.md: beta conventions differ between codes).
#pragma once

#include <Eigen/Dense>
#include <string>

namespace advbo::bo {

/// How beta_t (the squared multiplier of the posterior standard deviation) is chosen.
enum class BetaPolicy {
  kConstant,       ///< beta_t = value (BOS^2 dimension loop: beta^{1/2} = 2, value = 4)
  kSrinivas2010,   ///< finite domain: 2 log(|D| t^2 pi^2 / (6 delta))  (Srinivas 2010 Thm 1);
                   ///< continuous [0,1]^d (|D| = 0): 2 log(t^2 2pi^2/(3 delta))
                   ///<   + 2 d log(t^2 d sqrt(log(4d/delta)))  (Thm 2 with a = b = r = 1)
  kKandasamy2015,  ///< 0.2 d log(2t), d = group dimension (Add-GP-UCB practical schedule)
  kR2b2Ref,        ///< 0.5 d log(2t), d = joint input dimension (R2-B2 reference code)
};

/// Exploration-weight schedule. t starts at 1 (t < 1 is treated as 1).
struct ExplorationWeight {
  BetaPolicy policy = BetaPolicy::kConstant;
  double value = 4.0;   ///< beta for kConstant
  double delta = 0.1;   ///< confidence parameter for kSrinivas2010, in (0, 1)
  /// beta_t for iteration t >= 1, input dimension d, finite domain size (0 = continuous).
  double Beta(int t, int d, double domain_size = 0.0) const;
};

/// Parses "constant[:VALUE]", "srinivas2010", "kandasamy2015", "r2b2_ref".
/// Throws std::invalid_argument naming the accepted values otherwise.
ExplorationWeight ParseExplorationWeight(const std::string& spec);

/// UCB scores mean + sqrt(beta) * sqrt(var), elementwise; mean and var are [M].
Eigen::VectorXd Ucb(const Eigen::VectorXd& mean, const Eigen::VectorXd& var, double beta);

}  // namespace advbo::bo
