// Repeated games with simultaneous moves and perfect monitoring (Dai 2021 thesis, Sec. 8.2
// and Algorithm 8.1): in every round t each of M agents picks an action x_{m,t} from its
// action space, then every agent observes the joint action and the noisy payoffs
// y_{m,t} = f_m(x_{1,t}, ..., x_{M,t}) + eps_m, eps_m ~ N(0, sigma^2).
//
// Perfect monitoring here includes the other agents' payoffs, which the level-k >= 2
// recursion needs to simulate them (eq. 8.7); in constant-sum games they follow from one's
// own payoff anyway (App. E.6.2.2a).
#pragma once

#include <Eigen/Dense>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "bo/random.h"

namespace advbo::games {

/// The action space X_m of one agent: the box [lower, upper] (each [d]) or, when `grid` is
/// non-empty, the finite set of its rows [K, d] (inside the box).
struct ActionSpace {
  /// Box bounds [d], lower <= upper.
  ///@{
  Eigen::VectorXd lower, upper;  ///< [d] box bounds, lower <= upper
  ///@}
  Eigen::MatrixXd grid;  ///< [K, d] finite action set; empty = continuous box

  /// Box [lo, hi]^d. Throws std::invalid_argument if d < 1 or lo > hi.
  static ActionSpace Box(int d, double lo, double hi);
  /// K equally spaced points of [lo, hi] (d = 1), as in the synthetic games (App. E.6.1.1a:
  /// 100 points of [0, 1]). Throws std::invalid_argument if K < 1.
  static ActionSpace Grid1d(int k, double lo, double hi);

  /// Dimension d.
  int dim() const { return static_cast<int>(lower.size()); }
  /// Whether the space is a finite grid.
  bool finite() const { return grid.rows() > 0; }
  /// Number of grid points (0 for a box).
  int size() const { return static_cast<int>(grid.rows()); }
  /// n uniform draws [n, d]: over the grid rows if finite, else over the box.
  Eigen::MatrixXd SampleUniform(int n, bo::Rng& rng) const;
  /// Index of the grid row nearest to x [d] (Euclidean). Throws std::invalid_argument on a
  /// continuous space.
  int NearestIndex(const Eigen::VectorXd& x) const;
  /// Whether x [d] is a member (grid row within 1e-12, or inside the box).
  bool Contains(const Eigen::VectorXd& x) const;
};

/// Everything every agent observes (perfect monitoring): joint actions and noisy payoffs of
/// all rounds so far, initial random rounds included.
class GameHistory {
 public:
  /// dims[m] = action dimension of agent m (M >= 1 agents, each d_m >= 1).
  explicit GameHistory(std::vector<int> dims);
  /// Appends one round: joint [D] (agents' actions concatenated in agent order) and
  /// payoffs [M]. Throws std::invalid_argument on wrong sizes or non-finite values.
  void Add(const Eigen::VectorXd& joint, const Eigen::VectorXd& payoffs);

  /// Forgets the oldest `k` rounds (0 <= k <= rounds()): a bounded window of recent rounds
  /// for long games (a defender over thousands of queries). Round indices then start at the
  /// oldest kept round; dropped() counts what was forgotten. Throws std::invalid_argument
  /// for k outside that range.
  void DropOldest(int k);

  /// Rounds held (indices 0 .. rounds() - 1).
  int rounds() const { return static_cast<int>(payoffs_.size()); }
  /// Rounds forgotten by DropOldest so far.
  long dropped() const { return dropped_; }
  /// Rounds played in all: dropped() + rounds().
  long total_rounds() const { return dropped_ + rounds(); }
  /// Number of agents.
  int num_agents() const { return static_cast<int>(dims_.size()); }
  /// Dimension of the joint action.
  int joint_dim() const { return offsets_.back(); }
  /// Dimension of agent m's action.
  int dim(int m) const { return dims_.at(m); }
  /// First joint-input column of agent m.
  int offset(int m) const { return offsets_.at(m); }
  /// Joint actions [T, D].
  Eigen::MatrixXd Joint() const;
  /// Noisy payoffs of agent m over all rounds [T].
  Eigen::VectorXd Payoffs(int m) const;
  /// Action of agent m in round t (0-based) [d_m].
  Eigen::VectorXd Action(int t, int m) const;
  /// Actions of agent m over all rounds [T, d_m].
  Eigen::MatrixXd Actions(int m) const;
  /// Joint action of round t.
  const Eigen::VectorXd& JointAt(int t) const { return joint_.at(t); }
  /// Payoffs of round t, one per agent.
  const Eigen::VectorXd& PayoffsAt(int t) const { return payoffs_.at(t); }

 private:
  std::vector<int> dims_, offsets_;
  std::vector<Eigen::VectorXd> joint_, payoffs_;
  long dropped_ = 0;
};

/// A player of a repeated game.
class Agent {
 public:
  virtual ~Agent() = default;
  /// Short label for reports, e.g. "r2b2:1", "r2b2:1-lite", "parsimonious".
  virtual std::string name() const = 0;
  /// Whether this agent moves after seeing the others' current actions (a defender that
  /// receives the attacker's image before transforming it, App. E.6.2.2a). Default false.
  virtual bool moves_second() const { return false; }
  /// Chooses the action [d_self] for round history.rounds() + 1. `revealed[m]` is agent m's
  /// current action when this agent moves second and m moves first, else empty.
  virtual Eigen::VectorXd Act(const GameHistory& history,
                              const std::vector<Eigen::VectorXd>& revealed, bo::Rng& rng) = 0;
  /// Called after every round (the history's last row is that round).
  virtual void Observe(const GameHistory& history) { (void)history; }
  /// The action [d_m] of agent m that this agent's last decision assumed, when it assumed a
  /// single one (a revealed action, an R2-B2-Lite sample, a point-mass level-0 model, a
  /// level >= 2 simulation); empty when it averaged over a distribution, did not model m, or
  /// has not acted. The game records it beside the action m played. Default empty.
  virtual Eigen::VectorXd PredictedAction(int m) const {
    (void)m;
    return {};
  }
};

/// The environment of a game: action spaces and noise-free payoffs f_m.
class GameEnvironment {
 public:
  virtual ~GameEnvironment() = default;
  /// Number of agents.
  virtual int num_agents() const = 0;
  /// Action space of agent m.
  virtual const ActionSpace& space(int m) const = 0;
  /// Noise-free payoffs [M] of the joint action (actions[m] in space m). May throw (e.g. a
  /// failing model); the game stops and reports it.
  virtual Eigen::VectorXd Payoffs(const std::vector<Eigen::VectorXd>& actions) = 0;
  /// Agent m's noise-free payoffs [K] when it plays each row of `candidates` [K, d_m] and
  /// every other agent j plays actions[j] (actions[m] is ignored): what an omniscient agent
  /// maximises (games/omniscient.h). Leaves what RoundDetails reports unchanged. The default
  /// throws std::logic_error (an environment that cannot score actions outside a round).
  virtual Eigen::VectorXd CandidatePayoffs(int m, const std::vector<Eigen::VectorXd>& actions,
                                           const Eigen::MatrixXd& candidates);
  /// Extra per-round fields for the JSONL record (e.g. attack success); default none.
  virtual nlohmann::json RoundDetails(const std::vector<Eigen::VectorXd>& actions,
                                      const Eigen::VectorXd& payoffs) {
    (void)actions;
    (void)payoffs;
    return nlohmann::json::object();
  }
};

/// A fixed candidate set of n actions of `space`, drawn from `seed`: the grid itself when it
/// has at most n rows, else n of its rows at random; on a box a scrambled Sobol design [n, d].
/// R2-B2 agents and the omniscient agent use it, so the same seed gives the same set.
/// Throws std::invalid_argument if n < 1.
Eigen::MatrixXd CandidateActions(const ActionSpace& space, int n, uint64_t seed);

/// Options of RunRepeatedGame.
struct GameOptions {
  int rounds = 150;           ///< T played rounds (after the initial ones), App. E.6
  int init_rounds = 1;        ///< rounds of uniformly random joint actions observed first
                              ///< (1 in the synthetic games, 5 in the adversarial-ML game)
  double payoff_noise = 0.0;  ///< std. dev. of the Gaussian noise on observed payoffs (>= 0)
  /// rounds, init_rounds >= 0, payoff_noise >= 0 finite; throws std::invalid_argument.
  void Validate() const;
};

/// One played round (initial random rounds included, flagged by `init`).
struct RoundRecord {
  int round = 0;  ///< 1-based over played rounds; <= 0 for init rounds
  /// True for the random initial rounds.
  bool init = false;
  std::vector<Eigen::VectorXd> actions;  ///< per agent
  Eigen::VectorXd payoffs;               ///< noise-free f_m [M]
  Eigen::VectorXd observed;              ///< noisy y_m [M]
  double seconds = 0;                    ///< wall time of the round (agents + environment)
  nlohmann::json details;                ///< GameEnvironment::RoundDetails
};

/// Plays init_rounds random rounds then `rounds` rounds of Algorithm 8.1 with the given
/// agents (one per environment agent, in order; first movers act before second movers).
/// `on_round` (optional) sees every record as it is produced. Throws std::invalid_argument
/// if the agent count does not match or an agent returns an action outside its space
/// (naming the agent), and propagates environment errors.
std::vector<RoundRecord> RunRepeatedGame(
    GameEnvironment& env, const std::vector<Agent*>& agents, const GameOptions& options,
    bo::Rng& rng, const std::function<void(const RoundRecord&)>& on_round = nullptr);

}  // namespace advbo::games
