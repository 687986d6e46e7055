#include "games/belief.h"

#include <stdexcept>

namespace advbo::games {

bo::FitOptions BeliefOptions::DefaultFit() {
  bo::FitOptions f;
  f.restarts = 1;
  f.max_iterations = 50;
  return f;
}

PayoffBelief::PayoffBelief(int agent, int joint_dim, const bo::ExactGP& prior,
                           BeliefOptions options)
    : agent_(agent), joint_dim_(joint_dim), gp_(prior), options_(options) {
  if (agent < 0 || joint_dim < 1)
    throw std::invalid_argument("PayoffBelief: negative agent index or joint dimension < 1");
  gp_.SetData(Eigen::MatrixXd(0, joint_dim), Eigen::VectorXd(0));
}

void PayoffBelief::Update(const GameHistory& h) {
  if (h.joint_dim() != joint_dim_)
    throw std::invalid_argument(
        "PayoffBelief: the belief's joint dimension " + std::to_string(joint_dim_) +
        " differs from the joint action dimension " + std::to_string(h.joint_dim()));
  const int n = gp_.num_data();
  if (h.rounds() == n) return;
  if (h.rounds() == n + 1 && n > 0) {
    gp_.AddObservation(h.JointAt(n), h.PayoffsAt(n)(agent_));
  } else {
    gp_.SetData(h.Joint(), h.Payoffs(agent_));
  }
  if (options_.refit_every > 0 && h.rounds() % options_.refit_every == 0 &&
      (options_.refit_until <= 0 || h.rounds() <= options_.refit_until)) {
    bo::Rng rng(
        bo::DeriveSeed(options_.fit_seed, static_cast<uint64_t>(h.rounds()) * 1000003ULL + agent_));
    bo::FitHyperparameters(&gp_, options_.fit, rng);
  }
}

}  // namespace advbo::games
