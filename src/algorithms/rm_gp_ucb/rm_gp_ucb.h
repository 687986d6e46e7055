// RM-GP-UCB building blocks (Dai 2021 thesis, Ch. 7 + App. D): the weighted acquisition of
// eq. 7.1, the online function-gap estimates of Lemma 7.1 (in the empirical-mean form the thesis
// uses in its experiments, Sec. 7.6), the Follow-The-Regularized-Leader meta-weights of eq. 7.4
// and the adaptive schedule of nu_t (Sec. 7.5.2).
//
// the pieces, their tests and the loop on a BoSession (Alg. 7.1); the CLI (`advbo bo
// --algo rm-gp-ucb --meta ...`) and the Fig. 7.1 study come next.
#pragma once

#include <Eigen/Dense>
#include <cstdint>
#include <string>
#include <vector>

#include "bo/acquisition.h"
#include "bo/gp.h"
#include "bo/session.h"

namespace advbo::algorithms {

/// Meta-weights of eq. 7.4: omega_i = exp(-eta * L_i) / sum_j exp(-eta * L_j) for the
/// cumulative losses L [M] (FTRL with the entropic regulariser, eq. 7.3, solved in closed form,
/// App. D.1.6). In the thesis' experiments L_i = N^{3/2} sum_{s<t} dbar_{i,s} and
/// eta = 1 / N^{3/2}. Computed with the largest exponent subtracted (no overflow). L empty or
/// eta < 0 / non-finite: std::invalid_argument. At t = 1 (L = 0) the weights are uniform.
Eigen::VectorXd MetaWeights(const Eigen::VectorXd& cumulative_loss, double eta);

/// Gap estimate dbar_{i,t} of Lemma 7.1 for one meta-task from its outputs y [N_i] and the
/// target GP's confidence bounds U, L [N_i] at its inputs (eq. 7.2): the maximum (mean_form =
/// false) or, as in the thesis' experiments (Sec. 7.6, footnote 4), the mean over j of
/// max(|y_j - U_j|, |y_j - L_j|). The noise-correction constant sqrt(2 sigma^2 log(2 sum N_i /
/// delta')) is left out: it is the same for every meta-task and cancels in eq. 7.4 (Sec. 7.5.2).
/// Sizes must agree and be >= 1, else std::invalid_argument.
double GapEstimate(const Eigen::VectorXd& y, const Eigen::VectorXd& upper,
                   const Eigen::VectorXd& lower, bool mean_form = true);

/// nu_t = nu_{t-1} * min(r, (sum_i omega_i dbar_{i,t})^-epsilon) for t > 1 (Sec. 7.5.2; nu_1 =
/// 1). weighted_gap <= 0 gives nu_{t-1} * r. Requires nu_prev in [0, 1], r in (0, 1) and
/// epsilon > 0, else std::invalid_argument.
double NextNu(double nu_prev, double weighted_gap, double r, double epsilon);

/// The acquisition of eq. 7.1, maximised:
///   zeta(x) = nu * sum_i omega_i [mu_i(x) + sqrt(tau) sigma_i(x)]
///             + (1 - nu) [mu(x) + sqrt(beta) sigma(x)],
/// with mu, sigma from the target GP and mu_i, sigma_i from meta-task i's GP (each fitted on
/// that task's data alone). All GPs must share the input dimension and the output units.
/// Gradients combine the GPs' analytic UCB gradients. Throws std::invalid_argument on
/// mismatched sizes, weights that are not a probability vector, nu outside [0, 1] or negative
/// beta / tau.
class MetaUcbAcquisition final : public bo::Acquisition {
 public:
  /// The RM-GP-UCB acquisition (Dai 2021 thesis, eq. 7.3) of `target` borrowing from the meta-task
  /// GPs `metas`.
  MetaUcbAcquisition(const bo::ExactGP& target, const std::vector<const bo::ExactGP*>& metas,
                     const Eigen::VectorXd& weights, double nu, double beta, double tau);
  int dim() const override { return target_.dim(); }
  Eigen::VectorXd Evaluate(const Eigen::MatrixXd& x) const override;
  double ValueAndGradient(const Eigen::VectorXd& x, Eigen::VectorXd* grad) const override;

 private:
  bo::UcbAcquisition target_;
  std::vector<bo::UcbAcquisition> metas_;
  Eigen::VectorXd weights_;
  double nu_;
};

/// Salt of the engine that fits the meta-task GPs, derived from a run's seed (CLI, benches).
inline constexpr uint64_t kRmGpUcbSeedSalt = 0x726d6770ULL;

/// A previous task's observations in the caller's units: x [N_i, d] inside the session's box,
/// y [N_i] on the same scale as the target's outputs.
struct MetaTask {
  /// Inputs [N, d] of the task's successful evaluations.
  Eigen::MatrixXd x;
  /// Their outputs [N].
  Eigen::VectorXd y;
};

/// Settings of Alg. 7.1 (defaults: Sec. 7.6 and Theorem 7.1).
struct RmGpUcbOptions {
  double delta = 0.1;         ///< delta of Theorem 7.1, in (0, 1)
  double domain_size = 1000;  ///< |X| in beta_t and tau for a box (a finite domain uses its size)
  double eta = -1;            ///< FTRL learning rate; < 0 means 1 / N^{3/2} (Sec. 7.6)
  double r = 0.7;             ///< minimum decay rate of nu, in (0, 1)
  double epsilon = 0.7;       ///< aggressiveness of nu's adaptive decay, > 0
  bool mean_gaps = true;      ///< gap estimates with the mean over j (Sec. 7.6) or the max
  bool learn_weights = true;  ///< false: fixed uniform meta-weights (Fig. 7.1a's ablation)
  bool use_meta = true;       ///< false: nu = 0 throughout, i.e. GP-UCB with the same beta_t
  /// delta and r in (0, 1), domain_size >= 1, epsilon > 0; throws std::invalid_argument.
  void Validate() const;
};

/// beta_t = 2 log(|X| t^2 pi^2 / (2 delta)) of Theorem 7.1 (t >= 1).
double RmBeta(int t, double domain_size, double delta);
/// tau = 2 log(3 |X| M / delta) of Theorem 7.1.
double RmTau(double domain_size, int num_meta, double delta);

/// Runs RM-GP-UCB (Alg. 7.1) on `session` until it is done: the session's initial design
/// first, then iterations t = 1, 2, ...: gap estimates dbar_{i,t} from the target GP's bounds
/// (eq. 7.2, beta_t) at each meta-task's inputs (t > 1), meta-weights (eq. 7.4 with losses
/// N^{3/2} sum dbar), nu_t (nu_1 = 1), and the maximiser of eq. 7.1 (over the session's
/// candidates if it has any, else the box). Each meta-task gets its own GP (the session's
/// kernel family and noise, hyperparameters fitted once on its data, inputs in the session's
/// unit cube, outputs sign-adjusted like the session's). Every step's `extra` holds t, nu,
/// the weights and the gaps. Throws std::invalid_argument on no meta-tasks, a task with no
/// rows, a size mismatch, a point outside the box or bad options.
void RunRmGpUcb(bo::BoSession& session, const bo::Objective& objective,
                const std::vector<MetaTask>& metas, const RmGpUcbOptions& options, bo::Rng& rng,
                const bo::StepCallback& callback = {});

}  // namespace advbo::algorithms
