// Add-GP-UCB (Kandasamy, Schneider & Poczos 2015): with an additive kernel
// k = sum_j k_j over disjoint groups, the GP-UCB acquisition splits into independent
// per-group terms  alpha(x) = sum_j mu_j(x^(j)) + beta^{1/2} sigma_j(x^(j))  (BOS^2 eq. 5.4,
// Kharkovskii 2020 thesis), each maximised on its own low-dimensional box.
#pragma once

#include <Eigen/Dense>
#include <vector>

#include "bo/acquisition.h"
#include "bo/gp.h"
#include "bo/random.h"

namespace advbo::bo {

/// Posterior of the additive component f_j (Kandasamy 2015 eq. 3) at Xs [M, D]:
/// mean [M] and variance [M] in the GP's standardised output units.
/// Throws std::invalid_argument if gp's kernel is not an AdditiveKernel or j is out of range.
void ComponentPosterior(const ExactGP& gp, int j, const Eigen::MatrixXd& xs, Eigen::VectorXd* mean,
                        Eigen::VectorXd* var);

/// The UCB term of one additive component, mu_j(z) + beta^{1/2} sigma_j(z) (eq. 5.4), as a
/// function of the group's own coordinates z [d_j] (standardised output units), with its
/// analytic gradient. Holds references to gp, which must outlive it and stay unchanged.
/// Throws std::invalid_argument if gp is not additive, has no data, or j is out of range.
/// The precision matrix K^{-1} = (K + (noise + jitter) I)^{-1} [N, N] of an ExactGP, kept up
/// to date incrementally (advbo's speed structure): while the GP only grows by row-append
/// updates (same hyperparameters, no refactorisation) Sync applies the block-inverse
/// (Schur complement) update, O(N^2) per observation; otherwise it recomputes
/// L^{-T} L^{-1} in O(N^3). Lets ComponentUcb evaluate K^{-1} k with one matrix-vector
/// product instead of two triangular solves.
class GpPrecision {
 public:
  /// Brings K^{-1} in line with gp (N >= 1, else std::invalid_argument).
  void Sync(const ExactGP& gp);
  /// K^{-1} [N, N] as of the last Sync.
  const Eigen::MatrixXd& matrix() const { return k_inv_; }
  /// Whether the last Sync saw exactly this GP state.
  bool Matches(const ExactGP& gp) const;
  /// Full recomputations so far (for tests and profiling).
  long num_recomputes() const { return recomputes_; }

 private:
  Eigen::MatrixXd k_inv_;
  Eigen::Index n_ = 0;
  long factorizations_ = -1;
  Eigen::VectorXd theta_;
  Eigen::RowVectorXd x_last_;
  long recomputes_ = 0;
};

/// GP-UCB of one additive component: the component posterior's mean plus beta^{1/2} times its
/// standard deviation, with input gradients (Kandasamy et al. 2015).
class ComponentUcb {
 public:
  /// `precision`, if given, must be Synced to gp; values then come from K^{-1} k (one
  /// matrix-vector product) instead of two triangular solves with L (equal up to round-off).
  ComponentUcb(const ExactGP& gp, int j, double sqrt_beta, const GpPrecision* precision = nullptr);
  /// Value at z [d_j]; if grad is non-null it receives d/dz [d_j]. Reuses scratch buffers
  /// of the object (no allocation per call), so one object must not be evaluated from two
  /// threads at once.
  double Value(const Eigen::VectorXd& z, Eigen::VectorXd* grad) const;

 private:
  const ExactGP& gp_;
  const StationaryKernel* kj_;
  const GpPrecision* precision_;
  double sqrt_beta_, inv_l2_;
  Eigen::MatrixXd xj_;
  // Scratch of Value, sized [N, d_j] / [N, 1] / [N] once: the L-BFGS-B polish calls Value
  // ~10^5 times per attack and the allocations were ~4 % of its time.
  mutable Eigen::MatrixXd diff_;
  mutable Eigen::ArrayXXd r2_, kx_, dk_;
  mutable Eigen::VectorXd v_, w_;
};

/// Options of MaximizeAddGpUcb; defaults are the ones BOS^2 uses.
struct AddGpUcbOptions {
  /// beta_t policy; d in the schedule is the group dimension d_j.
  ExplorationWeight beta{BetaPolicy::kKandasamy2015, 4.0, 0.1};
  int random_candidates = 100;  ///< uniform candidates per group
  /// Of the random candidates, this fraction are box vertices (each coordinate at lb or
  /// ub with probability 1/2): L_inf attacks have their best perturbations on the
  /// boundary of the eps-ball. 0 = all uniform.
  double vertex_fraction = 0.0;
  int local_candidates = 30;   ///< Gaussian candidates around the incumbent per group
  double local_scale = 0.15;   ///< their std. dev., as a fraction of the box width
  int polish_starts = 1;       ///< best candidates refined by L-BFGS-B per group
  int polish_iterations = 15;  ///< L-BFGS-B iterations per refinement
  /// Candidate counts, polish_starts and polish_iterations >= 0, vertex_fraction in [0, 1],
  /// local_scale > 0. Throws std::invalid_argument "Add-GP-UCB: ...".
  void Validate() const;
};

/// Maximises the Add-GP-UCB acquisition group by group over the box [lb, ub] (each [D]):
/// for each group, scores random and local candidates, then polishes the best with
/// bounded L-BFGS-B using the analytic gradient of mu_j + beta^{1/2} sigma_j.
/// `incumbent` [D] supplies the coordinates that no group covers and the centre of the
/// local candidates. `t` (>= 1) is the BO iteration for the beta schedule.
/// Returns the maximiser x [D] inside the box. Requires gp.num_data() >= 1.
Eigen::VectorXd MaximizeAddGpUcb(const ExactGP& gp, const Eigen::VectorXd& lb,
                                 const Eigen::VectorXd& ub, int t, const AddGpUcbOptions& options,
                                 const Eigen::VectorXd& incumbent, Rng& rng);

/// Finite candidate sets for Add-GP-UCB whose component posteriors are kept up to date
/// incrementally (advbo's speed structure; the acquisition is Kandasamy 2015's per-group
/// UCB, BOS^2 eq. 5.4). Group j holds candidates Z_j in its own coordinates [M_j, d_j] (the
/// component kernel reads no other column) and V_j = L^{-1} K_j(X, Z_j) [N, M_j], where L is the
/// GP's Cholesky factor; the component mean is V_j^T w with w = L^{-1} y~, the variance k_j(z, z)
/// minus the column sums of squares of V_j. Since y~ = (y - y_shift) / y_scale is affine in y, the
/// pool keeps a_j = V_j^T L^{-1} (y - c) and b_j = V_j^T L^{-1} 1 (c fixed at the last
/// recomputation), which only gain the new rows' terms as the GP grows, so the mean costs O(M_j)
/// per Sync however the standardisation moves. While the GP only grows by row-append updates
/// (ExactGP::AddObservation without a refactorisation, unchanged hyperparameters), Sync
/// extends V_j by the new rows in one pass over it, O(N M_j) per observation (plus one
/// more pass after ExactGP::ReplaceTargets changed old targets); any other
/// change (SetData, refit, refactorisation, new kernel) triggers a full O(N^2 M_j)
/// recomputation. The groups' caches are computed and extended in parallel (TBB), each with
/// its serial result. The posteriors equal ComponentPosterior's up to round-off (tested).
class AdditiveCandidatePool {
 public:
  /// An empty pool for gp's current additive decomposition; throws std::invalid_argument if
  /// gp's kernel is not an AdditiveKernel. The pool keeps no reference to gp.
  explicit AdditiveCandidatePool(const ExactGP& gp);
  /// Replaces group j's candidates by the rows of z [M, D] (only the group's columns are
  /// kept) and computes their caches against gp (which must be the GP of the last Sync, if
  /// any). Throws std::invalid_argument on a bad group index or column count.
  void SetCandidates(const ExactGP& gp, int j, const Eigen::MatrixXd& z);
  /// SetCandidates with the group's own coordinates zj [M, d_j], in the order of the group
  /// kernel's active_dims() (no [M, D] matrix that is zero outside the group). Throws
  /// std::invalid_argument on a bad group index or column count.
  void SetGroupCandidates(const ExactGP& gp, int j, Eigen::MatrixXd zj);
  /// SetGroupCandidates for every group at once: zj[j] [M_j, d_j] becomes group j's
  /// candidates, and the groups' caches are computed in parallel (TBB), each exactly as by
  /// SetGroupCandidates. Throws std::invalid_argument unless zj has one matrix per group with
  /// the group's column count (or no rows).
  void SetAllGroupCandidates(const ExactGP& gp, std::vector<Eigen::MatrixXd> zj);
  /// SetAllGroupCandidates for candidates that partly stay: zj[j] [M_j, d_j] becomes group
  /// j's candidates, and only the rows that differ from the group's current ones (all of
  /// them if M_j changed) get their caches computed, O(N^2) per changed row instead of
  /// O(N^2 M_j); the other rows keep theirs, extended by Sync (equal to a recomputation up to
  /// round-off). When gp changed otherwise than by growing (a refit, a refactorisation, new
  /// data), every row is computed once, exactly as by SetAllGroupCandidates. Groups in
  /// parallel (TBB), each with its serial result. Throws std::invalid_argument as
  /// SetAllGroupCandidates.
  void UpdateAllGroupCandidates(const ExactGP& gp, std::vector<Eigen::MatrixXd> zj);
  /// Brings every group's caches in line with gp (extension or full recomputation; the
  /// groups in parallel, each with the serial result).
  void Sync(const ExactGP& gp);
  /// Component posterior of group j at its candidates as of the last Sync (gp must be that
  /// GP, unchanged since; else std::logic_error): mean [M_j] and variance [M_j], standardised
  /// output units, as ComponentPosterior.
  void Posterior(const ExactGP& gp, int j, Eigen::VectorXd* mean, Eigen::VectorXd* var) const;
  /// Group j's candidates in the group's coordinates [M_j, d_j] (order of active_dims()).
  const Eigen::MatrixXd& group_candidates(int j) const { return groups_.at(j).zj; }
  /// Number of additive groups M.
  int num_groups() const { return static_cast<int>(groups_.size()); }
  /// Full recomputations so far (for tests and profiling).
  long num_recomputes() const { return recomputes_; }
  /// Candidates whose caches were computed from scratch so far, over all groups (by
  /// SetCandidates and its variants, UpdateAllGroupCandidates and full recomputations; for
  /// tests and profiling).
  long num_columns_computed() const { return columns_computed_; }

 private:
  // v has spare rows (capacity >= N) so extensions do not copy; vsq [M] holds the column
  // sums of squares of v's first N rows; a = V^T u and b = V^T e [M] (u, e below) give the
  // component mean [M] at the last Sync as (a - (y_shift - anchor) b) / y_scale.
  struct Group {
    Eigen::MatrixXd zj, v;            // candidates' group columns [M, d_j], [cap, M]
    Eigen::VectorXd vsq, a, b, mean;  // [M] each
  };
  void Recompute(const ExactGP& gp, Group* g, int j);
  // Group j's caches for candidates zj [m, d_j] against gp (N >= 1 rows): v = L^{-1} K_j(X, zj)
  // [N, m] written into *v, and per candidate vsq, a = V^T u and b = V^T e [m]. Recompute and
  // UpdateAllGroupCandidates both compute columns with it.
  void ComputeColumns(const ExactGP& gp, int j, const Eigen::MatrixXd& zj,
                      Eigen::Ref<Eigen::MatrixXd> v, Eigen::VectorXd* vsq, Eigen::VectorXd* a,
                      Eigen::VectorXd* b) const;
  void CheckGroupCandidates(const ExactGP& gp, const std::vector<Eigen::MatrixXd>& zj) const;
  void UpdateMean(const ExactGP& gp, Group* g) const;
  void SolveTargets(const ExactGP& gp);
  bool SameState(const ExactGP& gp) const;

  std::vector<Group> groups_;
  Eigen::Index n_ = 0;         // GP size at the last Sync
  long factorizations_ = -1;   // gp.num_factorizations() at the last Sync
  Eigen::VectorXd theta_;      // gp.LogHyperparameters() at the last Sync
  Eigen::RowVectorXd x_last_;  // last training input at the last Sync (identity check)
  Eigen::VectorXd y_;          // raw targets at the last Sync (ReplaceTargets check)
  // u = L^{-1} (y - anchor) and e = L^{-1} 1 [N]; anchor = y_shift at the last full
  // recomputation (keeps a and b free of cancellation when the shift is large).
  Eigen::VectorXd u_, e_;
  double anchor_ = 0.0;
  long recomputes_ = 0;
  long columns_computed_ = 0;
};

/// MaximizeAddGpUcb over candidate pools instead of fresh random candidates: for each group,
/// scores the candidates of every pool in `pools` (Synced to gp) plus the incumbent's own
/// coordinates, then polishes the best with L-BFGS-B as MaximizeAddGpUcb does
/// (options.random_candidates and local_candidates are unused here). The groups are
/// maximised in parallel (TBB); the result does not depend on the thread count. Returns x [D]
/// in the box. Throws std::invalid_argument on shape mismatch or pools of another decomposition.
/// `precision` (optional, Synced to gp) speeds up the polish (ComponentUcb).
Eigen::VectorXd MaximizeAddGpUcbOnPools(const ExactGP& gp, const Eigen::VectorXd& lb,
                                        const Eigen::VectorXd& ub, int t,
                                        const AddGpUcbOptions& options,
                                        const Eigen::VectorXd& incumbent,
                                        const std::vector<const AdditiveCandidatePool*>& pools,
                                        const GpPrecision* precision = nullptr);

/// A batch of q points from one pass of MaximizeAddGpUcbOnPools: point 0 is its result; point
/// b >= 1 takes, in every group, the b-th best scored candidate of that group (pool candidates
/// and the incumbent's coordinates, by the group's UCB; unpolished; the last one when fewer
/// are scored), so a batch costs one acquisition pass. q = 1 gives MaximizeAddGpUcbOnPools's
/// point exactly. Throws std::invalid_argument as it does, and for q < 1.
std::vector<Eigen::VectorXd> MaximizeAddGpUcbOnPoolsBatch(
    const ExactGP& gp, const Eigen::VectorXd& lb, const Eigen::VectorXd& ub, int t,
    const AddGpUcbOptions& options, const Eigen::VectorXd& incumbent,
    const std::vector<const AdditiveCandidatePool*>& pools, int q,
    const GpPrecision* precision = nullptr);

/// Chooses an additive decomposition of the GP inputs into `groups` groups: draws
/// `num_partitions` random partitions (RandomPartition), scores each by the log marginal
/// likelihood with every group at the current mean lengthscale/variance of gp's kernel
/// (or 1 if it is not additive), and installs the best as gp's kernel
/// (Kandasamy 2015 Sec. 4.4; BOS^2 Sec. 5.3: 20 random decompositions).
/// `max_points` > 0 scores on a random subset of at most that many observations (bounds the
/// O(N^3) cost per partition; 0 = all). Returns the chosen groups. Requires
/// gp.num_data() >= 1.
std::vector<std::vector<int>> SelectDecomposition(ExactGP* gp, KernelFamily family, int groups,
                                                  int num_partitions, Rng& rng, int max_points = 0);

}  // namespace advbo::bo
