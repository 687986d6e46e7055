// The adversarial-ML repeated game of R2-B2 (Dai 2021 thesis Sec. 8.4.2.1, App. E.6.2.1a):
// a black-box attacker and a defender act in the latent spaces of VAEs.
//
// One round with attacker action a_1 and defender action a_2 (each in [-2, 2]^z):
//   x_1 = clip(Dec_A(Enc_A(x_0) + a_1); x_0 +- eps, [0, 1])      attacker's image
//   x_2 = clip(Dec_D(Enc_D(x_1) + a_2); x_1 +- eps, [0, 1])      defended image
// (the attacker's clip is anchored on the clean image, the defender's on the attacker's
// image, docs/design.md). With LatentGameOptions::strength_action the defender's action has
// one more coordinate w in [0, 1], its purification strength (advbo's extension, not in the
// thesis): x_2 = clip(x_1 + w (Dec_D(Enc_D(x_1) + a_2) - x_1); x_1 +- eps, [0, 1]), so w = 0
// passes the attacker's image through unchanged and w = 1 is the thesis' move. The target model
// scores x_2 (one query): attack score s = max_{c != y} p_c(x_2) is the attacker's payoff, 1 - s
// the defender's (constant-sum); the round is a successful attack when s > p_y(x_2).
#pragma once

#include <vector>

#include "games/game.h"
#include "oracle/autoencoder.h"
#include "oracle/classifier.h"

namespace advbo::defenses {

/// Options of the latent-space game.
struct LatentGameOptions {
  double epsilon = 0.2;       ///< L_inf radius of each clip (0.2 MNIST, 0.05 CIFAR-10)
  double action_bound = 2.0;  ///< actions in [-bound, bound]^z (App. E.6.2.1a: 2)
  /// false = no defender stage: x_2 = x_1 whatever a_2 is (the "without defender" runs of
  /// App. E.6.2.2b, Fig. E.10)
  bool defender_active = true;
  /// true = the defender's action is [a_2, w]: z latent coordinates in [-bound, bound] and a
  /// purification strength w in [0, 1] (w = 0: pass-through, the "no defender" image; w = 1:
  /// the thesis' move). false (default) = the thesis' action space, a_2 only.
  bool strength_action = false;
  /// epsilon in (0, 1], action_bound > 0; throws std::invalid_argument "latent game: ...".
  void Validate() const;
};

/// The two-agent game environment (agent 0 = attacker, agent 1 = defender).
class LatentGame final : public games::GameEnvironment {
 public:
  /// clean: C*H*W pixels in [0, 1] of a correctly classified image with label true_class.
  /// The models must outlive the game. Throws std::invalid_argument on a size mismatch
  /// between the models, eps outside (0, 1] or a non-positive bound.
  LatentGame(const oracle::Classifier& model, const oracle::Autoencoder& attacker_vae,
             const oracle::Autoencoder& defender_vae, const float* clean, int true_class,
             LatentGameOptions options = {});

  /// Two agents: the attacker (0) and the defender (1).
  int num_agents() const override { return 2; }
  /// Action space of agent `m` (0 attacker, 1 defender).
  const games::ActionSpace& space(int m) const override { return spaces_.at(m); }
  /// (s, 1 - s) for the joint action; one model query.
  Eigen::VectorXd Payoffs(const std::vector<Eigen::VectorXd>& actions) override;
  /// Agent m's payoffs [K] for candidates [K, d_m] against the other's action: one batch
  /// of K model queries (counted in candidate_queries(), not queries()). For the defender
  /// (m = 1) the attacker's image is decoded once and each candidate's defended image
  /// scored; for the attacker each candidate's image goes through the defender's move.
  Eigen::VectorXd CandidatePayoffs(int m, const std::vector<Eigen::VectorXd>& actions,
                                   const Eigen::MatrixXd& candidates) override;
  /// {"attack_score", "true_prob", "success", "linf_attacker" (x_1 vs x_0),
  ///  "linf_defender" (x_2 vs x_1)} of the last Payoffs call, and "strength" (w) with the
  ///  strength action.
  nlohmann::json RoundDetails(const std::vector<Eigen::VectorXd>& actions,
                              const Eigen::VectorXd& payoffs) override;

  /// The attacker's and the defended image of a joint action (C*H*W each). a1 [z_A], a2
  /// [z_D] or [z_D + 1] with the strength action. Throws std::invalid_argument on a size
  /// mismatch.
  void Images(const Eigen::VectorXd& a1, const Eigen::VectorXd& a2, std::vector<float>* x1,
              std::vector<float>* x2) const;
  /// The defended images [K * C*H*W] of the attacker's image x1 under each defender action
  /// (rows of a2 [K, z_D] or [K, z_D + 1]); batched Images without the round's bookkeeping.
  std::vector<float> DefendedImages(const std::vector<float>& x1, const Eigen::MatrixXd& a2) const;
  /// The clean image, C*H*W pixels in [0, 1].
  const std::vector<float>& clean() const { return clean_; }
  /// Model queries the game has made.
  long queries() const { return queries_; }
  /// Model queries the omniscient defender made scoring its candidates.
  long candidate_queries() const { return candidate_queries_; }

 private:
  const oracle::Classifier& model_;
  const oracle::Autoencoder &att_, &def_;
  std::vector<float> clean_;
  int true_class_;
  LatentGameOptions opt_;
  Eigen::VectorXd z0_;
  std::vector<games::ActionSpace> spaces_;
  long queries_ = 0, candidate_queries_ = 0;
  double last_score_ = 0, last_true_ = 0;
  mutable double last_linf1_ = 0, last_linf2_ = 0, last_strength_ = 1;  // last Images call
};

}  // namespace advbo::defenses
