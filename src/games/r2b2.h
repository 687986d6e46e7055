// R2-B2: recursive-reasoning BO agents (Dai 2021 thesis, Chapter 8, Algorithm 8.1, and
// App. E.2 for more than two agents).
//
//  level 0   sample from the agent's own level-0 mixed strategy P^0 (Sec. 8.3.1.1);
//  level 1   maximise the expected GP-UCB over the others' level-0 strategies (eq. 8.3 / E.1)
//            -- exactly when their supports are finite and small, else by S samples;
//            R2-B2-Lite best-responds to one sampled level-0 action instead (eq. 8.8 / E.2);
//  level k>=2 (two agents) best-respond to the other's simulated level-(k-1) action
//            (eqs. 8.4-8.7), recursing down to a level-1 base case; with M > 2 agents up to
//            level 2 (eq. E.3): level-1 others are simulated, level-0 others averaged over.
//
// The GP-UCB alpha_{m,t}(x) = mu_{t-1}(x) + beta_t^{1/2} sigma_{t-1}(x) (eq. 8.2) of every
// agent's payoff lives in that agent's PayoffBelief; beta_t follows a named policy
// (docs/design.md; default r2b2_ref = 0.5 d log(2t), d = the own action dimension).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "bo/acquisition.h"
#include "games/belief.h"
#include "games/game.h"
#include "games/level0.h"

namespace advbo::games {

/// Options of an R2-B2 agent.
struct R2b2Options {
  int level = 1;                ///< reasoning level k >= 0
  bool lite = false;            ///< R2-B2-Lite at level 1 (eq. 8.8): one sampled opponent action
  int samples = 500;            ///< S, samples of the others' level-0 strategies when the
                                ///< expectation (8.3) is approximated (App. E.6.2.1c: 500 MNIST,
                                ///< 1,000 CIFAR-10)
  long exact_limit = 20000;     ///< compute (8.3) exactly when the others' joint finite support
                                ///< has at most this many points
  int candidates = 1000;        ///< own-action candidates: on a continuous space a scrambled Sobol
                                ///< set, on a grid larger than this a random subset of its rows;
                                ///< fixed per agent so simulations of it are reproducible
  uint64_t candidate_seed = 0;  ///< seed of those candidate sets (shared by default)
  /// Own-action candidates when this agent searches a larger set than it assumes the
  /// others do (0 = `candidates`), e.g. a defender; the first `candidates` of
  /// them are the shared set.
  int own_candidates = 0;
  /// Also offer the 2^d vertices of a continuous own action space (d <= 12) as own
  /// candidates: the largest moves, which Sobol points rarely reach.
  bool vertex_candidates = false;
  /// Exploration weight beta_t of the GP-UCB the agent maximises.
  bo::ExplorationWeight beta{bo::BetaPolicy::kR2b2Ref, 0.0, 0.1};
  /// Per-agent beta_t policies (one per agent, own entry included) when the agents' UCBs
  /// differ, e.g. a defender exploring less than the attacker it models; empty =
  /// `beta` for every agent. Checked against the agent count by the agent.
  std::vector<bo::ExplorationWeight> agent_betas;
  /// M > 2 agents at level 2 (eq. E.3): the level (0 or 1) this agent assumes for every
  /// agent (own entry ignored); empty = all others at level 1.
  std::vector<int> other_levels;
  /// level >= 0, samples and candidates >= 1, own_candidates >= 0, exact_limit >= 0,
  /// other_levels entries 0 or 1
  /// (their count and the level's limit for M > 2 agents are checked by the agent, which
  /// knows M). Throws std::invalid_argument "R2-B2: ...".
  void Validate() const;
};

/// An R2-B2 agent. It owns a belief of every agent's payoff (its own GP-UCB; the others'
/// for simulating them at level >= 2) and a copy of every agent's level-0 strategy.
class R2b2Agent final : public Agent {
 public:
  /// self = this agent's index; spaces = all agents' action spaces; beliefs[m] = belief of
  /// f_m (m = 0..M-1); level0[m] = agent m's level-0 strategy as this agent models it (its
  /// own at index self). Throws std::invalid_argument on inconsistent sizes, level < 0,
  /// samples < 1, or level >= 3 with more than two agents.
  R2b2Agent(int self, std::vector<ActionSpace> spaces, std::vector<PayoffBelief> beliefs,
            std::vector<std::unique_ptr<Level0Strategy>> level0, R2b2Options options,
            bool moves_second = false);

  std::string name() const override;
  bool moves_second() const override { return moves_second_; }
  Eigen::VectorXd Act(const GameHistory& history, const std::vector<Eigen::VectorXd>& revealed,
                      bo::Rng& rng) override;
  void Observe(const GameHistory& history) override;
  /// The action of agent m its last Act best-responded to when that was one action: the
  /// revealed action, the simulated level-(k-1) action (level >= 2), the one sampled level-0
  /// action (R2-B2-Lite) or the single support point of m's level-0 model (e.g. GP-UCB, a
  /// pure strategy); empty when it averaged over several (level 1 over a mixed strategy),
  /// at level 0, or before its first Act.
  Eigen::VectorXd PredictedAction(int m) const override;

  /// What this agent computes agent m to play at `level` in the coming round (the
  /// recursion's inner steps; level 0 draws a sample). `revealed` as in Act.
  Eigen::VectorXd Simulate(int m, int level, const GameHistory& history,
                           const std::vector<Eigen::VectorXd>& revealed, bo::Rng& rng) const;
  /// The opponent action (two agents) its last level >= 2 decision best-responded to;
  /// empty before that.
  const Eigen::VectorXd& last_simulated_opponent() const { return last_simulated_; }

  /// Expected GP-UCB of agent m for each own candidate action: scores [C] for candidates
  /// [C, d_m], over others' joint actions `others` [S, D] (agent m's columns ignored) with
  /// weights [S] (sum 1). Evaluates C*S joint inputs in blocks.
  Eigen::VectorXd ExpectedUcbScores(int m, const Eigen::MatrixXd& candidates,
                                    const Eigen::MatrixXd& others, const Eigen::VectorXd& weights,
                                    int round) const;
  /// Own-action candidates of agent m: its grid, or its fixed Sobol set.
  const Eigen::MatrixXd& Candidates(int m) const { return candidates_.at(m); }
  /// Agent m's payoff belief.
  const PayoffBelief& belief(int m) const { return beliefs_.at(m); }
  /// Agent m's level-0 strategy.
  const Level0Strategy& level0(int m) const { return *level0_.at(m); }
  /// The agent's options.
  const R2b2Options& options() const { return options_; }

  /// beta_t of agent m's UCB in round `round` >= 1: options().beta (or agent_betas[m]) with d =
  /// agent m's own
  /// action dimension for r2b2_ref (the reference code), the joint dimension otherwise.
  double BetaOf(int m, int round) const;

 private:
  // Weighted joint actions of the others [S, D] for agent m's level-1 reasoning (others at
  // level 0, or fixed where `fixed[j]` is non-empty).
  void OthersDistribution(int m, const std::vector<Eigen::VectorXd>& fixed, bool lite, bo::Rng& rng,
                          Eigen::MatrixXd* others, Eigen::VectorXd* weights) const;
  // Simulate, also writing into (*assumed)[j] the others' actions agent m best-responds to
  // when its expectation has a single joint action (assumed may be null).
  Eigen::VectorXd Decide(int m, int level, const GameHistory& history,
                         const std::vector<Eigen::VectorXd>& revealed, bo::Rng& rng,
                         std::vector<Eigen::VectorXd>* assumed) const;
  Eigen::VectorXd BestResponse(int m, const Eigen::MatrixXd& others, const Eigen::VectorXd& w,
                               int round) const;

  int self_;
  std::vector<ActionSpace> spaces_;
  std::vector<PayoffBelief> beliefs_;
  std::vector<std::unique_ptr<Level0Strategy>> level0_;
  R2b2Options options_;
  bool moves_second_;
  std::vector<int> offsets_;
  int joint_dim_ = 0;
  double domain_size_ = 1.0;  // |X_1 x ... x X_M| for beta_t, 0 if any space is continuous
  std::vector<Eigen::MatrixXd> candidates_;
  Eigen::VectorXd last_simulated_;
  std::vector<Eigen::VectorXd> predicted_;  // per agent, of the last Act
};

}  // namespace advbo::games
