// Synthetic two-agent games of the R2-B2 experiments (Dai 2021 thesis, Sec. 8.4.1 and
// App. E.6.1.1a): payoff functions sampled from a GP with the SE kernel (lengthscale 0.1)
// on the 100 x 100 grid of [0,1]^2 (agent 1 picks x_1, agent 2 picks x_2, 100 points each),
// scaled into [0, 1]; common-payoff (f_2 = f_1), general-sum (f_1, f_2 independent) or
// constant-sum (f_2 = 1 - f_1).
#pragma once

#include <string>

#include "bo/gp.h"
#include "games/game.h"

namespace advbo::games {

enum class GameType { kCommonPayoff, kGeneralSum, kConstantSum };

/// Parses "common", "general", "constant" (also "common-payoff", "general-sum",
/// "constant-sum"); throws std::invalid_argument listing them otherwise.
GameType ParseGameType(const std::string& s);
std::string GameTypeName(GameType t);

/// A sampled synthetic game. Payoff tables are [K, K] with row = agent 1's grid index and
/// column = agent 2's; payoffs in [0, 1].
class SyntheticGame final : public GameEnvironment {
 public:
  /// K >= 2 grid points per agent, SE lengthscale > 0. The sample is exact: the SE kernel
  /// on a product grid factorises, so f = L Z L^T with L the Cholesky factor of the 1-D
  /// Gram [K, K] and Z [K, K] standard normal. Throws std::invalid_argument on bad sizes.
  SyntheticGame(GameType type, bo::Rng& rng, int grid = 100, double lengthscale = 0.1);

  /// Two agents.
  int num_agents() const override { return 2; }
  /// The action space of agent m (both play on the same grid).
  const ActionSpace& space(int m) const override { return space_; }
  Eigen::VectorXd Payoffs(const std::vector<Eigen::VectorXd>& actions) override;
  /// Table lookups: column (agent 0) or row (agent 1) of the other's grid action.
  Eigen::VectorXd CandidatePayoffs(int m, const std::vector<Eigen::VectorXd>& actions,
                                   const Eigen::MatrixXd& candidates) override;
  /// {"regret": [r_1, r_2]} with r_m = max f_m - f_m(x_t) (the thesis' mean-regret summand,
  /// Sec. 8.4.1 footnote 5).
  nlohmann::json RoundDetails(const std::vector<Eigen::VectorXd>& actions,
                              const Eigen::VectorXd& payoffs) override;

  /// Payoff structure: common, general or constant sum.
  GameType type() const { return type_; }
  /// Payoff table of agent m on the joint grid.
  const Eigen::MatrixXd& payoff_table(int m) const { return m == 0 ? f1_ : f2_; }
  /// Lengthscale of the GP the payoffs were drawn from.
  double lengthscale() const { return lengthscale_; }
  /// The GP the payoffs were drawn from, as the agents' prior over the joint action [2]
  /// (App. E.6.1.1a uses the true hyperparameters): SE, lengthscale 0.1, unit variance on
  /// standardised payoffs, noise variance `noise_variance` (docs/design.md: 1e-2).
  bo::ExactGP TruePrior(double noise_variance = 1e-2) const;

 private:
  GameType type_;
  double lengthscale_;
  ActionSpace space_;
  Eigen::MatrixXd f1_, f2_;
};

}  // namespace advbo::games
