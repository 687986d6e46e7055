// Covariance functions for GP regression: squared exponential and Matérn-1/2, 3/2, 5/2
// (isotropic or ARD) over a subset of input coordinates (Rasmussen & Williams 2006 [RW06]
// Sec. 4.2), sums and products of kernels (RW06 Sec. 4.2.4), and the additive kernel over
// disjoint coordinate groups (Duvenaud et al. 2011; Kandasamy et al. 2015, used by BOS^2
// eq. 5.4 of the Kharkovskii 2020 thesis). The learning-curve kernel of BO-BOS lives in
// bo/optimal_stopping.h; random Fourier features (spectral sampling) in bo/random_features.h.
//
// All hyperparameters are handled in log space: a kernel exposes a flat vector of
// log-parameters together with their kinds (lengthscale or signal variance), so the GP's
// maximum-likelihood fit can box-bound them. Inputs are row-major design matrices
// X [N, D] (one point per row), in whatever units the caller chose (advbo uses [-1, 1]).
#pragma once

#include <Eigen/Dense>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "bo/random.h"

namespace advbo::bo {

/// The radial profile of a stationary kernel.
enum class KernelFamily {
  kSquaredExponential,  ///< k = s2 * exp(-r^2 / 2)                     (RW06 eq. 4.9)
  kMatern52,            ///< k = s2 * (1 + sqrt5 r + 5r^2/3) exp(-sqrt5 r) (RW06 eq. 4.17)
  kMatern32,            ///< k = s2 * (1 + sqrt3 r) exp(-sqrt3 r)          (RW06 eq. 4.17)
  kMatern12,            ///< k = s2 * exp(-r) (exponential / Ornstein-Uhlenbeck, RW06 eq. 4.18)
};

/// Parses "se", "matern12", "matern32", "matern52" (case-sensitive). Throws
/// std::invalid_argument listing the accepted names otherwise.
KernelFamily ParseKernelFamily(const std::string& name);
/// The name ParseKernelFamily accepts for a family.
std::string KernelFamilyName(KernelFamily family);
/// Smoothness nu of a Matérn family (0.5, 1.5, 2.5); +inf for the squared exponential.
double MaternNu(KernelFamily family);

/// What a log-parameter means, for bounds and initialisation.
enum class ParamKind { kLengthscale, kSignalVariance, kShape };

/// Training-set size from which the log marginal likelihood (and its gradient, the fit's
/// cost) uses LAPACK's Cholesky factorisation and inverse (dpotrf / dpotri; multithreaded
/// with OpenBLAS) instead of Eigen's, and works on the lower triangle only: it reads only
/// K's lower triangle and hands Kernel::GramThenWeightedGradients its weights in lower form
/// (see there). Smaller GPs -- every BOS^2 GP and the usual BO loops -- keep Eigen's
/// arithmetic on full matrices, so their results do not change with the BLAS.
inline constexpr Eigen::Index kLapackMinPoints = 1000;

/// Pairwise statistics of a training set that do not depend on hyperparameters (squared
/// distances per lengthscale group), computed once and reused across likelihood evaluations.
using PairwiseCache = std::vector<Eigen::MatrixXd>;

/// Interface of every covariance function of the BO core.
class Kernel {
 public:
  virtual ~Kernel() = default;
  /// Number of log-hyperparameters.
  virtual int NumParams() const = 0;
  /// Current log-hyperparameters, length NumParams().
  virtual Eigen::VectorXd LogParams() const = 0;
  /// Sets the log-hyperparameters. Throws std::invalid_argument on a wrong length or NaN.
  virtual void SetLogParams(const Eigen::VectorXd& log_params) = 0;
  /// Kind of each log-parameter, length NumParams().
  virtual std::vector<ParamKind> ParamKinds() const = 0;
  /// Cross covariance K(X1, X2): [N1, N2] for X1 [N1, D], X2 [N2, D].
  virtual Eigen::MatrixXd Eval(const Eigen::MatrixXd& x1, const Eigen::MatrixXd& x2) const = 0;
  /// Prior variances k(x, x) for each row of X: [N].
  virtual Eigen::VectorXd Diag(const Eigen::MatrixXd& x) const = 0;
  /// Hyperparameter-independent pairwise statistics of X [N, D] for GramFromCache.
  virtual PairwiseCache Precompute(const Eigen::MatrixXd& x) const = 0;
  /// Number of matrices Precompute returns (lets composite kernels split a cache).
  virtual int CacheSize() const = 0;
  /// Gram matrix K(X, X) [N, N] from a cache of Precompute(X); when grads is non-null it
  /// receives dK/d(log-param p) for every p (NumParams() matrices [N, N]).
  virtual Eigen::MatrixXd GramFromCache(const PairwiseCache& cache,
                                        std::vector<Eigen::MatrixXd>* grads) const = 0;
  /// Weighted hyperparameter gradients g_p = sum_ab W_ab dK_ab/d(log-param p) for a weight
  /// matrix W [N, N] (the LML gradient, RW06 eq. 5.9, is 0.5 g with W = a a^T - K^{-1}),
  /// without materialising the NumParams() matrices dK/dp. Returns [NumParams()]. The
  /// default goes through GramFromCache; stationary and additive kernels fuse it.
  virtual Eigen::VectorXd WeightedGradients(const PairwiseCache& cache,
                                            const Eigen::MatrixXd& w) const;
  /// Receives the Gram matrix K [N, N] (to keep or overwrite) and returns the weight matrix
  /// W [N, N] of the gradient, or an empty matrix for no gradient.
  using GramWeights = std::function<Eigen::MatrixXd(Eigen::MatrixXd&& gram)>;
  /// GramFromCache(cache) = K, passed to weights, then WeightedGradients(cache, W) into
  /// *grad [NumParams()] for the W it returns (grad untouched if W is empty or grad null).
  /// One pass of the element-wise work: the stationary and additive kernels keep K's
  /// profile values for the gradient instead of recomputing them (half the exponentials of
  /// a likelihood-and-gradient evaluation; the same values and sums as the two calls, so
  /// results are bit-identical). The default makes the two calls.
  ///
  /// Large N (N >= kLapackMinPoints): weights reads only K's lower triangle (K's upper
  /// triangle may be left 0) and returns W in lower form, tril(W) + tril(W, -1): the
  /// strictly lower part doubled, zeros above, so that sum(W_lower .* G) = sum(W .* G) for
  /// every symmetric G. Any implementation that sums over the whole matrix stays correct;
  /// the stationary kernel computes K, its profile and the sums on the lower triangle only,
  /// in column blocks run in parallel (TBB) whose partial sums are added in block order, so
  /// results do not depend on the thread count.
  virtual void GramThenWeightedGradients(const PairwiseCache& cache, const GramWeights& weights,
                                         Eigen::VectorXd* grad) const;
  /// Gradient of k(x, X_i) with respect to the query point x for every row i:
  /// returns [N, D]; x is [D], X is [N, D]. (At r = 0 the Matérn-1/2 kernel is not
  /// differentiable; the returned value there is 0.)
  virtual Eigen::MatrixXd GradX(const Eigen::VectorXd& x, const Eigen::MatrixXd& xs) const = 0;
  /// Deep copy.
  virtual std::unique_ptr<Kernel> Clone() const = 0;
  /// Human-readable description with current hyperparameters.
  virtual std::string Describe() const = 0;
};

/// Stationary SE / Matérn kernel k(x, x') = s2 * rho(r), with
/// r^2 = sum_{k in active} (x_k - x'_k)^2 / l_k^2; isotropic (one l) or ARD (one l per
/// active coordinate). Log-parameters: [log l (1 or |active|), log s2].
class StationaryKernel final : public Kernel {
 public:
  /// @param family       radial profile.
  /// @param input_dim    D, the number of columns of the design matrices.
  /// @param ard          one lengthscale per active coordinate if true.
  /// @param active_dims  the coordinates the kernel looks at (empty = all D). Throws
  ///                     std::invalid_argument if an index is outside [0, D).
  /// @param lengthscale  initial lengthscale (> 0), same units as X.
  /// @param variance     initial signal variance s2 (> 0).
  StationaryKernel(KernelFamily family, int input_dim, bool ard, std::vector<int> active_dims = {},
                   double lengthscale = 1.0, double variance = 1.0);

  int NumParams() const override { return static_cast<int>(log_ls_.size()) + 1; }
  Eigen::VectorXd LogParams() const override;
  void SetLogParams(const Eigen::VectorXd& log_params) override;
  std::vector<ParamKind> ParamKinds() const override;
  Eigen::MatrixXd Eval(const Eigen::MatrixXd& x1, const Eigen::MatrixXd& x2) const override;
  Eigen::VectorXd Diag(const Eigen::MatrixXd& x) const override;
  PairwiseCache Precompute(const Eigen::MatrixXd& x) const override;
  int CacheSize() const override { return ard_ ? static_cast<int>(active_.size()) : 1; }
  Eigen::MatrixXd GramFromCache(const PairwiseCache& cache,
                                std::vector<Eigen::MatrixXd>* grads) const override;
  Eigen::VectorXd WeightedGradients(const PairwiseCache& cache,
                                    const Eigen::MatrixXd& w) const override;
  void GramThenWeightedGradients(const PairwiseCache& cache, const GramWeights& weights,
                                 Eigen::VectorXd* grad) const override;
  Eigen::MatrixXd GradX(const Eigen::VectorXd& x, const Eigen::MatrixXd& xs) const override;
  std::unique_ptr<Kernel> Clone() const override;
  std::string Describe() const override;

  /// Scaled squared distances r2 [N, N] of one hyperparameter-free squared-distance matrix
  /// (isotropic kernels only), and the profile k [N, N] with dk/d(r2) (if dk is non-null)
  /// there: the shared first half of GramFromSqDist and WeightedGradientsFromSqDist.
  void ProfileFromSqDist(const Eigen::MatrixXd& sq_dist, Eigen::ArrayXXd* r2, Eigen::ArrayXXd* k,
                         Eigen::ArrayXXd* dk) const;
  /// WeightedGradientsFromSqDist from ProfileFromSqDist's arrays (isotropic kernels only):
  /// [d/d log l, d/d log s2] for the weight matrix w [N, N].
  Eigen::Vector2d WeightedGradientsFromProfile(const Eigen::ArrayXXd& r2, const Eigen::ArrayXXd& k,
                                               const Eigen::ArrayXXd& dk,
                                               const Eigen::MatrixXd& w) const;
  /// WeightedGradients for one hyperparameter-free squared-distance matrix (isotropic
  /// kernels only): [d/d log l, d/d log s2].
  Eigen::Vector2d WeightedGradientsFromSqDist(const Eigen::MatrixXd& sq_dist,
                                              const Eigen::MatrixXd& w) const;

  /// Gram matrix from one hyperparameter-free squared-distance matrix (isotropic kernels
  /// only; what AdditiveKernel calls per group without copying its cache).
  Eigen::MatrixXd GramFromSqDist(const Eigen::MatrixXd& sq_dist,
                                 std::vector<Eigen::MatrixXd>* grads) const;

  /// The radial profile: k = s2 * rho(r2) and dk/d(r2) elementwise on scaled squared
  /// distances r2 (dk_dr2 may be null). Exposed for fast specialised evaluators.
  void Profile(const Eigen::ArrayXXd& r2, Eigen::ArrayXXd* k, Eigen::ArrayXXd* dk_dr2) const;

  /// The active coordinates' columns of X [N, D]: [N, |active|] (std::invalid_argument if X
  /// does not have D columns).
  Eigen::MatrixXd ActiveColumns(const Eigen::MatrixXd& x) const;
  /// Eval on inputs already reduced to the active columns (ActiveColumns): a1 [N1, |active|],
  /// a2 [N2, |active|] -> [N1, N2], bit-identical to Eval on the full inputs; lets callers
  /// that evaluate against the same points many times extract their columns once.
  Eigen::MatrixXd EvalOnActive(const Eigen::MatrixXd& a1, const Eigen::MatrixXd& a2) const;

  /// Active coordinates, in order.
  const std::vector<int>& active_dims() const { return active_; }
  /// The radial profile (SE, Matern-1/2, 3/2, 5/2).
  KernelFamily family() const { return family_; }
  /// Whether each input has its own lengthscale.
  bool ard() const { return ard_; }
  /// Input dimension d.
  int input_dim() const { return input_dim_; }
  /// Signal variance sigma_f^2.
  double variance() const { return std::exp(log_var_); }
  /// Lengthscales [1] (isotropic) or [|active|] (ARD).
  Eigen::VectorXd lengthscales() const { return log_ls_.array().exp(); }

 private:
  // Scaled squared distances r^2 between rows of x1 and x2 [N1, N2].
  Eigen::MatrixXd ScaledSqDist(const Eigen::MatrixXd& x1, const Eigen::MatrixXd& x2) const;
  // The same on inputs reduced to the active columns (a [N1, |active|], b [N2, |active|]).
  Eigen::MatrixXd ScaledSqDistOnActive(const Eigen::MatrixXd& a, const Eigen::MatrixXd& b) const;
  // Scaled squared distances r^2 from a cache of Precompute (one matrix per lengthscale),
  // shared by GramFromCache, WeightedGradients and GramThenWeightedGradients: of columns
  // [c0, c0 + w) from row c0 down, [N - c0, w]; the defaults give the whole [N, N].
  Eigen::ArrayXXd ScaledSqDistFromCache(const PairwiseCache& cache, Eigen::Index c0 = 0,
                                        Eigen::Index w = -1) const;
  // GramThenWeightedGradients for N >= kLapackMinPoints: lower triangle, column blocks.
  void LowerGramThenWeightedGradients(const PairwiseCache& cache, const GramWeights& weights,
                                      Eigen::VectorXd* grad) const;
  // WeightedGradients of an ARD kernel from the profile k, dk [N, N] at those distances.
  Eigen::VectorXd ArdWeightedGradients(const PairwiseCache& cache, const Eigen::ArrayXXd& k,
                                       const Eigen::ArrayXXd& dk, const Eigen::MatrixXd& w) const;

  KernelFamily family_;
  int input_dim_;
  bool ard_;
  std::vector<int> active_;
  Eigen::VectorXd log_ls_;
  double log_var_;
};

/// Additive kernel k(x, x') = sum_j k_j(x^(j), x'^(j)) over disjoint coordinate groups
/// (BOS^2 eq. 5.4; Kandasamy et al. 2015 eq. 2). Each group has its own isotropic
/// lengthscale and signal variance. Log-parameters: [l_1, s2_1, l_2, s2_2, ...] in log.
class AdditiveKernel final : public Kernel {
 public:
  /// @param family  radial profile shared by all groups.
  /// @param input_dim D.
  /// @param groups  disjoint coordinate groups (need not cover all of [0, D)). Throws
  ///                std::invalid_argument on an empty, overlapping or out-of-range group.
  /// @param lengthscale initial lengthscale of every group, > 0.
  /// @param variance    initial signal variance of every group, > 0.
  AdditiveKernel(KernelFamily family, int input_dim, const std::vector<std::vector<int>>& groups,
                 double lengthscale = 1.0, double variance = 1.0);

  int NumParams() const override;
  Eigen::VectorXd LogParams() const override;
  void SetLogParams(const Eigen::VectorXd& log_params) override;
  std::vector<ParamKind> ParamKinds() const override;
  Eigen::MatrixXd Eval(const Eigen::MatrixXd& x1, const Eigen::MatrixXd& x2) const override;
  Eigen::VectorXd Diag(const Eigen::MatrixXd& x) const override;
  PairwiseCache Precompute(const Eigen::MatrixXd& x) const override;
  int CacheSize() const override { return num_groups(); }
  Eigen::MatrixXd GramFromCache(const PairwiseCache& cache,
                                std::vector<Eigen::MatrixXd>* grads) const override;
  Eigen::VectorXd WeightedGradients(const PairwiseCache& cache,
                                    const Eigen::MatrixXd& w) const override;
  void GramThenWeightedGradients(const PairwiseCache& cache, const GramWeights& weights,
                                 Eigen::VectorXd* grad) const override;
  Eigen::MatrixXd GradX(const Eigen::VectorXd& x, const Eigen::MatrixXd& xs) const override;
  std::unique_ptr<Kernel> Clone() const override;
  std::string Describe() const override;

  /// Number of groups M.
  int num_groups() const { return static_cast<int>(parts_.size()); }
  /// The kernel k_j of group j (0 <= j < M).
  const StationaryKernel& group(int j) const { return parts_.at(j); }

 private:
  int input_dim_;
  std::vector<StationaryKernel> parts_;
};

/// Sum or product of kernels over the same inputs (RW06 Sec. 4.2.4): k = k_1 + ... + k_m or
/// k = k_1 * ... * k_m. Log-parameters are the children's, concatenated in order; a
/// product of kernels that each carry a signal variance is over-parameterised (only the
/// product of the variances is identified), which the ML-II fit tolerates.
class CompositeKernel final : public Kernel {
 public:
  /// How the children combine: a sum or a product.
  enum class Op { kSum, kProduct };
  /// @param op        sum or product.
  /// @param children  at least one kernel (owned); throws std::invalid_argument if empty
  ///                  or a child is null.
  CompositeKernel(Op op, std::vector<std::unique_ptr<Kernel>> children);
  /// A deep copy (the children are cloned).
  CompositeKernel(const CompositeKernel& other);

  int NumParams() const override;
  Eigen::VectorXd LogParams() const override;
  void SetLogParams(const Eigen::VectorXd& log_params) override;
  std::vector<ParamKind> ParamKinds() const override;
  Eigen::MatrixXd Eval(const Eigen::MatrixXd& x1, const Eigen::MatrixXd& x2) const override;
  Eigen::VectorXd Diag(const Eigen::MatrixXd& x) const override;
  PairwiseCache Precompute(const Eigen::MatrixXd& x) const override;
  int CacheSize() const override;
  Eigen::MatrixXd GramFromCache(const PairwiseCache& cache,
                                std::vector<Eigen::MatrixXd>* grads) const override;
  Eigen::MatrixXd GradX(const Eigen::VectorXd& x, const Eigen::MatrixXd& xs) const override;
  std::unique_ptr<Kernel> Clone() const override;
  std::string Describe() const override;

  /// How the children combine.
  Op op() const { return op_; }
  /// Number of child kernels.
  int num_children() const { return static_cast<int>(children_.size()); }
  /// Child kernel i.
  const Kernel& child(int i) const { return *children_.at(i); }

 private:
  Op op_;
  std::vector<std::unique_ptr<Kernel>> children_;
};

/// k_1 + k_2 (copies of both).
std::unique_ptr<Kernel> SumOf(const Kernel& a, const Kernel& b);
/// k_1 * k_2 (copies of both).
std::unique_ptr<Kernel> ProductOf(const Kernel& a, const Kernel& b);

/// Splits coordinates {0..D-1} into M disjoint groups of near-equal size uniformly at
/// random (Kandasamy et al. 2015 Sec. 4.4 random decompositions). Requires 1 <= M <= D,
/// else throws std::invalid_argument.
std::vector<std::vector<int>> RandomPartition(int d, int m, Rng& rng);

}  // namespace advbo::bo
