#include "games/belief.h"

#include <stdexcept>

namespace advbo::games {

bo::FitOptions BeliefOptions::DefaultFit() {
  bo::FitOptions f;
  f.restarts = 1;
  f.max_iterations = 50;
  return f;
}

void BeliefOptions::Validate() const {
  if (refit_every < 0 || refit_until < 0)
    throw std::invalid_argument("PayoffBelief: refit_every and refit_until must be >= 0");
  fit.Validate();
}

PayoffBelief::PayoffBelief(int agent, int input_dim, const bo::ExactGP& prior,
                           BeliefOptions options, BeliefInputs inputs)
    : agent_(agent), input_dim_(input_dim), inputs_(inputs), gp_(prior), options_(options) {
  options.Validate();
  if (agent < 0 || input_dim < 1)
    throw std::invalid_argument("PayoffBelief: negative agent index or input dimension < 1");
  gp_.SetData(Eigen::MatrixXd(0, input_dim), Eigen::VectorXd(0));
}

void PayoffBelief::Update(const GameHistory& h) {
  const bool own = inputs_ == BeliefInputs::kOwnAction;
  if (agent_ >= h.num_agents())
    throw std::invalid_argument("PayoffBelief: agent " + std::to_string(agent_) +
                                " is not in a game of " + std::to_string(h.num_agents()) +
                                " agents");
  const int d = own ? h.dim(agent_) : h.joint_dim();
  if (d != input_dim_)
    throw std::invalid_argument("PayoffBelief: the belief's input dimension " +
                                std::to_string(input_dim_) + " differs from the " +
                                (own ? "agent's action" : "joint action") + " dimension " +
                                std::to_string(d));
  const int n = gp_.num_data();
  const bool same_window = h.dropped() == dropped_seen_;
  dropped_seen_ = h.dropped();
  if (same_window && h.rounds() == n) return;
  if (same_window && h.rounds() == n + 1 && n > 0) {
    gp_.AddObservation(own ? h.Action(n, agent_) : h.JointAt(n), h.PayoffsAt(n)(agent_));
  } else {
    gp_.SetData(own ? h.Actions(agent_) : h.Joint(), h.Payoffs(agent_));
  }
  // The refit schedule counts every round played, also those a window has dropped.
  const long played = h.total_rounds();
  if (options_.refit_every > 0 && played % options_.refit_every == 0 &&
      (options_.refit_until <= 0 || played <= options_.refit_until)) {
    // Own-action beliefs draw from a stream of their own (7919 (m + 1)), so an agent holding
    // both kinds of belief about the same payoff does not reuse restarts.
    const uint64_t salt = own ? 7919ULL * (agent_ + 1) : static_cast<uint64_t>(agent_);
    bo::Rng rng(
        bo::DeriveSeed(options_.fit_seed, static_cast<uint64_t>(played) * 1000003ULL + salt));
    bo::FitHyperparameters(&gp_, options_.fit, rng);
  }
}

}  // namespace advbo::games
