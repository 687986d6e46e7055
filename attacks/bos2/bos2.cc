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

// Group j's share of the loop's global candidate pool: candidate_pool rows [P, D] whose group
// columns are uniform in [-1, 1] (a vertex_fraction of them at box vertices), zeros elsewhere
// (the component kernel reads only its group's columns).
Eigen::MatrixXd PoolCandidates(const ExactGP& gp, int j, const Bos2Options& opt, bo::Rng& rng) {
  const auto& dims = dynamic_cast<const bo::AdditiveKernel&>(gp.kernel()).group(j).active_dims();
  const int p = opt.candidate_pool;
  const int n_vertex = static_cast<int>(std::lround(opt.acquisition.vertex_fraction * p));
  std::uniform_real_distribution<double> unif(-1.0, 1.0);
  Eigen::MatrixXd z = Eigen::MatrixXd::Zero(p, gp.X().cols());
  for (int c = 0; c < p; ++c)
    for (int a : dims) z(c, a) = c < n_vertex ? (unif(rng) < 0 ? -1.0 : 1.0) : unif(rng);
  return z;
}

// Group j's local candidates: local_candidates rows around the incumbent (Gaussian with
// std local_scale * 2 per coordinate, clipped to [-1, 1]).
Eigen::MatrixXd LocalCandidates(const ExactGP& gp, int j, const Eigen::VectorXd& incumbent,
                                const Bos2Options& opt, bo::Rng& rng) {
  const auto& dims = dynamic_cast<const bo::AdditiveKernel&>(gp.kernel()).group(j).active_dims();
  const int p = opt.acquisition.local_candidates;
  std::normal_distribution<double> normal(0.0, 1.0);
  Eigen::MatrixXd z = Eigen::MatrixXd::Zero(p, gp.X().cols());
  for (int c = 0; c < p; ++c)
    for (int a : dims)
      z(c, a) =
          std::clamp(incumbent(a) + opt.acquisition.local_scale * 2.0 * normal(rng), -1.0, 1.0);
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
  o.candidate_pool = 500;
  o.max_gp_points = 200;
  o.refit_every = 0;
  o.perturbation_fit.max_points = o.perturbation_refit.max_points = 100;
  o.bos.num_paths = 20000;
  o.perturbation_fit.fit_noise = o.perturbation_refit.fit_noise = false;  // noise 1e-6
  o.refine_fraction = 1.0 / 3.0;
  return o;
}

Bos2Options Bos2Options::Fast() {
  Bos2Options o = Tuned();
  o.precision_polish = true;
  o.perturbation_fit.restarts = 0;
  o.acquisition.polish_iterations = 8;
  o.max_gp_points = 120;
  return o;
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

Bos2Result RunBos2(oracle::QueryOracle& oracle, const Bos2Options& opt, bo::Rng& rng,
                   const Bos2Progress& progress) {
  const auto t_start = Clock::now();
  const double model_s0 = oracle.model_seconds();
  const auto& model = oracle.model();
  const int c = model.channels();
  const int max_side = std::min(model.height(), model.width());
  if (opt.i_0 < 2 || opt.i_0 >= opt.i_max)
    throw std::invalid_argument("BOS^2: need 2 <= i_0 < i_max");
  if (opt.allowed_sides.empty() || opt.init_sides.empty())
    throw std::invalid_argument("BOS^2: empty list of latent sides");
  for (int s : opt.allowed_sides)
    if (s < 1 || s > max_side)
      throw std::invalid_argument("BOS^2: latent side " + std::to_string(s) + " outside 1.." +
                                  std::to_string(max_side));
  for (int s : opt.init_sides)
    if (s < 1 || s > max_side)
      throw std::invalid_argument("BOS^2: initial latent side " + std::to_string(s) +
                                  " outside 1.." + std::to_string(max_side));
  if (opt.groups < 1) throw std::invalid_argument("BOS^2: need at least one additive group");
  if (opt.batch < 1 || opt.batch > opt.i_max)
    throw std::invalid_argument("BOS^2: batch size must be in 1..i_max (" +
                                std::to_string(opt.i_max) + ")");
  if (opt.max_gp_points < 0 || (opt.max_gp_points > 0 && opt.max_gp_points < 4))
    throw std::invalid_argument("BOS^2: max_gp_points must be 0 (all) or >= 4");
  if (opt.refine_queries < 0) throw std::invalid_argument("BOS^2: refine_queries must be >= 0");
  if (!(opt.refine_p_init > 0 && opt.refine_p_init <= 1))
    throw std::invalid_argument("BOS^2: refine_p_init must be in (0, 1]");
  if (!(opt.refine_fraction >= 0 && opt.refine_fraction < 1))
    throw std::invalid_argument("BOS^2: refine_fraction must be in [0, 1)");
  if (!(opt.saturation >= 1.0) || !std::isfinite(opt.saturation))
    throw std::invalid_argument("BOS^2: saturation gain must be finite and >= 1");

  Bos2Result result;
  LatentQuerier querier(oracle, opt.saturation);
  std::vector<PerturbationSample> d_per;
  // D_dim: inputs (d / d_max, t / T), outputs best y of the loop.
  const double d_max =
      static_cast<double>(*std::max_element(opt.allowed_sides.begin(), opt.allowed_sides.end()));
  const double d_norm = d_max * d_max * c;
  const double t_norm = static_cast<double>(oracle.budget());
  std::vector<Eigen::Vector2d> dim_x;
  std::vector<double> dim_y;
  std::uniform_real_distribution<double> unif(-1.0, 1.0);
  auto report = [&]() {
    if (progress) progress(oracle.queries(), oracle.best_objective());
  };
  auto finish = [&]() {
    result.success = oracle.succeeded();
    result.queries = result.success ? oracle.first_success_query() : oracle.queries();
    result.best_objective = oracle.best_objective();
    result.adversarial = result.success ? oracle.success_image() : oracle.best_image();
    result.seconds = std::chrono::duration<double>(Clock::now() - t_start).count();
    result.model_seconds = oracle.model_seconds() - model_s0;
    result.bo_seconds = std::max(0.0, result.seconds - result.model_seconds);
    return result;
  };

  // Initialisation (Sec. 5.3): 10 random perturbations in each of d_init, batched.
  for (int s : opt.init_sides) {
    const int n = static_cast<int>(std::min<long>(opt.init_per_side, oracle.remaining()));
    if (n <= 0) return finish();
    std::vector<Eigen::VectorXd> us(n);
    for (auto& u : us) u = Eigen::VectorXd::NullaryExpr(s * s * c, [&]() { return unif(rng); });
    Eigen::VectorXd ys = querier.Query(us, s);
    for (int i = 0; i < n; ++i) d_per.push_back({s, us[i], ys(i)});
    dim_x.push_back({s * s * c / d_norm, n / t_norm});
    dim_y.push_back(ys.maxCoeff());
    report();
    if (oracle.succeeded()) return finish();
  }

  // Dimension GP (Algorithm 6): Matérn-5/2 ARD over (d, t), MLE every iteration.
  ExactGP dim_gp(std::make_unique<bo::StationaryKernel>(bo::KernelFamily::kMatern52, 2, true,
                                                        std::vector<int>{}, 0.5, 1.0),
                 1e-2);
  // Noise variance (standardised units): fitted from 1e-2, or fixed at 1e-6 (BayesOpt ref.).
  const double per_noise = opt.perturbation_fit.fit_noise ? 1e-2 : 1e-6;
  ExactGP per_gp(
      std::make_unique<bo::StationaryKernel>(bo::KernelFamily::kSquaredExponential, 1, false),
      per_noise);
  int prev_side = -1;
  int outer = 0;
  // The BO loops stop where the refinement stage's share of the budget begins.
  // The share-based default is off under --rescale-compat: the stage's ball-vertex windows map
  // to (x + 2 eps)/(1 + 2 eps) or x/(1 + 2 eps) there, as weak as Square's (23 % vs 98 %
  // clipped), and paired 8-bit runs lost 4 instances with it (docs/results.md). An explicit
  // refine_queries is honoured.
  const long bo_floor = opt.refine_queries > 0 ? opt.refine_queries
                        : oracle.rescale_compat()
                            ? 0
                            : static_cast<long>(std::floor(opt.refine_fraction *
                                                           static_cast<double>(oracle.budget())));
  if (opt.refine_queries > 0 && opt.refine_queries >= oracle.budget())
    throw std::invalid_argument("BOS^2: refine=" + std::to_string(opt.refine_queries) +
                                " reserves the whole budget of " + std::to_string(oracle.budget()) +
                                " queries for the refinement stage; the BO loops need some "
                                "(use refine < budget, or refine_fraction)");
  result.refine_reserved = bo_floor;
  while (oracle.remaining() > bo_floor && !oracle.succeeded()) {
    ++outer;
    // ---- Algorithm 6: choose d* by GP-UCB over d_allowed at t + i_max.
    Eigen::MatrixXd xd(dim_x.size(), 2);
    Eigen::VectorXd yd(dim_y.size());
    for (size_t i = 0; i < dim_x.size(); ++i) {
      xd.row(i) = dim_x[i].transpose();
      yd(i) = dim_y[i];
    }
    Bos2Phases& ph = result.phases;
    const auto t_dim = Clock::now();
    dim_gp.SetData(xd, yd);
    bo::FitHyperparameters(&dim_gp, opt.dimension_fit, rng);
    const double t_next = static_cast<double>(oracle.queries() + opt.i_max) / t_norm;
    Eigen::MatrixXd cand(opt.allowed_sides.size(), 2);
    for (size_t i = 0; i < opt.allowed_sides.size(); ++i) {
      const int s = opt.allowed_sides[i];
      cand.row(i) << s * s * c / d_norm, t_next;
    }
    Eigen::VectorXd mu, var;
    dim_gp.Predict(cand, &mu, &var);
    Eigen::Index best_i;
    bo::Ucb(mu, var, opt.dimension_sqrt_beta * opt.dimension_sqrt_beta).maxCoeff(&best_i);
    const int side = opt.allowed_sides[best_i];
    const int d = side * side * c;
    ph.dimension += std::chrono::duration<double>(Clock::now() - t_dim).count();
    const auto t_setup = Clock::now();

    // ---- Algorithm 7: perturbation BO loop in the latent space of side s*.
    const int m_groups = std::min(opt.groups, d);
    std::vector<double> all_y(d_per.size());
    for (size_t i = 0; i < d_per.size(); ++i) all_y[i] = d_per[i].y;
    const std::vector<int> window = GpWindow(all_y, opt.max_gp_points);
    const auto n_gp = static_cast<Eigen::Index>(window.size());
    Eigen::MatrixXd xp(n_gp, d);
    Eigen::VectorXd yp(n_gp);
    Eigen::Index inc = 0;
    for (Eigen::Index i = 0; i < n_gp; ++i) {
      const PerturbationSample& ps = d_per[window[i]];
      xp.row(i) = ResizeLatent(ps.u, c, ps.side, side).transpose();
      yp(i) = ps.y;
      if (yp(i) > yp(inc)) inc = i;
    }
    const double y_star = yp.maxCoeff();  // best before this loop (threshold of BOS)
    ph.gp_setup += std::chrono::duration<double>(Clock::now() - t_setup).count();
    if (side != prev_side) {
      per_gp = ExactGP(std::make_unique<bo::AdditiveKernel>(opt.perturbation_kernel, d,
                                                            bo::RandomPartition(d, m_groups, rng),
                                                            2.0, 1.0 / m_groups),
                       per_noise);
      Timed(&ph.gp_setup, [&] { per_gp.SetData(xp, yp); });
      Timed(&ph.decomposition, [&] {
        return bo::SelectDecomposition(&per_gp, opt.perturbation_kernel, m_groups,
                                       opt.num_decompositions, rng,
                                       opt.perturbation_fit.max_points);
      });
    } else {
      Timed(&ph.gp_setup, [&] { per_gp.SetData(xp, yp); });
    }
    Timed(&ph.fit, [&] { return bo::FitHyperparameters(&per_gp, opt.perturbation_fit, rng); });
    prev_side = side;

    Bos2Loop loop;
    loop.side = side;
    loop.latent_dim = d;
    loop.start_query = oracle.queries();
    loop.best_objective = -std::numeric_limits<double>::infinity();
    Eigen::VectorXd incumbent = xp.row(inc).transpose();
    // Candidate pools of this loop (Bos2Options::candidate_pool): drawn once, kept in step
    // with the GP incrementally; the local pool is redrawn when the incumbent changes.
    std::optional<bo::AdditiveCandidatePool> global_pool, local_pool;
    bo::GpPrecision precision;
    Eigen::VectorXd local_center;
    double incumbent_y = yp(inc);
    Eigen::VectorXd lb = Eigen::VectorXd::Constant(d, -1.0), ub = Eigen::VectorXd::Constant(d, 1.0);
    std::vector<double> curve;  // running best errors of this loop (mapped into (0, 1])
    double y_first = 0.0, running_best = -std::numeric_limits<double>::infinity();
    std::optional<bo::BosDecisionTable> table;
    // The candidate pools in step with per_gp (drawn on first use; the local pool redrawn
    // when the incumbent moved).
    auto sync_pools = [&] {
      Timed(&ph.pools, [&] {
        if (!global_pool) {
          global_pool.emplace(per_gp);
          local_pool.emplace(per_gp);
          for (int j = 0; j < global_pool->num_groups(); ++j)
            global_pool->SetCandidates(per_gp, j, PoolCandidates(per_gp, j, opt, rng));
        }
        if (local_center.size() == 0 || local_center != incumbent) {
          local_center = incumbent;
          for (int j = 0; j < local_pool->num_groups(); ++j)
            local_pool->SetCandidates(per_gp, j, LocalCandidates(per_gp, j, incumbent, opt, rng));
        }
        global_pool->Sync(per_gp);
        local_pool->Sync(per_gp);
        if (opt.precision_polish) precision.Sync(per_gp);
      });
    };
    // The next point of the loop (Add-GP-UCB at iteration t) on per_gp as it is now.
    auto propose = [&](int t) -> Eigen::VectorXd {
      if (opt.candidate_pool <= 0)
        return Timed(&ph.acquisition, [&] {
          return bo::MaximizeAddGpUcb(per_gp, lb, ub, t, opt.acquisition, incumbent, rng);
        });
      sync_pools();
      return Timed(&ph.acquisition, [&] {
        return bo::MaximizeAddGpUcbOnPools(per_gp, lb, ub, t, opt.acquisition, incumbent,
                                           {&*global_pool, &*local_pool},
                                           opt.precision_polish ? &precision : nullptr);
      });
    };
    bool stop = false;
    for (int i = 1; i <= opt.i_max && oracle.remaining() > bo_floor && !stop;) {
      // A batch of q points (Bos2Options::batch), sent to the model as one batch: from one
      // acquisition pass (batch_one_pass), or Kriging believer -- after each proposal but the
      // last, its posterior mean joins the GP as a fantasy observation, replaced by the real
      // output once the batch is answered. q = 1 is the thesis' sequential loop.
      const int q = static_cast<int>(std::min<long>(
          {static_cast<long>(opt.batch), opt.i_max - i + 1, oracle.remaining() - bo_floor}));
      const Eigen::Index n0 = per_gp.num_data();
      std::vector<Eigen::VectorXd> us;
      const bool one_pass = q > 1 && opt.batch_one_pass && opt.candidate_pool > 0;
      if (one_pass) {
        sync_pools();
        us = Timed(&ph.acquisition, [&] {
          return bo::MaximizeAddGpUcbOnPoolsBatch(per_gp, lb, ub, i, opt.acquisition, incumbent,
                                                  {&*global_pool, &*local_pool}, q,
                                                  opt.precision_polish ? &precision : nullptr);
        });
      } else {
        for (int k = 0; k < q; ++k) {
          us.push_back(propose(i + k));
          if (k + 1 < q) {
            Eigen::VectorXd mu;
            per_gp.Predict(us.back().transpose(), &mu, nullptr);
            Timed(&ph.update, [&] { per_gp.AddObservation(us.back(), mu(0)); });
          }
        }
      }
      const Eigen::VectorXd ys = querier.Query(us, side);
      Timed(&ph.update, [&] {
        if (one_pass) {
          for (int k = 0; k < q; ++k) per_gp.AddObservation(us[k], ys(k));
        } else {
          per_gp.ReplaceTargets(n0, ys.head(q - 1));
          per_gp.AddObservation(us[q - 1], ys(q - 1));
        }
      });
      int k = 0;
      for (; k < q && !stop; ++k) {
        const int t = i + k;  // this query's index in the loop (1-based)
        const double y = ys(k);
        d_per.push_back({side, us[k], y});
        if (y > incumbent_y) {
          incumbent_y = y;
          incumbent = us[k];
        }
        loop.queries = t;
        loop.best_objective = std::max(loop.best_objective, y);
        report();
        if (oracle.succeeded()) {
          stop = true;
          continue;
        }
        if (opt.refit_every > 0 && t % opt.refit_every == 0)
          Timed(&ph.fit,
                [&] { return bo::FitHyperparameters(&per_gp, opt.perturbation_refit, rng); });

        // Bayesian optimal stopping on the running best (docs/design.md mapping): errors
        // e = y_best / y_first (affine map sending y_first -> 1 and 0 (success) -> 0).
        if (!opt.stopping) continue;
        if (t == 1) y_first = std::min(y, -1e-12);
        running_best = std::max(running_best, y);
        curve.push_back(std::clamp(running_best / y_first, 1e-6, 1.0));
        if (t == opt.i_0) {
          Eigen::VectorXd warm = Eigen::Map<Eigen::VectorXd>(curve.data(), curve.size());
          table = Timed(&ph.stopping, [&] {
            return bo::BosDecisionTable::Solve(warm, opt.i_max, y_star / y_first, outer, opt.bos,
                                               rng);
          });
        } else if (t > opt.i_0 && table) {
          Eigen::VectorXd e = Eigen::Map<Eigen::VectorXd>(curve.data(), curve.size());
          if (table->Decide(t, table->SummaryStatistic(e)) == bo::BosDecision::kStop) {
            loop.stopped_early = t < opt.i_max;
            stop = true;
          }
        }
      }
      // The rest of a batch cut short by success or stopping was queried: it is kept in
      // D_per and counted in the loop's queries.
      for (; k < q; ++k) {
        d_per.push_back({side, us[k], ys(k)});
        if (ys(k) > incumbent_y) {
          incumbent_y = ys(k);
          incumbent = us[k];
        }
        loop.queries = i + k;
        loop.best_objective = std::max(loop.best_objective, ys(k));
      }
      i += q;
    }
    result.loops.push_back(loop);
    if (loop.queries == 0) break;
    // Algorithm 5 line 7: D_dim <- ((d*, t + i), max y_j).
    dim_x.push_back({d / d_norm, oracle.queries() / t_norm});
    dim_y.push_back(loop.best_objective);
  }
  if (bo_floor > 0 && !oracle.succeeded() && oracle.remaining() > 0) {
    result.refine_start = oracle.queries();
    RefineWithWindows(oracle, oracle.remaining(), opt.refine_p_init, rng, progress);
    result.refine_queries = oracle.queries() - result.refine_start;
  }
  return finish();
}

}  // namespace advbo::attacks
