// BO hard-label attack (this project's method; in the spirit of Shukla, Sahu,
// Willmott & Bhattacharya, "Simple and Efficient Hard Label Black-box Adversarial Attacks in
// Low Query Budget Regimes", KDD 2021): Bayesian optimisation of the decision-boundary
// distance over a low-dimensional direction space, then RayS' hierarchical search from the
// best direction found, then HopSkipJump once RayS stalls. Untargeted, L_inf, label feedback.
//
//   Direction space: z in {-1, +1}^D, D = C * s * s (s = `side`, default 4: 48 dimensions on
//   CIFAR-10, 16 on MNIST); the ray direction is z upsampled by repetition to C x H x W
//   (one sign per s x s tile of each channel) -- a vertex direction, as RayS' are.
//   Objective: the L_inf radius r(z) of the ray's decision boundary (RaySearch::Search: one
//   query at the best radius r* so far; only an improving direction costs a binary search).
//   A direction that does not improve is observed at r* (a censored value: r(z) >= r*).
//   BO loop (shared BO core: bo::ExactGP, Matern-5/2, hyperparameters by marginal
//   likelihood every 10 observations): the first point is all +1 (RayS' start), then 4
//   random vertices, then each next z minimises the lower confidence bound mu - sqrt(beta_t)
//   sigma (beta_t = 0.2 D log 2t, Kandasamy et al. 2015's practical schedule) over 500 random
//   vertices and 100 one-to-three-tile sign flips of each of the 5 best observed directions.
//   After `bo_fraction` of the budget (at most `bo_max_queries` queries: the stage looks for a
//   good start, which does not need more queries when the budget grows, while its GP work
//   grows with the square of its observations), RayS' hierarchical search (attacks/rays)
//   continues at full resolution from the best direction and radius.
//   Once that search has not shrunk the radius for `patience` queries (a plateau: under 8-bit
//   queries the radius moves in whole grid steps and sign flips stop helping), HopSkipJump's
//   iterations (attacks/hsja, Chen, Jordan & Wainwright, S&P 2020, Algorithm 2) continue from
//   the closest adversarial point x0 + r* d, with continuous steps off the plateau.
//
// L2 (this project's): the same BO stage over z in the box [-1, 1]^D, D = C * s * s,
// z the coefficients of the s x s lowest DCT frequencies of each channel (a unit L2 direction
// after the inverse DCT); the objective is the L2 boundary radius along it, censored at the best
// so far as above (the first direction searched outward from 0.1 sqrt(d), doubling). Candidates:
// 500 uniform box points and 100 Gaussian moves (standard deviation 0.2) of each of the 5 best.
// The first 5 points are uniform. After the BO stage, CGBA's iterations (attacks/cgba, Reza et
// al., ICCV 2023) continue from the best boundary point -- the strongest L2 attack here at
// 1,000 queries -- until its distance falls by less than 1 % over `patience` queries: CGBA
// moves only in its low-frequency subspace and stalls there. With `finer` (the default) CGBA
// then restarts from its boundary point in twice as many frequencies per side (its
// dim_reduction 4 -> 2 -> 1, the last the full image), each until the same stall, and
// HopSkipJump's full-space iterations take over after the last (without `finer`, at the first
// stall; measured on CIFAR-10 test images 200-219 at 5,000 queries: mean distance 0.785 with
// the hand-over, 1.023 without, HopSkipJump alone 0.809; `finer` on MNIST test images 200-219:
// 0.957x the distance of the direct hand-over at 5,000 queries, unchanged at 1,000).
// The run stops at the first adversarial query inside the eps-ball or when the budget is spent.
#pragma once

#include "attacks/attack.h"

namespace advbo::attacks {

/// BO hard-label settings.
struct BoHardLabelOptions {
  int side = 4;  ///< s: tiles per image side of the direction space, >= 1
  /// Share of the budget for the BO stage, in [0, 1]; -1 (default) = the norm's: 0.3 under
  /// L_inf, 0.1 under L2 (the best of 0.05 / 0.1 / 0.15 / 0.3 at 1,000 queries on CIFAR-10
  /// test images 200-219, not the reported ones).
  double bo_fraction = -1;
  int bo_max_queries = 300;  ///< ... and at most this many queries, >= 0 (300 = 0.3 x 1,000)
  /// L_inf: RayS' search hands over to HopSkipJump once this many queries in a row have not
  /// improved its radius; L2: CGBA hands over once its distance fell by less than 1 % over this
  /// many queries. >= 0 (0 = never: RayS / CGBA to the end). 200: the best of 0 / 100 / 200 / 300
  /// on CIFAR-10 test images 200-249 (docs/results/threat_models.md), not the reported ones.
  int patience = 200;
  int fit_every = 10;  ///< GP hyperparameter refits every this many observations, >= 1
  /// L2: on a CGBA stall, CGBA again in twice as many DCT frequencies per side (its
  /// dim_reduction halved, down to 1: the full image) before HopSkipJump takes over (false:
  /// HopSkipJump at once). true: chosen on MNIST test images 200-219 at 5,000 queries (paired
  /// distance 0.957x, SE 0.012; unchanged at 1,000), not the reported ones.
  bool finer = true;
  /// Throws std::invalid_argument naming the field and `name` (the attack spec).
  void Validate(const std::string& name) const;
};

/// The direction of latent vertex z [C * side * side] (values +-1) upsampled by repetition
/// to [C * H * W]: pixel (c, i, j) takes z(c, i * side / H, j * side / W).
std::vector<float> UpsampleSigns(const Eigen::VectorXd& z, int channels, int height, int width,
                                 int side);

/// BO hard-label attack; spec "bo-hl" or "bo-hl:side=S,bo_fraction=F,bo_max_queries=Q,patience=P".
/// Label feedback, L_inf and L2, untargeted only. details: bo_hl_evaluations (BO-stage
/// directions tried), bo_hl_radius_after_bo (the best radius when RayS' search / CGBA took over;
/// null if none), bo_hl_hsja_from (the query count when HopSkipJump took over) and, under L2,
/// bo_hl_cgba_from (when CGBA took over) and bo_hl_finer_from (the query counts at which CGBA
/// restarted in a larger subspace, `finer`; empty when it never did); null if it never did.
class BoHardLabelAttack final : public LabelAttack {
 public:
  /// An attack with `options`, reported under `name`.
  explicit BoHardLabelAttack(BoHardLabelOptions options = {}, std::string name = "bo-hl");
  AttackResult Run(oracle::QueryOracle& oracle, bo::Rng& rng,
                   const AttackProgress& progress) const override;

 private:
  BoHardLabelOptions options_;
};

}  // namespace advbo::attacks
