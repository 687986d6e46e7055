// Online learning over a finite set of K actions, for the level-0 strategies of R2-B2
// (Dai 2021 thesis, Sec. 8.3.1.1 and App. E.6.1.1) and UHE-BO's two-armed bandit (Ha et al.,
// Sec. 5.1 and App. A.5):
//  - Hedge / exponential weights with full-information rewards (Freund & Schapire 1997);
//  - EXP3 with bandit feedback and importance weighting (Auer et al. 2002, Alg. "Exp3";
//    Lattimore & Szepesvari 2020 Ch. 11);
//  - EXP3 for adversarial linear bandits on feature vectors, e.g. random Fourier features
//    of the actions (Lattimore & Szepesvari 2020 Ch. 27; R2-B2 App. E.6.1.1c, d' = 5);
//  - GP-MW (Sessa et al. 2019): Hedge whose full-information rewards are GP-UCB estimates
//    of the payoff of every action against the opponent's observed action.
// All keep log-weights and normalise with log-sum-exp, so long games never overflow.
#pragma once

#include <Eigen/Dense>

#include "bo/gp.h"
#include "bo/random.h"

namespace advbo::bo {

/// Softmax of log-weights [K] computed stably (max subtracted): probabilities [K].
Eigen::VectorXd SoftmaxFromLog(const Eigen::VectorXd& log_weights);

/// Samples an index from probabilities p [K] (non-negative, summing to ~1).
int SampleIndex(const Eigen::VectorXd& p, Rng& rng);

/// Hedge: p_t(a) ∝ exp(eta * S_{t-1}(a)), S = cumulative rewards of every action.
class Hedge {
 public:
  /// K >= 1 actions, learning rate eta > 0 (else std::invalid_argument).
  Hedge(int num_actions, double eta);
  /// Current probabilities [K].
  Eigen::VectorXd Probabilities() const { return SoftmaxFromLog(eta_ * cumulative_); }
  /// Draws an action from Probabilities().
  int Sample(Rng& rng) const { return SampleIndex(Probabilities(), rng); }
  /// Adds a full-information reward vector [K] (finite, else std::invalid_argument).
  void Update(const Eigen::VectorXd& rewards);
  /// Cumulative rewards per action.
  const Eigen::VectorXd& cumulative_rewards() const { return cumulative_; }
  /// Number of actions.
  int num_actions() const { return static_cast<int>(cumulative_.size()); }

 private:
  double eta_;
  Eigen::VectorXd cumulative_;
};

/// EXP3: p_t = (1 - gamma) softmax(eta * S^) + gamma / K; after playing a with reward r,
/// S^(a) += r / p_t(a) (importance-weighted estimate; rewards ideally in [0, 1]).
class Exp3 {
 public:
  /// K >= 1, eta > 0, gamma in [0, 1] (else std::invalid_argument).
  Exp3(int num_actions, double eta, double gamma);
  /// EXP3's mixed strategy over the actions (exploration gamma included).
  Eigen::VectorXd Probabilities() const;
  /// Draws an action from Probabilities().
  int Sample(Rng& rng) const { return SampleIndex(Probabilities(), rng); }
  /// Bandit feedback: the reward of the played action only.
  void Update(int action, double reward);
  /// Importance-weighted reward estimates per action.
  const Eigen::VectorXd& estimated_rewards() const { return estimates_; }

 private:
  double eta_, gamma_;
  Eigen::VectorXd estimates_;
};

/// EXP3 for adversarial linear bandits: actions are rows of Phi [K, m] (features); rewards
/// are modelled as <phi(a), theta_t>. After playing a with reward r:
/// Q = sum_b p(b) phi(b) phi(b)^T, theta^ = Q^+ phi(a) r, S^(b) += <phi(b), theta^> for all b,
/// and p = (1 - gamma) softmax(eta S^) + gamma / K (uniform exploration).
class Exp3Linear {
 public:
  /// features [K, m] (K >= 1), eta > 0, gamma in [0, 1].
  Exp3Linear(Eigen::MatrixXd features, double eta, double gamma);
  /// The mixed strategy over the actions (exploration gamma included).
  Eigen::VectorXd Probabilities() const;
  /// Draws an action from Probabilities().
  int Sample(Rng& rng) const { return SampleIndex(Probabilities(), rng); }
  /// Observes `reward` in [0, 1] for the played `action` and updates the feature-weight estimates.
  void Update(int action, double reward);
  /// Estimated rewards per action.
  const Eigen::VectorXd& estimated_rewards() const { return estimates_; }

 private:
  Eigen::MatrixXd phi_;
  double eta_, gamma_;
  Eigen::VectorXd estimates_;
};

/// GP-MW options. Defaults follow docs/design.md (the R2-B2 authors' code): eta = 0.1 on raw
/// cumulative UCB rewards. With clip_rewards, UCBs are clipped to [0, 1] as in Sessa et al.
struct GpMwOptions {
  double eta = 0.1;           ///< Hedge learning rate, finite > 0
  bool clip_rewards = false;  ///< clip the UCB rewards to [0, 1]
  /// Throws std::invalid_argument when eta is not finite and > 0.
  void Validate() const;
};

/// GP-MW (Sessa et al. 2019, Alg. 1): Hedge over K actions whose reward vector after each
/// round is the GP-UCB mu + beta^{1/2} sigma of the joint GP at (action k, opponent's action)
/// for every k; the caller builds those joint inputs.
class GpMw {
 public:
  /// GP-MW (Sessa et al., NeurIPS 2019) over `num_actions` actions.
  GpMw(int num_actions, GpMwOptions options = {});
  /// The Hedge weights' mixed strategy.
  Eigen::VectorXd Probabilities() const { return hedge_.Probabilities(); }
  /// Draws an action from Probabilities().
  int Sample(Rng& rng) const { return hedge_.Sample(rng); }
  /// joint_inputs [K, D]: row k = the joint GP input for own action k and the opponent's
  /// observed action; beta >= 0. Throws std::invalid_argument if the row count is not K.
  void Update(const ExactGP& gp, const Eigen::MatrixXd& joint_inputs, double beta);
  /// The underlying Hedge learner.
  const Hedge& hedge() const { return hedge_; }

 private:
  Hedge hedge_;
  GpMwOptions options_;
};

}  // namespace advbo::bo
