// Acquisition functions on the exact GP: GP-UCB/LCB (Srinivas et al. 2010) with the
// exploration weight beta_t as an explicit, named policy (docs/design.md: beta conventions differ
// between codes), expected improvement (Jones et al. 1998), probability of improvement
// (Kushner 1964), Thompson sampling (random Fourier features, or exact over a finite set),
// and the expected UCB over another agent's action samples (R2-B2 level 1, Dai 2021 thesis
// eq. 8.3). Every Acquisition is to be MAXIMISED; a minimisation goal flips signs inside.
#pragma once

#include <Eigen/Dense>
#include <memory>
#include <string>
#include <vector>

#include "bo/gp.h"
#include "bo/random.h"
#include "bo/random_features.h"

namespace advbo::bo {

/// How beta_t (the squared multiplier of the posterior standard deviation) is chosen.
enum class BetaPolicy {
  kConstant,       ///< beta_t = value (BOS^2 dimension loop: beta^{1/2} = 2, value = 4)
  kSrinivas2010,   ///< finite domain: 2 log(|D| t^2 pi^2 / (6 delta))  (Srinivas 2010 Thm 1);
                   ///< continuous [0,1]^d (|D| = 0): 2 log(t^2 2pi^2/(3 delta))
                   ///<   + 2 d log(t^2 d sqrt(log(4d/delta)))  (Thm 2 with a = b = r = 1)
  kKandasamy2015,  ///< 0.2 d log(2t), d = group dimension (Add-GP-UCB practical schedule)
  kR2b2Ref,        ///< 0.5 d log(2t), d = the agent's OWN action dimension (the R2-B2
                   ///< reference code's UCB, `d = x.shape[1]` of the own action x)
  kR2b2Joint,      ///< 0.5 D log(2t), D = the joint input dimension (advbo's reading of the
                   ///< reference code in earlier versions; kept for paired comparisons)
};

/// Exploration-weight schedule. t starts at 1 (t < 1 is treated as 1).
struct ExplorationWeight {
  /// How beta_t grows with t.
  BetaPolicy policy = BetaPolicy::kConstant;
  double value = 4.0;  ///< beta for kConstant
  double delta = 0.1;  ///< confidence parameter for kSrinivas2010, in (0, 1)
  /// beta_t for iteration t >= 1, input dimension d, finite domain size (0 = continuous).
  double Beta(int t, int d, double domain_size = 0.0) const;
};

/// Parses "constant[:VALUE]" (VALUE >= 0, default 4), "srinivas2010[:DELTA]" (Srinivas et
/// al. 2010, Thm 1/2 with confidence DELTA in (0, 1), default 0.1), "kandasamy2015",
/// "r2b2_ref", "r2b2_joint". Throws std::invalid_argument naming the accepted values otherwise.
ExplorationWeight ParseExplorationWeight(const std::string& spec);

/// UCB scores mean + sqrt(beta) * sqrt(var), elementwise; mean and var are [M].
Eigen::VectorXd Ucb(const Eigen::VectorXd& mean, const Eigen::VectorXd& var, double beta);

/// Whether the objective is maximised or minimised.
enum class Goal { kMaximize, kMinimize };

/// An acquisition function a(x) over inputs x [d], to be maximised.
class Acquisition {
 public:
  virtual ~Acquisition() = default;
  /// Input dimension d.
  virtual int dim() const = 0;
  /// Values at every row of X [M, d]: [M] (batched: one kernel evaluation for all rows).
  virtual Eigen::VectorXd Evaluate(const Eigen::MatrixXd& x) const = 0;
  /// Value at x [d]; if grad is non-null it receives da/dx [d].
  virtual double ValueAndGradient(const Eigen::VectorXd& x, Eigen::VectorXd* grad) const = 0;
};

/// GP-UCB (Srinivas 2010; Dai 2021 eq. 8.2): a(x) = mu(x) + beta^{1/2} sigma(x) for
/// kMaximize; for kMinimize it is the LCB of f turned into a score,
/// a(x) = -(mu(x) - beta^{1/2} sigma(x)). Holds a reference to gp (must outlive it).
class UcbAcquisition final : public Acquisition {
 public:
  /// beta >= 0 (the squared sigma multiplier), else std::invalid_argument.
  UcbAcquisition(const ExactGP& gp, double beta, Goal goal = Goal::kMaximize);
  int dim() const override { return static_cast<int>(gp_.X().cols()); }
  Eigen::VectorXd Evaluate(const Eigen::MatrixXd& x) const override;
  double ValueAndGradient(const Eigen::VectorXd& x, Eigen::VectorXd* grad) const override;

 private:
  const ExactGP& gp_;
  double sqrt_beta_, sign_;
};

/// Improvement-based acquisitions a(x) = h(I(x), sigma(x)) with the improvement
/// I = mu(x) - best - xi (kMaximize) or best - mu(x) - xi (kMinimize) over the incumbent
/// `best` (original units) and margin xi >= 0: the common part of EI and PI. Gradients are
/// analytic (dh/dI, dh/dsigma and the GP's predictive gradients). Throws
/// std::invalid_argument on a non-finite best or a negative xi.
class ImprovementAcquisition : public Acquisition {
 public:
  int dim() const override { return static_cast<int>(gp_.X().cols()); }
  Eigen::VectorXd Evaluate(const Eigen::MatrixXd& x) const override;
  double ValueAndGradient(const Eigen::VectorXd& x, Eigen::VectorXd* grad) const override;

  /// h and its partial derivatives at (I, sigma).
  struct Terms {
    /// h(improvement, sigma) and its partial derivatives.
    ///@{
    double value, d_improvement, d_sigma;
    ///@}
  };
  /// h of an improvement-based acquisition: its value and partial derivatives at (improvement,
  /// sigma).
  using TermsFunction = Terms (*)(double improvement, double sigma);

 protected:
  /// An acquisition h(mu - best - xi, sigma) of `gp` (signs by `goal`).
  ImprovementAcquisition(const ExactGP& gp, double best, double xi, Goal goal, TermsFunction h);

 private:
  const ExactGP& gp_;
  double best_, xi_, sign_;
  TermsFunction h_;
};

/// Expected improvement (Jones et al. 1998): EI = I Phi(I / sigma) + sigma phi(I / sigma);
/// max(I, 0) where sigma = 0.
class ExpectedImprovement final : public ImprovementAcquisition {
 public:
  /// Expected improvement over `best` by at least `xi` (Jones et al. 1998).
  ExpectedImprovement(const ExactGP& gp, double best, double xi = 0.0, Goal goal = Goal::kMaximize);
};

/// Probability of improvement (Kushner 1964): PI = Phi(I / sigma); 1[I > 0] where sigma = 0.
class ProbabilityOfImprovement final : public ImprovementAcquisition {
 public:
  /// Probability of improving on `best` by at least `xi` (Kushner 1964).
  ProbabilityOfImprovement(const ExactGP& gp, double best, double xi = 0.0,
                           Goal goal = Goal::kMaximize);
};

/// Thompson sampling with random Fourier features: one function drawn from the RFF
/// approximation of gp's posterior (RffPosterior on the GP's standardised targets), a(x) =
/// sign * f~(x) (standardised units; same argmax as original units). Requires gp's kernel
/// to be a StationaryKernel (else std::invalid_argument). Noise-free GPs use noise 1e-6.
class ThompsonSample final : public Acquisition {
 public:
  /// A Thompson sample of `gp` through `num_features` random Fourier features drawn from `rng`.
  ThompsonSample(const ExactGP& gp, int num_features, Rng& rng, Goal goal = Goal::kMaximize);
  int dim() const override { return f_->input_dim(); }
  Eigen::VectorXd Evaluate(const Eigen::MatrixXd& x) const override;
  double ValueAndGradient(const Eigen::VectorXd& x, Eigen::VectorXd* grad) const override;

 private:
  std::unique_ptr<FeatureFunction> f_;
  double sign_;
};

/// Exact Thompson sampling over a finite set X [M, D]: draws f ~ GP posterior jointly at the
/// M points and returns the index of its maximum (kMaximize) or minimum (kMinimize).
int ThompsonSampleIndex(const ExactGP& gp, const Eigen::MatrixXd& candidates, Rng& rng,
                        Goal goal = Goal::kMaximize);

/// R2-B2 level-1 acquisition (Dai 2021 thesis eq. 8.3): the expected GP-UCB (eq. 8.2) of the
/// joint GP over the other agent's action, approximated by S weighted samples:
/// a(x_own) = sum_s w_s [mu(x_own, x_other_s) + beta^{1/2} sigma(x_own, x_other_s)].
/// The joint input places x_own at own_dims and x_other at other_dims (disjoint, covering
/// the GP's D inputs).
class ExpectedUcb final : public Acquisition {
 public:
  /// other_samples [S, |other_dims|]; weights [S] (>= 0, normalised here; empty = uniform).
  /// Throws std::invalid_argument on inconsistent dimensions or negative weights.
  ExpectedUcb(const ExactGP& gp, std::vector<int> own_dims, std::vector<int> other_dims,
              Eigen::MatrixXd other_samples, double beta, Eigen::VectorXd weights = {});
  int dim() const override { return static_cast<int>(own_.size()); }
  Eigen::VectorXd Evaluate(const Eigen::MatrixXd& x) const override;
  double ValueAndGradient(const Eigen::VectorXd& x, Eigen::VectorXd* grad) const override;

 private:
  Eigen::MatrixXd Joint(const Eigen::VectorXd& x_own) const;  // [S, D]
  const ExactGP& gp_;
  std::vector<int> own_, other_;
  Eigen::MatrixXd samples_;
  Eigen::VectorXd weights_;
  double sqrt_beta_;
};

/// Standard normal pdf and cdf (cdf via erfc, accurate in both tails).
double NormalPdf(double z);
double NormalCdf(double z);

}  // namespace advbo::bo
