// Level-0 (mixed) strategies P^0_{m,t} of R2-B2 (Dai 2021 thesis Sec. 8.3.1.1 and App. E.1,
// E.6.1.1c): random search, GP-MW (Sessa et al. 2019), EXP3 for linear bandits over random
// Fourier features, and a point mass (any deterministic strategy, e.g. a fixed action).
//
// A level-1 agent needs the *other* agent's level-0 strategy (eq. 8.3); an R2-B2 agent keeps
// its own copy of every agent's level-0 strategy and feeds each the same history, so the
// copies evolve like the originals (up to their private random draws).
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "bo/gp.h"
#include "bo/online_learning.h"
#include "games/belief.h"
#include "games/game.h"

namespace advbo::games {

/// A level-0 mixed strategy of agent m over its action space.
class Level0Strategy {
 public:
  virtual ~Level0Strategy() = default;
  /// Name of the strategy as specs spell it.
  virtual std::string name() const = 0;
  /// n i.i.d. draws from P^0_t: [n, d_m].
  virtual Eigen::MatrixXd Sample(int n, bo::Rng& rng) const = 0;
  /// If P^0_t has finite support: its points [K, d_m] and probabilities [K] (sum 1), and
  /// true; false for continuous strategies (then only Sample is available).
  virtual bool FiniteDistribution(Eigen::MatrixXd* support, Eigen::VectorXd* probs) const = 0;
  /// Update after a round (the history's last row). `gp` is the belief of this agent's
  /// payoff f_m (already updated) and beta the current exploration weight; strategies that
  /// do not learn ignore them.
  virtual void Observe(const GameHistory& history, int m, const bo::ExactGP& gp, double beta) {
    (void)history;
    (void)m;
    (void)gp;
    (void)beta;
  }
  /// An independent copy with the same state.
  virtual std::unique_ptr<Level0Strategy> Clone() const = 0;
};

/// Random search: the uniform distribution over the action space (grid rows or the box).
class RandomSearchStrategy final : public Level0Strategy {
 public:
  /// Uniform random actions in `space`.
  explicit RandomSearchStrategy(ActionSpace space);
  /// "random".
  std::string name() const override { return "random"; }
  Eigen::MatrixXd Sample(int n, bo::Rng& rng) const override;
  bool FiniteDistribution(Eigen::MatrixXd* support, Eigen::VectorXd* probs) const override;
  /// An independent copy.
  std::unique_ptr<Level0Strategy> Clone() const override;

 private:
  ActionSpace space_;
};

/// A point mass on one action (a deterministic level-0 strategy).
class PointMassStrategy final : public Level0Strategy {
 public:
  /// Always plays `action`.
  explicit PointMassStrategy(Eigen::VectorXd action);
  /// "point".
  std::string name() const override { return "point"; }
  Eigen::MatrixXd Sample(int n, bo::Rng& rng) const override;
  bool FiniteDistribution(Eigen::MatrixXd* support, Eigen::VectorXd* probs) const override;
  /// An independent copy.
  std::unique_ptr<Level0Strategy> Clone() const override;
  /// Changes the action it plays.
  void set_action(const Eigen::VectorXd& a) { action_ = a; }

 private:
  Eigen::VectorXd action_;
};

/// GP-MW (Sessa et al. 2019; thesis App. E.1) over a finite action space: Hedge whose reward
/// of every own action k after round t is the GP-UCB of f_m at (k, others' actions of round
/// t). Defaults (docs/design.md): eta = 0.1 on raw UCB rewards.
class GpMwStrategy final : public Level0Strategy {
 public:
  /// Throws std::invalid_argument if the space is not finite.
  GpMwStrategy(ActionSpace space, bo::GpMwOptions options = {});
  /// "gpmw".
  std::string name() const override { return "gpmw"; }
  Eigen::MatrixXd Sample(int n, bo::Rng& rng) const override;
  bool FiniteDistribution(Eigen::MatrixXd* support, Eigen::VectorXd* probs) const override;
  void Observe(const GameHistory& history, int m, const bo::ExactGP& gp, double beta) override;
  /// An independent copy with the same weights.
  std::unique_ptr<Level0Strategy> Clone() const override;

 private:
  ActionSpace space_;
  bo::GpMw mw_;
};

/// EXP3 for adversarial linear bandits (App. E.6.1.1c) over a finite action space: each own
/// action is represented by `num_features` random Fourier features of an SE kernel on the
/// own action (lengthscale given), rewards are the observed own payoffs. Defaults
/// (docs/design.md): 5 features, eta = gamma = 0.1.
class Exp3RffStrategy final : public Level0Strategy {
 public:
  /// Throws std::invalid_argument if the space is not finite or num_features < 1.
  Exp3RffStrategy(ActionSpace space, double lengthscale, bo::Rng& rng, int num_features = 5,
                  double eta = 0.1, double gamma = 0.1);
  /// "exp3".
  std::string name() const override { return "exp3"; }
  Eigen::MatrixXd Sample(int n, bo::Rng& rng) const override;
  bool FiniteDistribution(Eigen::MatrixXd* support, Eigen::VectorXd* probs) const override;
  void Observe(const GameHistory& history, int m, const bo::ExactGP& gp, double beta) override;
  /// An independent copy with the same estimates.
  std::unique_ptr<Level0Strategy> Clone() const override;

 private:
  ActionSpace space_;
  bo::Exp3Linear exp3_;
};

/// A BO agent that ignores the other agents (Dai 2021 thesis App. E.6.2.2b: the "GP-UCB"
/// and "TS" attackers): a GP over its *own* action only, fit to its own observed payoffs,
/// hyperparameters refit on the BeliefOptions schedule with restarts seeded by
/// (fit_seed, round), so a copy kept by another agent holds the same posterior.
///   GP-UCB   a pure strategy: the maximiser of mu + beta^{1/2} sigma over a fixed candidate
///            set (beta from the owning agent's policy);
///   TS       a mixed strategy: the maximiser of one joint posterior sample over the
///            candidates (a fresh sample per draw).
/// Before any observation both play uniformly over the candidates.
class OwnActionBoStrategy final : public Level0Strategy {
 public:
  /// The acquisition: GP-UCB or Thompson sampling.
  enum class Acquisition { kUcb, kThompson };
  /// prior: GP over the own action [d_m] (kernel input dimension d_m; its data ignored);
  /// candidates: size of the fixed candidate set (scrambled Sobol on a box, a random subset
  /// of a larger grid) drawn from `candidate_seed`. Throws std::invalid_argument if
  /// candidates < 1.
  OwnActionBoStrategy(ActionSpace space, Acquisition acquisition, const bo::ExactGP& prior,
                      int candidates, uint64_t candidate_seed, BeliefOptions belief = {});
  /// "gpucb" or "ts".
  std::string name() const override { return acq_ == Acquisition::kUcb ? "gpucb" : "ts"; }
  Eigen::MatrixXd Sample(int n, bo::Rng& rng) const override;
  /// GP-UCB: its single action (probability 1); TS: false.
  bool FiniteDistribution(Eigen::MatrixXd* support, Eigen::VectorXd* probs) const override;
  /// Brings the own-action belief (a PayoffBelief with BeliefInputs::kOwnAction, created
  /// for agent m at the first call) up to date; `gp` (the joint belief) is ignored, `beta`
  /// kept for the UCB. Throws std::invalid_argument if m changes between calls.
  void Observe(const GameHistory& history, int m, const bo::ExactGP& gp, double beta) override;
  /// An independent copy.
  std::unique_ptr<Level0Strategy> Clone() const override;
  /// The own-action GP [d_m] -> payoff (the prior before the first observation).
  const bo::ExactGP& gp() const { return belief_ ? belief_->gp() : prior_; }
  /// The finite candidate set [C, d] it chooses from.
  const Eigen::MatrixXd& candidates() const { return cands_; }

 private:
  Eigen::VectorXd UcbMaximiser() const;
  ActionSpace space_;
  Acquisition acq_;
  bo::ExactGP prior_;
  Eigen::MatrixXd cands_;
  BeliefOptions options_;
  std::optional<PayoffBelief> belief_;
  double beta_ = 4.0;
};

/// What MakeLevel0 needs beyond the name and the space.
struct Level0Options {
  double rff_lengthscale = 0.1;  ///< exp3: RFF lengthscale
  int candidates = 200;          ///< gpucb / ts: candidate-set size
  uint64_t candidate_seed = 0;   ///< gpucb / ts: candidate-set seed
  double gp_noise = 1e-2;        ///< gpucb / ts: noise variance of the own-action GP
  double gp_lengthscale = 1.0;   ///< gpucb / ts: prior SE lengthscale of the own-action GP
  bool standardize = true;       ///< gpucb / ts: standardise payoffs (false: zero prior mean,
                                 ///< payoffs in their own units, as GPy in the reference code)
  BeliefOptions belief;          ///< gpucb / ts: refit schedule and seed
  /// rff_lengthscale and gp_noise finite > 0, candidates >= 1, belief valid
  /// (BeliefOptions::Validate). Throws std::invalid_argument.
  void Validate() const;
};

/// Builds a level-0 strategy by name: "random", "gpmw", "exp3" (finite spaces only for
/// these two), "gpucb", "ts" (OwnActionBoStrategy, SE-ARD prior with unit lengthscales)
/// or "none" (a point mass on the centre of the space: an agent that does nothing).
/// `rng` draws exp3's random features. Throws std::invalid_argument naming the accepted
/// values or the finite-space requirement.
std::unique_ptr<Level0Strategy> MakeLevel0(const std::string& name, const ActionSpace& space,
                                           const Level0Options& options, bo::Rng& rng);
/// The same with default options except exp3's RFF `lengthscale`.
std::unique_ptr<Level0Strategy> MakeLevel0(const std::string& name, const ActionSpace& space,
                                           double lengthscale, bo::Rng& rng);
/// The names MakeLevel0 accepts.
const std::vector<std::string>& Level0Names();

}  // namespace advbo::games
