#include "attacks/bos2/bos2.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <optional>
#include <stdexcept>

#include "attacks/common/latent.h"
#include "attacks/common/window_refine.h"
#include "bo/acquisition.h"
#include "bo/gp.h"
#include "bo/kernel.h"

namespace advbo::attacks {
namespace {

using bo::ExactGP;
using Clock = std::chrono::steady_clock;

// One element of D_per: a latent perturbation in unit scale u = delta / eps in [-1, 1].
struct PerturbationSample {
  int side;
  Eigen::VectorXd u;
  double y;
};

// The number of a global pool's rows [0, P] placed at box vertices: vertex_fraction of
// candidate_pool, the first rows of every group's pool.
int NumVertexRows(const Bos2Options& opt) {
  return static_cast<int>(std::lround(opt.acquisition.vertex_fraction * opt.candidate_pool));
}

// One coordinate of a vertex row: true (the box's upper bound) or false (its lower bound),
// each with probability 1/2.
bool VertexAtUpper(bo::Rng& rng) {
  return !(std::uniform_real_distribution<double>(-1.0, 1.0)(rng) < 0);
}

// Group j's share of the loop's global candidate pool, in the group's coordinates:
// candidate_pool rows [P, d_j] uniform in [-1, 1] (the first NumVertexRows of them at box
// vertices). With a trust region (`box` non-null: its lower and upper bounds [D]), uniform in
// the box and at its vertices instead.
Eigen::MatrixXd PoolCandidates(const ExactGP& gp, int j, const Bos2Options& opt,
                               const std::pair<Eigen::VectorXd, Eigen::VectorXd>* box,
                               bo::Rng& rng) {
  const auto& dims = dynamic_cast<const bo::AdditiveKernel&>(gp.kernel()).group(j).active_dims();
  const int p = opt.candidate_pool, dj = static_cast<int>(dims.size());
  const int n_vertex = NumVertexRows(opt);
  std::uniform_real_distribution<double> unif(-1.0, 1.0);
  Eigen::MatrixXd z(p, dj);
  for (int c = 0; c < p; ++c)
    for (int i = 0; i < dj; ++i) {
      const int a = dims[i];
      const double v = c < n_vertex ? (VertexAtUpper(rng) ? 1.0 : -1.0) : unif(rng);
      z(c, i) =
          box == nullptr ? v : box->first(a) + (box->second(a) - box->first(a)) * 0.5 * (v + 1.0);
    }
  return z;
}

// Group j's pool candidates [candidate_pool, d_j] of `pool` carried from the box
// [old_lb, old_ub] to [lb, ub] (each [D]): the uniform rows by bo::MoveUniformSample (a
// uniform sample of the new box that keeps the rows the coupling allows), the vertex rows
// (PoolCandidates' first NumVertexRows) redrawn as vertices of the new box.
Eigen::MatrixXd MovedPoolCandidates(const ExactGP& gp, int j, const bo::AdditiveCandidatePool& pool,
                                    const Eigen::VectorXd& old_lb, const Eigen::VectorXd& old_ub,
                                    const Eigen::VectorXd& lb, const Eigen::VectorXd& ub,
                                    const Bos2Options& opt, bo::Rng& rng) {
  const auto& dims = dynamic_cast<const bo::AdditiveKernel&>(gp.kernel()).group(j).active_dims();
  const int dj = static_cast<int>(dims.size());
  Eigen::MatrixXd z = pool.group_candidates(j);
  const int n_vertex = std::min<int>(NumVertexRows(opt), static_cast<int>(z.rows()));
  Eigen::VectorXd olo(dj), ohi(dj), lo(dj), hi(dj);
  for (int i = 0; i < dj; ++i) {
    olo(i) = old_lb(dims[i]);
    ohi(i) = old_ub(dims[i]);
    lo(i) = lb(dims[i]);
    hi(i) = ub(dims[i]);
  }
  for (int c = 0; c < n_vertex; ++c)
    for (int i = 0; i < dj; ++i) z(c, i) = VertexAtUpper(rng) ? hi(i) : lo(i);
  Eigen::MatrixXd uniform = z.bottomRows(z.rows() - n_vertex);
  bo::MoveUniformSample(&uniform, olo, ohi, lo, hi, rng);
  z.bottomRows(z.rows() - n_vertex) = uniform;
  return z;
}

// Group j's local candidates [local_candidates, d_j] around the incumbent [D] (Gaussian with
// std local_scale * 2 per coordinate, clipped to the loop's bounds [lb, ub]: [-1, 1] or the
// trust region).
Eigen::MatrixXd LocalCandidates(const ExactGP& gp, int j, const Eigen::VectorXd& incumbent,
                                const Eigen::VectorXd& lb, const Eigen::VectorXd& ub,
                                const Bos2Options& opt, bo::Rng& rng) {
  const auto& dims = dynamic_cast<const bo::AdditiveKernel&>(gp.kernel()).group(j).active_dims();
  const int p = opt.acquisition.local_candidates, dj = static_cast<int>(dims.size());
  std::normal_distribution<double> normal(0.0, 1.0);
  Eigen::MatrixXd z(p, dj);
  for (int c = 0; c < p; ++c)
    for (int i = 0; i < dj; ++i) {
      const int a = dims[i];
      z(c, i) =
          std::clamp(incumbent(a) + opt.acquisition.local_scale * 2.0 * normal(rng), lb(a), ub(a));
    }
  return z;
}

// Runs f() and adds its wall seconds to *acc.
template <typename F>
auto Timed(double* acc, F&& f) {
  const auto t0 = Clock::now();
  struct Add {
    double* acc;
    Clock::time_point t0;
    ~Add() { *acc += std::chrono::duration<double>(Clock::now() - t0).count(); }
  } add{acc, t0};
  return f();
}

}  // namespace

std::vector<int> GpWindow(const std::vector<double>& ys, int max_points) {
  const int n = static_cast<int>(ys.size());
  std::vector<int> idx(n);
  for (int i = 0; i < n; ++i) idx[i] = i;
  if (max_points <= 0 || n <= max_points) return idx;
  const int n_best = (max_points + 3) / 4;
  std::vector<int> by_y = idx;
  std::stable_sort(by_y.begin(), by_y.end(), [&](int a, int b) { return ys[a] > ys[b]; });
  std::vector<char> keep(n, 0);
  for (int i = 0; i < n_best; ++i) keep[by_y[i]] = 1;
  int kept = n_best;
  for (int i = n - 1; i >= 0 && kept < max_points; --i)
    if (!keep[i]) {
      keep[i] = 1;
      ++kept;
    }
  std::vector<int> out;
  for (int i = 0; i < n; ++i)
    if (keep[i]) out.push_back(i);
  return out;
}

Bos2Options Bos2Options::Tuned() {
  Bos2Options o;
  o.saturation = 3.0;
  o.candidate_pool = 250;
  o.acquisition.polish_iterations = 8;
  o.max_gp_points = 200;
  o.refit_every = 0;
  o.perturbation_fit.max_points = o.perturbation_refit.max_points = 100;
  o.bos.num_paths = 20000;
  o.perturbation_fit.fit_noise = o.perturbation_refit.fit_noise = false;  // noise 1e-6
  o.refine_fraction = 1.0 / 3.0;
  o.trust_region = true;  // TuRBO: gained on CIFAR-10 in paired runs, neutral on MNIST
  return o;
}

Bos2Options Bos2Options::Fast() {
  Bos2Options o = Tuned();
  o.precision_polish = true;
  o.perturbation_fit.restarts = 0;
  o.max_gp_points = 120;
  return o;
}

Bos2Options Bos2Options::MnistForm(Bos2Options base) {
  base.refine_p_init = 0.8;
  base.refine_patience = 20;
  base.saturation = 6.0;
  return base;
}

bo::FitOptions Bos2Options::DefaultPerturbationFit() {
  bo::FitOptions f;
  f.restarts = 1;
  f.max_iterations = 30;
  f.lengthscale_min = 0.05;
  f.lengthscale_max = 50.0;
  f.variance_min = 1e-3;
  f.variance_max = 20.0;
  f.noise_min = 1e-6;
  f.noise_max = 0.5;
  f.max_points = 150;
  return f;
}

bo::FitOptions Bos2Options::DefaultPerturbationRefit() {
  bo::FitOptions f = DefaultPerturbationFit();
  f.restarts = 0;
  f.max_iterations = 20;
  return f;
}

bo::FitOptions Bos2Options::DefaultDimensionFit() {
  bo::FitOptions f;
  f.restarts = 2;
  f.max_iterations = 50;
  f.lengthscale_min = 0.05;
  f.lengthscale_max = 10.0;
  f.variance_min = 1e-2;
  f.variance_max = 10.0;
  f.noise_min = 1e-6;
  f.noise_max = 1.0;
  return f;
}

void Bos2Options::Validate(int max_side, long budget) const {
  auto fail = [](const std::string& what) { throw std::invalid_argument("BOS^2: " + what); };
  if (i_0 < 2 || i_0 >= i_max)
    fail("need 2 <= i_0 < i_max, got i_0 " + std::to_string(i_0) + ", i_max " +
         std::to_string(i_max));
  if (allowed_sides.empty() || init_sides.empty()) fail("empty list of latent sides");
  if (max_side > 0) {
    for (int s : allowed_sides)
      if (s < 1 || s > max_side)
        fail("latent side " + std::to_string(s) + " outside 1.." + std::to_string(max_side));
    for (int s : init_sides)
      if (s < 1 || s > max_side)
        fail("initial latent side " + std::to_string(s) + " outside 1.." +
             std::to_string(max_side));
  }
  if (groups < 1)
    fail("need at least one additive group (setting groups), got " + std::to_string(groups));
  if (batch < 1 || batch > i_max)
    fail("batch size (setting batch) must be in 1..i_max (" + std::to_string(i_max) + "), got " +
         std::to_string(batch));
  if (max_gp_points < 0 || (max_gp_points > 0 && max_gp_points < 4))
    fail("max_gp_points (setting window) must be 0 (all points) or >= 4, got " +
         std::to_string(max_gp_points));
  if (refine_queries < 0) fail("refine_queries (setting refine) must be >= 0");
  if (refine_patience < 0) fail("refine_patience (setting patience) must be >= 0");
  if (!(refine_p_init > 0 && refine_p_init <= 1))
    fail("refine_p_init (setting refine_p) must be in (0, 1], got " +
         std::to_string(refine_p_init));
  if (!(refine_fraction >= 0 && refine_fraction < 1))
    fail("refine_fraction (setting refine_fraction) must be in [0, 1), got " +
         std::to_string(refine_fraction));
  if (!(saturation >= 1.0) || !std::isfinite(saturation))
    fail("saturation gain (setting saturation) must be finite and >= 1, got " +
         std::to_string(saturation));
  if (!(acquisition.vertex_fraction >= 0 && acquisition.vertex_fraction <= 1))
    fail("vertex_fraction (setting vertex) must be in [0, 1], got " +
         std::to_string(acquisition.vertex_fraction));
  try {
    trust.Validate();
  } catch (const std::invalid_argument& e) {
    fail(std::string(e.what()) + " (settings tr_init, tr_succ, tr_fail)");
  }
  if (budget > 0 && refine_queries > 0 && refine_queries >= budget)
    fail("refine=" + std::to_string(refine_queries) + " reserves the whole budget of " +
         std::to_string(budget) +
         " queries for the refinement stage; the BO loops need some (use refine < budget, or "
         "refine_fraction)");
}

namespace {

// One run of Algorithm 5 (Kharkovskii 2020, Ch. 5): the state its steps share -- D_per (every
// latent perturbation queried, at its own side), D_dim (the dimension loop's data) and the two
// GPs -- and the steps in the thesis' order: Initialise (Sec. 5.3), then per outer iteration
// ChooseSide (Algorithm 6) and PerturbationLoop (Algorithm 7 with Bayesian optimal stopping),
// then advbo's refinement stage (Refine) and Finish.
class Bos2Run {
 public:
  Bos2Run(oracle::QueryOracle& oracle, const Bos2Options& opt, bo::Rng& rng,
          const Bos2Progress& progress);
  Bos2Result Run();

 private:
  // One perturbation loop's state (Algorithm 7): its incumbent, candidate pools, stopping
  // curve and decision table.
  struct Loop {
    int side = 0, d = 0;
    Bos2Loop record;
    double y_star = 0;  // best objective before the loop: the stopping threshold
    Eigen::VectorXd incumbent, local_center, lb, ub;
    Eigen::VectorXd pool_lb, pool_ub;  // the bounds the global pool was drawn in (trust region)
    double incumbent_y = 0;
    std::optional<bo::AdditiveCandidatePool> global_pool, local_pool;
    bo::GpPrecision precision;
    std::vector<double> curve;  // running best errors (mapped into (0, 1])
    double y_first = 0.0, running_best = -std::numeric_limits<double>::infinity();
    std::optional<bo::BosDecisionTable> table;
  };

  // Sec. 5.3: init_per_side random perturbations in each of d_init, one batch per side.
  // Returns false when the run is over (success, or no budget left).
  bool Initialise();
  // Algorithm 6: d* by GP-UCB (beta^{1/2} = dimension_sqrt_beta) over the allowed sides at
  // t + i_max, on the Matérn-5/2 ARD GP of D_dim fitted by MLE every iteration. Returns s*.
  int ChooseSide();
  // Algorithm 7's set-up: the perturbation GP on the window of D_per resized to `side`
  // (a new random additive decomposition, scored over num_decompositions, when the side
  // changed), fitted; the loop's incumbent and y*.
  void StartLoop(int side, Loop* loop);
  // Algorithm 7: Add-GP-UCB in batches of q until i_max queries, success, the refinement
  // floor or Bayesian optimal stopping.
  void PerturbationLoop(Loop* loop);
  // The candidate pools in step with the perturbation GP (drawn on first use; the local pool
  // redrawn when the incumbent moved, the global pool when the trust region changed).
  void SyncPools(Loop* loop);
  // With Bos2Options::trust_region: the loop's bounds [lb, ub] <- the region's box around
  // the incumbent, weighted by the additive groups' lengthscales (TuRBO Sec. 2).
  void PlaceTrustRegion(Loop* loop) const;
  // The next q points of the loop at its iteration i: one acquisition pass, or Kriging
  // believer (fantasy observations, replaced by the real outputs in UpdateGp).
  std::vector<Eigen::VectorXd> ProposeBatch(Loop* loop, int i, int q, bool one_pass);
  // Adds an answered batch's outputs `ys` to the perturbation GP (n0: its size before the
  // batch's fantasies).
  void UpdateGp(const std::vector<Eigen::VectorXd>& us, const Eigen::VectorXd& ys, Eigen::Index n0,
                bool one_pass);
  // Query t (1-based in the loop) with latent u and objective y: D_per, the incumbent, the
  // loop's record. With `decide`, also the periodic refit and the stopping rule (Alg. 4 of
  // BO-BOS as mapped in docs/design.md). Returns whether the loop stops here.
  bool Observe(Loop* loop, int t, const Eigen::VectorXd& u, double y, bool decide);
  void Report() const {
    if (progress_) progress_(oracle_.queries(), oracle_.best_objective());
  }
  // Whether the BO loops may go on: budget above the refinement's floor, no success, and
  // (with Bos2Options::refine_patience) an improvement of the best objective within the last
  // refine_patience queries. Tracks the query of the last improvement.
  bool BoContinues();
  Bos2Result Finish();

  oracle::QueryOracle& oracle_;
  const Bos2Options& opt_;
  bo::Rng& rng_;
  const Bos2Progress& progress_;
  const Clock::time_point t_start_ = Clock::now();
  const double model_s0_, wait_s0_;
  const int c_;
  LatentQuerier querier_;
  std::optional<bo::TrustRegion> trust_;  // with Bos2Options::trust_region
  double d_norm_ = 1, t_norm_ = 1;        // D_dim inputs: (d / d_norm, t / t_norm)
  long bo_floor_ = 0;                     // queries left when the BO loops end (the refinement's)
  std::vector<PerturbationSample> d_per_;
  std::vector<Eigen::Vector2d> dim_x_;
  std::vector<double> dim_y_;
  const double per_noise_;
  ExactGP dim_gp_, per_gp_;
  int prev_side_ = -1, outer_ = 0;
  double best_seen_ = -std::numeric_limits<double>::infinity();
  long improved_at_ = 0;  // query count when best_seen_ was last raised
  Bos2Result result_;
};

Bos2Run::Bos2Run(oracle::QueryOracle& oracle, const Bos2Options& opt, bo::Rng& rng,
                 const Bos2Progress& progress)
    : oracle_(oracle),
      opt_(opt),
      rng_(rng),
      progress_(progress),
      model_s0_(oracle.model_seconds()),
      wait_s0_(oracle.wait_seconds()),
      c_(oracle.model().channels()),
      querier_(oracle, opt.saturation),
      // Noise variance (standardised units): fitted from 1e-2, or fixed at 1e-6 (BayesOpt ref.).
      per_noise_(opt.perturbation_fit.fit_noise ? 1e-2 : 1e-6),
      dim_gp_(std::make_unique<bo::StationaryKernel>(bo::KernelFamily::kMatern52, 2, true,
                                                     std::vector<int>{}, 0.5, 1.0),
              1e-2),
      per_gp_(
          std::make_unique<bo::StationaryKernel>(bo::KernelFamily::kSquaredExponential, 1, false),
          per_noise_) {
  if (opt.trust_region) trust_.emplace(opt.trust);
  const double d_max =
      static_cast<double>(*std::max_element(opt.allowed_sides.begin(), opt.allowed_sides.end()));
  d_norm_ = d_max * d_max * c_;
  t_norm_ = static_cast<double>(oracle.budget());
  // The BO loops stop where the refinement stage's share of the budget begins.
  // The share-based default is off under --rescale-compat: the stage's ball-vertex windows map
  // to (x + 2 eps)/(1 + 2 eps) or x/(1 + 2 eps) there, as weak as Square's (23 % vs 98 %
  // clipped), and paired 8-bit runs lost 4 instances with it (docs/results.md). An explicit
  // refine_queries is honoured.
  bo_floor_ = opt.refine_queries > 0 ? opt.refine_queries
              : oracle.rescale_compat()
                  ? 0
                  : static_cast<long>(
                        std::floor(opt.refine_fraction * static_cast<double>(oracle.budget())));
}

Bos2Result Bos2Run::Run() {
  if (!Initialise()) return Finish();
  result_.refine_reserved = bo_floor_;  // (0 in the records of a run that ended in Initialise)
  while (BoContinues()) {
    ++outer_;
    Loop loop;
    StartLoop(ChooseSide(), &loop);
    PerturbationLoop(&loop);
    result_.loops.push_back(loop.record);
    if (loop.record.queries == 0) break;
    // Algorithm 5 line 7: D_dim <- ((d*, t + i), max y_j).
    dim_x_.push_back({loop.d / d_norm_, oracle_.queries() / t_norm_});
    dim_y_.push_back(loop.record.best_objective);
  }
  if (bo_floor_ > 0 && !oracle_.succeeded() && oracle_.remaining() > 0) {
    result_.refine_start = oracle_.queries();
    RefineWithWindows(oracle_, oracle_.remaining(), opt_.refine_p_init, rng_, progress_);
    result_.refine_queries = oracle_.queries() - result_.refine_start;
  }
  return Finish();
}

bool Bos2Run::BoContinues() {
  if (oracle_.remaining() <= bo_floor_ || oracle_.succeeded()) return false;
  if (oracle_.best_objective() > best_seen_) {
    best_seen_ = oracle_.best_objective();
    improved_at_ = oracle_.queries();
  }
  if (bo_floor_ > 0 && opt_.refine_patience > 0 &&
      oracle_.queries() - improved_at_ >= opt_.refine_patience) {
    result_.refine_handover = true;
    return false;
  }
  return true;
}

bool Bos2Run::Initialise() {
  if (opt_.stripes_init && oracle_.remaining() > 0) {
    std::vector<float> stripes =
        SquareStripes(oracle_.clean(), c_, oracle_.model().height(), oracle_.model().width(),
                      static_cast<float>(oracle_.query_radius()), rng_);
    oracle_.Query(stripes.data(), 1);
    Report();
    if (oracle_.succeeded()) return false;
  }
  std::uniform_real_distribution<double> unif(-1.0, 1.0);
  for (int s : opt_.init_sides) {
    const int n = static_cast<int>(std::min<long>(opt_.init_per_side, oracle_.remaining()));
    if (n <= 0) return false;
    std::vector<Eigen::VectorXd> us(n);
    for (auto& u : us) u = Eigen::VectorXd::NullaryExpr(s * s * c_, [&]() { return unif(rng_); });
    Eigen::VectorXd ys = querier_.Query(us, s);
    for (int i = 0; i < n; ++i) d_per_.push_back({s, us[i], ys(i)});
    dim_x_.push_back({s * s * c_ / d_norm_, n / t_norm_});
    dim_y_.push_back(ys.maxCoeff());
    Report();
    if (oracle_.succeeded()) return false;
  }
  return true;
}

int Bos2Run::ChooseSide() {
  const auto t_dim = Clock::now();
  Eigen::MatrixXd xd(dim_x_.size(), 2);
  Eigen::VectorXd yd(dim_y_.size());
  for (size_t i = 0; i < dim_x_.size(); ++i) {
    xd.row(i) = dim_x_[i].transpose();
    yd(i) = dim_y_[i];
  }
  dim_gp_.SetData(xd, yd);
  bo::FitHyperparameters(&dim_gp_, opt_.dimension_fit, rng_);
  const double t_next = static_cast<double>(oracle_.queries() + opt_.i_max) / t_norm_;
  Eigen::MatrixXd cand(opt_.allowed_sides.size(), 2);
  for (size_t i = 0; i < opt_.allowed_sides.size(); ++i) {
    const int s = opt_.allowed_sides[i];
    cand.row(i) << s * s * c_ / d_norm_, t_next;
  }
  Eigen::VectorXd mu, var;
  dim_gp_.Predict(cand, &mu, &var);
  Eigen::Index best_i;
  bo::Ucb(mu, var, opt_.dimension_sqrt_beta * opt_.dimension_sqrt_beta).maxCoeff(&best_i);
  result_.phases.dimension += std::chrono::duration<double>(Clock::now() - t_dim).count();
  return opt_.allowed_sides[best_i];
}

void Bos2Run::StartLoop(int side, Loop* loop) {
  Bos2Phases& ph = result_.phases;
  const auto t_setup = Clock::now();
  const int d = side * side * c_;
  const int m_groups = std::min(opt_.groups, d);
  std::vector<double> all_y(d_per_.size());
  for (size_t i = 0; i < d_per_.size(); ++i) all_y[i] = d_per_[i].y;
  const std::vector<int> window = GpWindow(all_y, opt_.max_gp_points);
  const auto n_gp = static_cast<Eigen::Index>(window.size());
  Eigen::MatrixXd xp(n_gp, d);
  Eigen::VectorXd yp(n_gp);
  Eigen::Index inc = 0;
  for (Eigen::Index i = 0; i < n_gp; ++i) {
    const PerturbationSample& ps = d_per_[window[i]];
    xp.row(i) = ResizeLatent(ps.u, c_, ps.side, side).transpose();
    yp(i) = ps.y;
    if (yp(i) > yp(inc)) inc = i;
  }
  ph.gp_setup += std::chrono::duration<double>(Clock::now() - t_setup).count();
  if (side != prev_side_) {
    per_gp_ = ExactGP(std::make_unique<bo::AdditiveKernel>(opt_.perturbation_kernel, d,
                                                           bo::RandomPartition(d, m_groups, rng_),
                                                           2.0, 1.0 / m_groups),
                      per_noise_);
    Timed(&ph.gp_setup, [&] { per_gp_.SetData(xp, yp); });
    Timed(&ph.decomposition, [&] {
      return bo::SelectDecomposition(&per_gp_, opt_.perturbation_kernel, m_groups,
                                     opt_.num_decompositions, rng_,
                                     opt_.perturbation_fit.max_points);
    });
  } else {
    Timed(&ph.gp_setup, [&] { per_gp_.SetData(xp, yp); });
  }
  Timed(&ph.fit, [&] { return bo::FitHyperparameters(&per_gp_, opt_.perturbation_fit, rng_); });
  prev_side_ = side;
  loop->side = side;
  loop->d = d;
  loop->y_star = yp.maxCoeff();
  loop->record.side = side;
  loop->record.latent_dim = d;
  loop->record.start_query = oracle_.queries();
  loop->record.best_objective = -std::numeric_limits<double>::infinity();
  loop->incumbent = xp.row(inc).transpose();
  loop->incumbent_y = yp(inc);
  loop->lb = Eigen::VectorXd::Constant(d, -1.0);
  loop->ub = Eigen::VectorXd::Constant(d, 1.0);
  if (trust_) {
    loop->record.trust_length = trust_->length();
    PlaceTrustRegion(loop);
  }
}

void Bos2Run::PlaceTrustRegion(Loop* loop) const {
  const auto& k = dynamic_cast<const bo::AdditiveKernel&>(per_gp_.kernel());
  Eigen::VectorXd ls = Eigen::VectorXd::Ones(loop->d);
  for (int j = 0; j < k.num_groups(); ++j)
    for (int a : k.group(j).active_dims()) ls(a) = k.group(j).lengthscales()(0);
  const Eigen::VectorXd one = Eigen::VectorXd::Ones(loop->d);
  trust_->Box(loop->incumbent, bo::TrustRegion::Weights(ls), -one, one, &loop->lb, &loop->ub);
}

void Bos2Run::PerturbationLoop(Loop* loop) {
  bool stop = false;
  for (int i = 1; i <= opt_.i_max && !stop && BoContinues();) {
    // A batch of q points (Bos2Options::batch), sent to the model as one batch. q = 1 is the
    // thesis' sequential loop.
    const int q = static_cast<int>(std::min<long>(
        {static_cast<long>(opt_.batch), opt_.i_max - i + 1, oracle_.remaining() - bo_floor_}));
    const Eigen::Index n0 = per_gp_.num_data();
    const bool one_pass = q > 1 && opt_.batch_one_pass && opt_.candidate_pool > 0;
    const std::vector<Eigen::VectorXd> us = ProposeBatch(loop, i, q, one_pass);
    const Eigen::VectorXd ys = querier_.Query(us, loop->side);
    UpdateGp(us, ys, n0, one_pass);
    const double best_before = loop->incumbent_y;
    // The rest of a batch cut short by success or stopping was queried: it is kept in D_per
    // and counted in the loop's queries, without further decisions.
    for (int k = 0; k < q; ++k) stop = Observe(loop, i + k, us[k], ys(k), !stop) || stop;
    i += q;
    if (trust_) {
      trust_->Update(ys.maxCoeff(), best_before, q, loop->d);
      PlaceTrustRegion(loop);
    }
  }
}

void Bos2Run::SyncPools(Loop* loop) {
  Timed(&result_.phases.pools, [&] {
    const bool box_moved = trust_ && (loop->pool_lb.size() == 0 || loop->pool_lb != loop->lb ||
                                      loop->pool_ub != loop->ub);
    if (!loop->global_pool) {
      loop->global_pool.emplace(per_gp_);
      loop->local_pool.emplace(per_gp_);
      // Drawn group by group (one random stream), their caches computed in parallel.
      const std::pair<Eigen::VectorXd, Eigen::VectorXd> box{loop->lb, loop->ub};
      std::vector<Eigen::MatrixXd> z;
      for (int j = 0; j < loop->global_pool->num_groups(); ++j)
        z.push_back(PoolCandidates(per_gp_, j, opt_, trust_ ? &box : nullptr, rng_));
      loop->global_pool->SetAllGroupCandidates(per_gp_, std::move(z));
    } else if (box_moved) {
      // The pool follows the box: still a uniform sample of it, with only the rows the move
      // forces out redrawn (and their caches computed).
      std::vector<Eigen::MatrixXd> z;
      for (int j = 0; j < loop->global_pool->num_groups(); ++j)
        z.push_back(MovedPoolCandidates(per_gp_, j, *loop->global_pool, loop->pool_lb,
                                        loop->pool_ub, loop->lb, loop->ub, opt_, rng_));
      loop->global_pool->UpdateAllGroupCandidates(per_gp_, std::move(z));
    }
    if (box_moved) {
      loop->pool_lb = loop->lb;
      loop->pool_ub = loop->ub;
    }
    if (loop->local_center.size() == 0 || loop->local_center != loop->incumbent || box_moved) {
      loop->local_center = loop->incumbent;
      std::vector<Eigen::MatrixXd> z;
      for (int j = 0; j < loop->local_pool->num_groups(); ++j)
        z.push_back(LocalCandidates(per_gp_, j, loop->incumbent, loop->lb, loop->ub, opt_, rng_));
      loop->local_pool->SetAllGroupCandidates(per_gp_, std::move(z));
    }
    loop->global_pool->Sync(per_gp_);
    loop->local_pool->Sync(per_gp_);
    if (opt_.precision_polish) loop->precision.Sync(per_gp_);
  });
}

std::vector<Eigen::VectorXd> Bos2Run::ProposeBatch(Loop* loop, int i, int q, bool one_pass) {
  Bos2Phases& ph = result_.phases;
  bo::GpPrecision* precision = opt_.precision_polish ? &loop->precision : nullptr;
  if (one_pass) {
    SyncPools(loop);
    return Timed(&ph.acquisition, [&] {
      return bo::MaximizeAddGpUcbOnPoolsBatch(
          per_gp_, loop->lb, loop->ub, i, opt_.acquisition, loop->incumbent,
          {&*loop->global_pool, &*loop->local_pool}, q, precision);
    });
  }
  // Kriging believer: after each proposal but the last, its posterior mean joins the GP as a
  // fantasy observation.
  std::vector<Eigen::VectorXd> us;
  for (int k = 0; k < q; ++k) {
    const int t = i + k;
    if (opt_.candidate_pool <= 0) {
      us.push_back(Timed(&ph.acquisition, [&] {
        return bo::MaximizeAddGpUcb(per_gp_, loop->lb, loop->ub, t, opt_.acquisition,
                                    loop->incumbent, rng_);
      }));
    } else {
      SyncPools(loop);
      us.push_back(Timed(&ph.acquisition, [&] {
        return bo::MaximizeAddGpUcbOnPools(per_gp_, loop->lb, loop->ub, t, opt_.acquisition,
                                           loop->incumbent,
                                           {&*loop->global_pool, &*loop->local_pool}, precision);
      }));
    }
    if (k + 1 < q) {
      Eigen::VectorXd mu;
      per_gp_.Predict(us.back().transpose(), &mu, nullptr);
      Timed(&ph.update, [&] { per_gp_.AddObservation(us.back(), mu(0)); });
    }
  }
  return us;
}

void Bos2Run::UpdateGp(const std::vector<Eigen::VectorXd>& us, const Eigen::VectorXd& ys,
                       Eigen::Index n0, bool one_pass) {
  const int q = static_cast<int>(us.size());
  Timed(&result_.phases.update, [&] {
    if (one_pass) {
      for (int k = 0; k < q; ++k) per_gp_.AddObservation(us[k], ys(k));
    } else {
      per_gp_.ReplaceTargets(n0, ys.head(q - 1));
      per_gp_.AddObservation(us[q - 1], ys(q - 1));
    }
  });
}

bool Bos2Run::Observe(Loop* loop, int t, const Eigen::VectorXd& u, double y, bool decide) {
  d_per_.push_back({loop->side, u, y});
  if (y > loop->incumbent_y) {
    loop->incumbent_y = y;
    loop->incumbent = u;
  }
  loop->record.queries = t;
  loop->record.best_objective = std::max(loop->record.best_objective, y);
  if (!decide) return false;
  Report();
  if (oracle_.succeeded()) return true;
  Bos2Phases& ph = result_.phases;
  if (opt_.refit_every > 0 && t % opt_.refit_every == 0)
    Timed(&ph.fit, [&] { return bo::FitHyperparameters(&per_gp_, opt_.perturbation_refit, rng_); });
  // Bayesian optimal stopping on the running best (docs/design.md mapping): errors
  // e = y_best / y_first (affine map sending y_first -> 1 and 0 (success) -> 0).
  if (!opt_.stopping) return false;
  if (t == 1) loop->y_first = std::min(y, -1e-12);
  loop->running_best = std::max(loop->running_best, y);
  loop->curve.push_back(std::clamp(loop->running_best / loop->y_first, 1e-6, 1.0));
  const Eigen::Map<const Eigen::VectorXd> e(loop->curve.data(), loop->curve.size());
  if (t == opt_.i_0) {
    loop->table = Timed(&ph.stopping, [&] {
      return bo::BosDecisionTable::Solve(e, opt_.i_max, loop->y_star / loop->y_first, outer_,
                                         opt_.bos, rng_);
    });
  } else if (t > opt_.i_0 && loop->table &&
             loop->table->Decide(t, loop->table->SummaryStatistic(e)) == bo::BosDecision::kStop) {
    loop->record.stopped_early = t < opt_.i_max;
    return true;
  }
  return false;
}

Bos2Result Bos2Run::Finish() {
  result_.success = oracle_.succeeded();
  result_.queries = result_.success ? oracle_.first_success_query() : oracle_.queries();
  result_.best_objective = oracle_.best_objective();
  result_.adversarial = result_.success ? oracle_.success_image() : oracle_.best_image();
  result_.seconds = std::chrono::duration<double>(Clock::now() - t_start_).count();
  result_.model_seconds = oracle_.model_seconds() - model_s0_;
  result_.wait_seconds = oracle_.wait_seconds() - wait_s0_;
  result_.bo_seconds =
      std::max(0.0, result_.seconds - result_.model_seconds - result_.wait_seconds);
  if (trust_) result_.trust_restarts = trust_->restarts();
  return result_;
}

}  // namespace

Bos2Result RunBos2(oracle::QueryOracle& oracle, const Bos2Options& opt, bo::Rng& rng,
                   const Bos2Progress& progress) {
  opt.Validate(std::min(oracle.model().height(), oracle.model().width()), oracle.budget());
  return Bos2Run(oracle, opt, rng, progress).Run();
}

}  // namespace advbo::attacks
