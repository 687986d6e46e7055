// A defender that plays a repeated game against the attack, one round per query (Dai 2021
// thesis Sec. 8.4.2.2 and App. E.6.2.2a): "in each iteration, D only needs to receive the
// image perturbed by A and choose its action that best-responds to this perturbed image".
//
// Round t = one query x_t of any attack (BOS^2, Square, Parsimonious, ...), inside the
// oracle pipeline after the attack's eps-ball projection:
//   context  c_t = Enc_D(x_t), the defender-VAE code of the attacker's image (the attacker's
//            action as the defender sees it, App. E.6.2.2a); a constant 0 when no VAE is used
//   action   a_t in the defender's action space, chosen by
//              level 1  R2-B2 level 1 as a second mover (eq. 8.3 with the attacker's action
//                       revealed): the GP-UCB maximiser of the defender's payoff GP over the
//                       joint input (c_t, a), i.e. a best response to x_t
//              level 0  uniformly random actions (the random-search defender of Table 8.1)
//            before its first feedback a level-1 defender plays the neutral action (latent
//            a = 0: the clipped VAE reconstruction; parameterised: the mildest setting of
//            every stage -- JPEG quality 95, 8 bits, blur sigma 0.3, no noise, ratio 0.05)
//   output   latent:  clip(Dec_D(c_t + a_t); x_t +- eps_d, [0, 1]), a_t in [-2, 2]^z
//            params:  the input transformations of defense.h with parameters set by a_t in
//                     [0, 1]^p (each stage one tunable parameter, see ParseGameDefense)
//   payoffs  attacker y_t = the oracle's attack objective of the defended query (> 0 iff
//            the attack succeeds), defender -y_t ("the negative loss", App. E.6.2.2a);
//            observed after the model scores the batch (Feedback).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "bo/random.h"
#include "defenses/defense.h"
#include "games/game.h"
#include "games/r2b2.h"
#include "oracle/autoencoder.h"
#include "oracle/oracle.h"

namespace advbo::defenses {

/// Options of a GameDefense.
struct GameDefenseOptions {
  int level = 1;              ///< 1 = R2-B2 level-1 best response, 0 = random actions
  int candidates = 200;       ///< own-action candidates per decision (scrambled Sobol)
  double epsilon = 0.2;       ///< latent actions: L_inf radius of the defended image around
                              ///< the attacker's (pixels in [0, 1])
  double action_bound = 2.0;  ///< latent actions in [-bound, bound]^z (App. E.6.2.1a)
  int refit_every = 10;       ///< GP hyperparameter refit period in rounds (App. E.6.2.1a)
  int refit_until = 300;      ///< no refits after this many rounds (bounds the O(N^3) fits
                              ///< of budgets of ~1,000 queries); 0 = refit throughout
  double gp_noise = 1e-2;     ///< GP noise variance (standardised units)
  uint64_t seed = 0;          ///< candidates, refit restarts and random actions
  /// level 0 or 1, epsilon and action_bound > 0, candidates >= 1, refit_every and
  /// refit_until >= 0, gp_noise > 0; throws std::invalid_argument "game defense: ...".
  void Validate() const;
};

/// One tunable stage of a parameterised defender: defense `name` with parameter `param`
/// in [lo, hi] (rounded when `integer`).
struct TunableStage {
  /// The stage's defense name and the parameter the defender tunes.
  ///@{
  std::string name, param;
  ///@}
  /// The parameter's range [lo, hi].
  ///@{
  double lo, hi;
  ///@}
  /// Whether the parameter is rounded to an integer.
  bool integer;
};

/// A parsed defender spec.
struct GameDefenseSpec {
  std::string agent;                 ///< "r2b2" (level 1) or "random" (level 0)
  bool latent = false;               ///< latent-space actions (needs a VAE)
  std::vector<TunableStage> stages;  ///< parameterised actions (empty when latent)
  /// The defender's GP sees at most the last 2 x window rounds: once it holds 2 x window it
  /// forgets all but the last window (GameHistory::DropOldest), so its cost per query stays
  /// bounded however long a session runs. 0 = every round (the exact GP of the thesis).
  int window = kDefaultDefenderWindow;
  /// The level-1 defender's exploration weight (bo::ParseExplorationWeight); "" = R2-B2's
  /// default (r2b2_ref).
  std::string beta;
  /// Canonical text, e.g. "r2b2:jpeg+noise", with ":window=N,beta=B" for settings that are
  /// not the defaults.
  std::string Spec() const;
  /// The default window of a game defender's GP (rounds; see `window`).
  static constexpr int kDefaultDefenderWindow = 0;
};

/// Whether `spec` names a game defender ("r2b2:..." or "random:...") rather than a fixed
/// input transformation.
bool IsGameDefense(const std::string& spec);

/// Parses "AGENT:ACTIONS[:SETTINGS]": AGENT = r2b2 | random; ACTIONS = latent, or tunable
/// stages joined by '+': jpeg (quality 10..95), bits (depth 1..8), blur (sigma 0.3..2),
/// noise (sigma 0..0.1; 0 = off), resize (ratio 0.05..0.3); SETTINGS = comma-separated
/// window=N (the GP's window of recent rounds, 0..1,000,000; GameDefenseSpec::window) and
/// beta=POLICY (bo::ParseExplorationWeight). Throws std::invalid_argument naming the part and
/// the accepted values.
GameDefenseSpec ParseGameDefense(const std::string& spec);

/// `spec` with window=`window` (0..1,000,000) added when it is a game defender that names no
/// window setting; any other spec is returned unchanged. `advbo serve` gives its defenders
/// kServedDefenderWindow this way, so a client session's cost per query stays bounded (issue
/// #39: window 100 and the exact GP reach the same verdicts on the CIFAR-10 defense table,
/// docs/results/games.md). Throws std::invalid_argument as ParseGameDefense, or for a window
/// out of range.
std::string WithDefaultWindow(const std::string& spec, int window);

/// The window `advbo serve` gives a game defender whose spec names none (rounds).
inline constexpr int kServedDefenderWindow = 100;

/// The defender of one attack instance (its history is that instance's queries).
class GameDefense {
 public:
  /// vae: the defender's VAE (required for latent actions, optional context otherwise; must
  /// outlive this object); c, h, w: image shape. Throws std::invalid_argument on a latent
  /// spec without a VAE, a VAE of another image size, or bad options.
  GameDefense(GameDefenseSpec spec, const oracle::Autoencoder* vae, int c, int h, int w,
              GameDefenseOptions options);
  /// Chooses an action for each of the n attacker images [n, C, H, W] (in [0, 1]) and
  /// replaces each by its defended version, in place. All n use the history so far.
  void Transform(float* images, int n);
  /// The model's scores of the batch last transformed: records one round per image and
  /// updates the defender. Throws std::invalid_argument if the sizes do not match.
  void Feedback(const oracle::QueryResult& result);
  /// Actions of the last Transform still waiting for their Feedback (one per image).
  const std::vector<Eigen::VectorXd>& PendingActions() const { return pending_action_; }
  /// The action applied in round t (0-based, t < rounds()) [action dim].
  Eigen::VectorXd Action(int t) const { return actions_.at(t); }
  /// Actions applied so far, one row per round [T, action dim] (all of them, also those
  /// the GP's window has forgotten).
  Eigen::MatrixXd Actions() const;
  /// Rounds played (queries with feedback).
  int rounds() const { return static_cast<int>(actions_.size()); }
  /// Rounds the defender's GP currently holds (<= 2 x spec().window when a window is set).
  int gp_rounds() const { return history_.rounds(); }
  /// The parsed spec the defender was built from.
  const GameDefenseSpec& spec() const { return spec_; }
  /// Dimension of the defender's action space.
  int action_dim() const { return space_.dim(); }
  /// The action played before any feedback at level 1 (see the file comment).
  Eigen::VectorXd NeutralAction() const;
  /// The pipeline a parameterised action a [p] in [0, 1]^p stands for.
  DefensePipeline PipelineFor(const Eigen::VectorXd& a) const;

 private:
  void Apply(float* image, const Eigen::VectorXd& context, const Eigen::VectorXd& a);
  GameDefenseSpec spec_;
  const oracle::Autoencoder* vae_;
  int c_, h_, w_;
  GameDefenseOptions opt_;
  games::ActionSpace context_space_, space_;
  games::GameHistory history_;
  std::unique_ptr<games::R2b2Agent> agent_;
  bo::Rng rng_;
  std::vector<Eigen::VectorXd> pending_context_, pending_action_;
  std::vector<Eigen::VectorXd> actions_;  // every action with feedback, in order
};

}  // namespace advbo::defenses
