// RM-GP-UCB building blocks (Dai 2021 thesis, Ch. 7 + App. D): the weighted acquisition of
// eq. 7.1, the online function-gap estimates of Lemma 7.1 (in the empirical-mean form the thesis
// uses in its experiments, Sec. 7.6), the Follow-The-Regularized-Leader meta-weights of eq. 7.4
// and the adaptive schedule of nu_t (Sec. 7.5.2).
//
// Issue #15, first step: the pieces and their tests. The BO loop over meta-tasks (`advbo bo
// --algo rm-gp-ucb --meta ...`) and the Fig. 7.1 study come next.
#pragma once

#include <Eigen/Dense>
#include <vector>

#include "bo/acquisition.h"
#include "bo/gp.h"

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

}  // namespace advbo::algorithms
