// The omniscient agent: an upper bound on what any agent with a given action set
// can achieve in a repeated game, not a learner. It moves second, sees the others' actual
// actions of the round, scores each of its candidate actions on the environment's true
// payoff (GameEnvironment::CandidatePayoffs: in the adversarial game, K model queries per
// round) and plays the best. Against an attacker, the cut it achieves bounds what R2-B2 (or
// any defender choosing from the same candidates) could achieve in that round.
#pragma once

#include <Eigen/Dense>
#include <string>
#include <vector>

#include "games/game.h"

namespace advbo::games {

/// Plays, as agent `self`, the candidate with the highest true payoff given the others'
/// revealed actions (the first such row on ties).
class OmniscientAgent final : public Agent {
 public:
  /// env must outlive the agent; candidates [K, d_self] (K >= 1), each a member of the
  /// agent's action space. Throws std::invalid_argument on an empty set, a wrong width or a
  /// candidate outside the space.
  OmniscientAgent(int self, GameEnvironment& env, Eigen::MatrixXd candidates);

  std::string name() const override { return "omniscient"; }
  bool moves_second() const override { return true; }
  /// Throws std::invalid_argument if some other agent's action is not revealed, or
  /// std::runtime_error if the environment returns non-finite or wrongly sized payoffs.
  Eigen::VectorXd Act(const GameHistory& history, const std::vector<Eigen::VectorXd>& revealed,
                      bo::Rng& rng) override;

  /// Candidate evaluations so far (K per round) and the chosen payoff of the last round.
  long evaluations() const { return evaluations_; }
  /// Attack score of the last round's best candidate.
  double last_payoff() const { return last_payoff_; }
  /// The candidate actions [C, d] it scores each round.
  const Eigen::MatrixXd& candidates() const { return candidates_; }

 private:
  int self_;
  GameEnvironment& env_;
  Eigen::MatrixXd candidates_;
  long evaluations_ = 0;
  double last_payoff_ = 0;
};

}  // namespace advbo::games
