#include "games/omniscient.h"

#include <stdexcept>
#include <utility>

namespace advbo::games {

OmniscientAgent::OmniscientAgent(int self, GameEnvironment& env, Eigen::MatrixXd candidates)
    : self_(self), env_(env), candidates_(std::move(candidates)) {
  if (self_ < 0 || self_ >= env_.num_agents())
    throw std::invalid_argument("omniscient agent: agent index out of range");
  const ActionSpace& space = env_.space(self_);
  if (candidates_.rows() < 1 || candidates_.cols() != space.dim())
    throw std::invalid_argument("omniscient agent: need candidates [K >= 1, " +
                                std::to_string(space.dim()) + "]");
  for (Eigen::Index k = 0; k < candidates_.rows(); ++k)
    if (!space.Contains(candidates_.row(k).transpose()))
      throw std::invalid_argument("omniscient agent: candidate " + std::to_string(k) +
                                  " lies outside its action space");
}

Eigen::VectorXd OmniscientAgent::Act(const GameHistory&,
                                     const std::vector<Eigen::VectorXd>& revealed, bo::Rng&) {
  const int m_agents = env_.num_agents();
  if (static_cast<int>(revealed.size()) != m_agents)
    throw std::invalid_argument("omniscient agent: the others' actions were not revealed");
  for (int j = 0; j < m_agents; ++j)
    if (j != self_ && revealed[j].size() != env_.space(j).dim())
      throw std::invalid_argument("omniscient agent: agent " + std::to_string(j) +
                                  "'s action was not revealed (it must move first)");
  const Eigen::VectorXd pay = env_.CandidatePayoffs(self_, revealed, candidates_);
  evaluations_ += candidates_.rows();
  if (pay.size() != candidates_.rows() || !pay.allFinite())
    throw std::runtime_error("omniscient agent: the game returned invalid candidate payoffs");
  Eigen::Index best;
  last_payoff_ = pay.maxCoeff(&best);
  return candidates_.row(best).transpose();
}

}  // namespace advbo::games
