// UHE-BO: BO with unknown GP hyperparameters (Ha et al., "Unknown hyperparameter estimation
// for Bayesian optimization", Alg. 1). Iterations come in pairs; EXP3 (Auer et al. 2002) picks
// an arm at every odd iteration and holds it for the even one: arm "random" samples the odd
// point uniformly and the even one by GP-UCB, arm "acquisition" uses GP-UCB for both
// (Sec. 5.1). The GP hyperparameters are fitted (MAP, Gamma priors) on a pseudo-i.i.d.
// dataset — M_t = 2|D_{t-1}| uniform points labelled with the value of their nearest
// evaluated point (eq. 2, Sec. 5.2) — while the posterior uses the evaluated data.
// Baselines on the same code: MAP-BO (GP-UCB, MAP on the evaluated data), RA-BO (always arm
// "random", pseudo-data fit; Sec. 6), Random+EXP3 (EXP3 mixing, MAP on the evaluated data;
// App. D Fig. 5) and random search.
#pragma once

#include <Eigen/Dense>
#include <cstdint>
#include <functional>
#include <string>

#include "bo/random.h"
#include "bo/session.h"

namespace advbo::algorithms {

/// Salt of UHE-BO's own engine (arms, random points, pseudo-i.i.d. data): callers derive it
/// as bo::DeriveSeed(run_seed, kUheSeedSalt), so the CLI and the bench draw the same stream.
inline constexpr uint64_t kUheSeedSalt = 0x0E3B0;

/// EXP3 over pairs of iterations with two arms (Alg. 1 lines 3-10 and 18-20):
/// gamma = sqrt(4 ln 2 / ((e - 1) T)); at an odd iteration p_m = (1 - gamma) w_m / sum w +
/// gamma / 2 and an arm is drawn; after the even iteration the held arm's weight is
/// multiplied by exp(gamma r / (2 p_m)) for its reward r in [0, 1]. Weights are kept in log
/// space (no overflow however long the run).
class PairedExp3 {
 public:
  /// horizon T >= 1 (the number of iterations after the initial data); else
  /// std::invalid_argument.
  explicit PairedExp3(int horizon);
  /// EXP3's exploration rate gamma.
  double gamma() const { return gamma_; }
  /// Current arm probabilities [2] (each >= gamma / 2, summing to 1).
  Eigen::Vector2d Probabilities() const;
  /// Draws an arm (0 or 1) with Probabilities(), remembering its probability for Update.
  int Draw(bo::Rng& rng);
  /// Rewards the last drawn arm with r (clamped to [0, 1]).
  void Update(double reward);
  /// Log-weights [2].
  const Eigen::Vector2d& log_weights() const { return log_w_; }

 private:
  double gamma_;
  Eigen::Vector2d log_w_ = Eigen::Vector2d::Zero();
  int last_arm_ = -1;
  double last_p_ = 1.0;
};

/// Labels of the query points xq [M, d]: y of each one's nearest point (Euclidean, first on
/// ties) among x [N, d] (N >= 1). Returns [M]. A query point equal to an evaluated point
/// gets that point's own value, so the pseudo loss of eq. (2) on X' subset of D is the
/// ordinary loss.
Eigen::VectorXd NearestLabels(const Eigen::MatrixXd& x, const Eigen::VectorXd& y,
                              const Eigen::MatrixXd& xq);

/// The pseudo-i.i.d. dataset of eq. (2): m points drawn uniformly from [0,1]^d (rng) and
/// labelled with y of their nearest point (Euclidean) among x [N, d] (N >= 1). Writes
/// x_pseudo [m, d] and y_pseudo [m]. Throws std::invalid_argument on empty data or m < 1.
void PseudoIidDataset(const Eigen::MatrixXd& x, const Eigen::VectorXd& y, int m, bo::Rng& rng,
                      Eigen::MatrixXd* x_pseudo, Eigen::VectorXd* y_pseudo);

/// The methods of the UHE-BO study.
enum class UheVariant {
  kUhe,         ///< EXP3 arms + pseudo-i.i.d. hyperparameter fit (the paper's method)
  kMap,         ///< GP-UCB every iteration, MAP fit on the evaluated data
  kRa,          ///< random / GP-UCB alternating, pseudo-i.i.d. fit (RA-BO, Sec. 6)
  kRandomExp3,  ///< EXP3 arms, MAP fit on the evaluated data (App. D, Fig. 5)
  kRandom,      ///< uniform random points
};
/// Parses "uhe", "map", "ra", "random-exp3", "random"; std::invalid_argument otherwise.
UheVariant ParseUheVariant(const std::string& name);
std::string UheVariantName(UheVariant v);

/// The paper's session options (App. D): GP-UCB with constant beta = 1.96 (mu + sqrt(beta)
/// sigma), Matern-5/2 ARD kernel, fitted noise, Gamma(1e-3, 10) priors on lengthscales,
/// signal variance and noise, our own refits (fit_hyperparameters = false: the algorithm
/// fits), `initial_points` Sobol points, budget = initial points + T.
bo::BoLoopOptions UheLoopOptions(int initial_points, int horizon);

/// The paper's Gamma(1e-3, 10) priors (App. D) on lengthscales, signal variance and noise,
/// copied into fit (the rest of fit is left alone).
void ApplyUhePriors(bo::FitOptions* fit);

/// Runs `variant` on `session` (built with UheLoopOptions or alike: UCB, the algorithm fits
/// the hyperparameters before every GP-UCB proposal with session.options().fit) until the
/// session is done. The initial design comes first; then iterations t = 1.. as in Alg. 1.
/// `rng` drives the arms, random points (uniform in the box, or uniform over the session's
/// candidates on a finite domain) and pseudo data (the session's engine its design and
/// acquisition). EXP3 rewards are max(y_t, y_{t-1}) in score units, scaled to [0, 1] by
/// the initial data's range (clamped). Each step's extra: {"t", "arm" ("random" |
/// "acquisition" | null), "p_random", "fit" ("pseudo" | "map" | null)}. Throws
/// std::invalid_argument when the session has no initial design or does not use UCB.
void RunUheBo(bo::BoSession& session, const bo::Objective& objective, UheVariant variant,
              bo::Rng& rng, const std::function<bool(const bo::BoStep&)>& callback = {});

}  // namespace advbo::algorithms
