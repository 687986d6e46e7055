// BOS^2: Bayesian Optimization with dimension Selection and Bayesian optimal Stopping
// (Kharkovskii 2020 thesis, Chapter 5: Algorithm 5 (attack), Algorithm 6 (dimension BO
// loop), Algorithm 7 (perturbation BO loop), settings of Sec. 5.3).
//
// Black-box L_inf attack: the only access to the model is the QueryOracle, which counts
// every image as a query, enforces the budget T and clips every query into the eps-ball.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "bo/additive.h"
#include "bo/hyperparameters.h"
#include "bo/kernel.h"
#include "bo/optimal_stopping.h"
#include "bo/random.h"
#include "bo/trust_region.h"
#include "oracle/oracle.h"

namespace advbo::attacks {

/// BOS^2 settings. The member defaults are the thesis-literal configuration (Sec. 5.3, and
/// where the thesis is silent the choices advbo first made: SE kernel, kandasamy2015 beta,
/// fitted noise, fresh candidates); Tuned() is the configuration `advbo attack --attack bos2`
/// runs, chosen by the paired ablations in the README ("BOS² settings").
struct Bos2Options {
  /// Allowed latent sides s (d = s*s*c): {6, 8, ..., 18} (Sec. 5.3).
  std::vector<int> allowed_sides = {6, 8, 10, 12, 14, 16, 18};
  /// Initial sides d_init = {6, 14, 18} with `init_per_side` random perturbations each.
  std::vector<int> init_sides = {6, 14, 18};
  /// Random initial perturbations per initial side (Sec. 5.3: 10).
  int init_per_side = 10;
  int i_max = 40;               ///< query budget of one perturbation loop
  int i_0 = 8;                  ///< warm-up iterations before the stopping rule is solved
  int groups = 12;              ///< M, additive components (eq. 5.4)
  int num_decompositions = 20;  ///< random decompositions scored by marginal likelihood
  int refit_every = 5;          ///< perturbation-GP hyperparameter refit period (iterations)
  bool stopping = true;         ///< Bayesian optimal stopping (false = the "no stopping" ablation)
  double dimension_sqrt_beta = 2.0;  ///< beta^{1/2} of the dimension loop's GP-UCB (Alg. 6)
  /// Kernel of the additive perturbation GP (the thesis: squared exponential).
  bo::KernelFamily perturbation_kernel = bo::KernelFamily::kSquaredExponential;
  bo::AddGpUcbOptions acquisition;  ///< Add-GP-UCB maximiser (beta: kandasamy2015)
  /// Perturbation-GP hyperparameter fit at each loop start (DefaultPerturbationFit()).
  bo::FitOptions perturbation_fit = DefaultPerturbationFit();
  /// Periodic refits every `refit_every` iterations: warm start only, 20 iterations.
  bo::FitOptions perturbation_refit = DefaultPerturbationRefit();
  /// Dimension-GP hyperparameter fit (DefaultDimensionFit()).
  bo::FitOptions dimension_fit = DefaultDimensionFit();
  bo::BosOptions bos;  ///< BO-BOS parameters (docs/design.md defaults)
  /// Perturbation-GP window (advbo; the thesis is silent): at each loop start the GP gets
  /// at most this many points of D_per -- the best ceil(max_gp_points / 4) by objective
  /// plus the most recent others -- instead of all of them, so the acquisition's cost
  /// per query stays bounded (O(M N^2) with N <= max_gp_points + i_max). 0 = every point
  /// (thesis-literal).
  int max_gp_points = 0;
  /// Saturation gain kappa >= 1 (advbo): the image perturbation is
  /// clip(eps * kappa * g(u), -eps, eps), so most pixels sit on the eps-ball's faces as
  /// in vertex attacks (Square, Parsimonious) while the latent map stays continuous for
  /// the GP. 1 = the thesis' g(u) (Sec. 5.2, eq. 5.3).
  double saturation = 1.0;
  /// Candidate pool per additive group (advbo): 0 = MaximizeAddGpUcb's fresh random and local
  /// candidates every iteration (O(M C N^2) per query); P > 0 = P uniform candidates per
  /// group drawn once per loop (with trust_region: carried along when the box moves) plus
  /// acquisition.local_candidates around the incumbent (redrawn when it changes), scored by
  /// bo::AdditiveCandidatePool in O(M P N) per query between refits (MaximizeAddGpUcbOnPools).
  int candidate_pool = 0;
  /// With candidate pools: polish with an incrementally updated K^{-1} (bo::GpPrecision;
  /// one matrix-vector product per evaluation instead of two triangular solves; equal up to
  /// round-off).
  bool precision_polish = false;
  /// Final full-resolution stage (advbo): the last `refine_queries` queries of the budget go
  /// to RefineWithWindows (attacks/common/window_refine.h) on the best image, when the BO
  /// loops have not succeeded by then. 0 = off (the thesis: BO to the end), unless
  /// refine_fraction > 0.
  long refine_queries = 0;
  /// With refine_queries == 0: the stage's share of the oracle's budget T, in [0, 1) --
  /// floor(refine_fraction * T) queries, except under the oracle's rescale_compat threat
  /// model, where the share is 0 (vertex windows are weak there). Tuned() uses 1/3 (300 of
  /// T = 900: the paired comparisons in docs/results.md); 0 = off. refine_queries > 0 takes
  /// precedence.
  double refine_fraction = 0;
  /// p_init of the refinement's window schedule (fraction of pixels per window), (0, 1].
  double refine_p_init = 0.1;
  /// Hand-over patience (advbo; as bo-hl's RayS -> HopSkipJump hand-over): with the
  /// refinement stage on, the BO loops also end -- and the stage takes every query left --
  /// once `refine_patience` queries (counted from the end of Initialise) have not raised the
  /// best objective. Checked between perturbation loops and after every loop query.
  /// 0 = off (the BO loops run to the stage's share of the budget).
  long refine_patience = 0;
  /// Square's first query (advbo): before the random initial latents, query Square
  /// Attack's vertical-stripe vertex image (SquareStripes, attacks/common/window_refine.h;
  /// Andriushchenko et al. 2020, Algorithm 1 line 2) once. It is not a latent, so the GPs never
  /// see it; it can end the run at query 1 and is the refinement stage's starting image when
  /// it stays the best. false = the thesis' initial design only.
  bool stripes_init = false;
  /// Batch size q of the perturbation loop (advbo; issue of speed, not in the thesis): q
  /// points per iteration, chosen one after another by Add-GP-UCB with each earlier one's
  /// posterior mean added as a fantasy observation (Kriging believer, Ginsbourger et al.
  /// 2010), sent to the model as one batch (one forward pass of q images instead of q).
  /// 1 = the thesis' sequential loop; 1 <= q <= i_max. The stopping rule still sees every
  /// query in order; a batch cut short by success or stopping has spent all its q queries.
  int batch = 1;
  /// How a batch of q > 1 points is chosen: true (with candidate pools) = one acquisition
  /// pass (bo::MaximizeAddGpUcbOnPoolsBatch: the polished Add-GP-UCB point plus points made
  /// of every group's next-best scored candidates), costing one proposal per batch; false =
  /// Kriging believer (q proposals, each after the previous one's fantasy observation).
  bool batch_one_pass = true;
  /// TuRBO trust region for the perturbation loop (advbo; Eriksson et al.,
  /// NeurIPS 2019, Sec. 2): Add-GP-UCB's candidates and polish are confined to a box around
  /// the loop's incumbent, of side trust.length_init (in units of the latent box [-1, 1]'s
  /// width) scaled per coordinate by its additive group's lengthscale (TrustRegion::Weights).
  /// The side doubles after trust.success_tolerance improvements in a row, halves after
  /// trust.failure_tolerance misses in a row, and restarts at length_init below length_min;
  /// it carries over from one perturbation loop to the next. When the box moves, the uniform
  /// candidate pool follows it (bo::MoveUniformSample: still a uniform sample of the box,
  /// only the rows outside the overlap redrawn and recomputed) and the local candidates are
  /// redrawn. false = the thesis' global search in [-1, 1]^d. On in Tuned()
  /// (docs/benchmarks/attacks.md).
  bool trust_region = false;
  bo::TrustRegionOptions trust;  ///< with trust_region (TuRBO's defaults)

  /// The thesis-literal configuration (= the member defaults).
  static Bos2Options Thesis() { return Bos2Options{}; }
  /// advbo's default configuration: Thesis() plus the measured improvements (saturation 3,
  /// noise variance fixed at 1e-6, candidate pools of 250 with 8 L-BFGS-B polish iterations,
  /// GP window 200, refits at loop starts only on at most 100 points, 20,000 stopping paths,
  /// the last third of the budget to the full-resolution refinement stage, TuRBO's trust
  /// region with its paper defaults), each chosen by paired runs against the thesis'
  /// configuration and Square on the shipped models (docs/benchmarks/attacks.md); the pool
  /// size and polish iterations by paired runs on fresh instances at the same ASR and queries
  /// with about 20 % less BO time (docs/benchmarks/performance.md).
  static Bos2Options Tuned();
  /// Tuned() with less BO work per query (`bos2:preset=fast`): the K^-1 polish
  /// (precision_polish), no random restart in the loop-start fits (the GP starts from its
  /// last hyperparameters) and a GP window of 120 instead of 200 points. Not the default
  /// because it lost ASR on CIFAR-10 in paired runs.
  static Bos2Options Fast();
  /// `base` in its MNIST form (advbo; a dataset rule, as Square's authors choose
  /// their window size p_init = 0.8 for MNIST): the refinement stage's windows start at
  /// p_init = 0.8 (refine_p_init), the BO loops hand the budget over to the stage after 20
  /// queries without improvement (refine_patience) and the latent saturation gain is 6.
  /// `bos2` and the tuned and fast presets run in this form on the "mnist" dataset
  /// (Bos2Attack::OptionsFor). Chosen because, paired against Tuned() on the three MNIST
  /// models, it raised BOS²'s ASR to Square's (docs/benchmarks/attacks.md).
  static Bos2Options MnistForm(Bos2Options base);

  /// Checks every setting (Ceres' Options::IsValid habit): 2 <= i_0 < i_max, non-empty side
  /// lists, groups >= 1, 1 <= batch <= i_max, max_gp_points 0 or >= 4, refine_queries >= 0,
  /// refine_p_init in (0, 1], refine_fraction in [0, 1), saturation finite and >= 1,
  /// vertex_fraction in [0, 1], the trust region's settings (TrustRegionOptions::Validate,
  /// whether or not it is on); with max_side > 0 every latent side in 1..max_side; with
  /// budget > 0 refine_queries below it. Throws std::invalid_argument naming the setting (and
  /// its `bos2:` key) and the value.
  void Validate(int max_side = 0, long budget = 0) const;

  /// Perturbation GP fit: 1 restart, 30 iterations, lengthscales in [0.05, 50] (inputs in
  /// [-1, 1]), and at most 150 points per likelihood evaluation (advbo's speed setting;
  /// the posterior always uses every point; 0 = fit on all points).
  static bo::FitOptions DefaultPerturbationFit();
  /// Periodic perturbation-GP refit: warm start only, 20 L-BFGS-B iterations.
  static bo::FitOptions DefaultPerturbationRefit();
  /// Dimension GP fit (Matérn-5/2 ARD over (d/d_max, t/T)): 2 restarts, all points.
  static bo::FitOptions DefaultDimensionFit();
};

/// One run of the perturbation BO loop (one chosen latent dimension).
struct Bos2Loop {
  int side = 0;  ///< s; latent dimension d = s*s*c
  /// d = side * side * channels, the latent dimension of the loop.
  int latent_dim = 0;
  long start_query = 0;        ///< queries used before the loop
  int queries = 0;             ///< i, queries spent in the loop
  bool stopped_early = false;  ///< Bayesian optimal stopping returned d1
  double best_objective = 0;   ///< max y in the loop
  /// With Bos2Options::trust_region: the region's side length L at the loop's start (0: off).
  double trust_length = 0;
};

/// Wall seconds of one instance's BO work by phase (profiling; the rest of bo_seconds is
/// latent upsampling, bookkeeping and the oracle's own overhead).
struct Bos2Phases {
  double dimension = 0;      ///< Algorithm 6: dimension GP fit and GP-UCB
  double gp_setup = 0;       ///< window, projection of D_per (Alg. 7 line 2), SetData
  double decomposition = 0;  ///< choosing the additive decomposition
  double fit = 0;            ///< perturbation-GP hyperparameter fits and refits
  double pools = 0;          ///< candidate pools: drawing, recomputing, incremental sync
  double acquisition = 0;    ///< Add-GP-UCB maximisation (scoring + L-BFGS-B polish)
  double update = 0;         ///< adding observations to the GP
  double stopping = 0;       ///< Bayesian optimal stopping: solving and deciding
};

/// Outcome of one attack instance.
struct Bos2Result {
  /// Whether the goal was met within the budget.
  bool success = false;
  long queries = 0;                ///< queries to success (1-based index), or all queries used
  double best_objective = 0;       ///< max y over all queries (eq. 5.3)
  std::vector<float> adversarial;  ///< the successful (or best) image, C*H*W in [0, 1]
  std::vector<Bos2Loop> loops;     ///< the sequence of latent dimensions tried
  long refine_start = -1;          ///< queries used before the refinement stage (-1: none)
  long refine_reserved = 0;        ///< queries reserved for the stage (0: stage off)
  /// The BO loops ended early by Bos2Options::refine_patience (the stage then had more
  /// queries than reserved).
  bool refine_handover = false;
  long refine_queries = 0;  ///< queries the refinement stage spent
  int trust_restarts = 0;   ///< trust-region restarts (L fell below L_min; 0 without one)
  /// Wall seconds of the instance: in all, in the model (its own share of batched forward
  /// passes), waiting for other lockstep lanes or worker groups, in BO work (the rest).
  ///@{
  double seconds = 0, model_seconds = 0, wait_seconds = 0, bo_seconds = 0;
  ///@}
  Bos2Phases phases;  ///< where bo_seconds went
};

/// Progress callback: (queries used, best objective so far).
using Bos2Progress = std::function<void(long, double)>;

/// The perturbation-GP window (Bos2Options::max_gp_points): indices (ascending) into the
/// objectives `ys` [n] of the points kept -- all when max_points <= 0 or n <= max_points,
/// else the best ceil(max_points / 4) by objective (ties: earlier first) plus the most
/// recent others, max_points in all.
std::vector<int> GpWindow(const std::vector<double>& ys, int max_points);

/// Runs BOS^2 (Algorithm 5) against `oracle` until success or until the oracle's budget T
/// is spent. All randomness comes from `rng`. Throws std::invalid_argument on inconsistent
/// options (e.g. i_0 >= i_max, a side larger than the image); model failures propagate as
/// oracle::ModelError.
Bos2Result RunBos2(oracle::QueryOracle& oracle, const Bos2Options& options, bo::Rng& rng,
                   const Bos2Progress& progress = nullptr);

}  // namespace advbo::attacks
