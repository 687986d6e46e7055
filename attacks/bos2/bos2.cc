#include "attacks/bos2/bos2.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <optional>
#include <stdexcept>

#include "attacks/bos2/latent.h"
#include "bo/acquisition.h"
#include "bo/gp.h"

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

// Queries the oracle at latent u (unit scale) of side s; returns y, or NaN when the
// budget is spent.
class LatentQuerier {
 public:
  explicit LatentQuerier(oracle::QueryOracle& o) : o_(o) {
    const auto& m = o.model();
    c_ = m.channels();
    h_ = m.height();
    w_ = m.width();
  }
  int channels() const { return c_; }

  // Evaluates n latents of side s in one batch (n <= remaining); returns objectives.
  Eigen::VectorXd Query(const std::vector<Eigen::VectorXd>& us, int side) {
    const size_t d = static_cast<size_t>(c_) * h_ * w_;
    std::vector<float> batch(us.size() * d);
    for (size_t b = 0; b < us.size(); ++b) {
      std::vector<float> delta = UpsampleLatent(o_.epsilon() * us[b], c_, side, h_, w_);
      for (size_t i = 0; i < d; ++i) batch[b * d + i] = o_.clean()[i] + delta[i];
    }
    return o_.Query(batch.data(), static_cast<int>(us.size())).objective;
  }

 private:
  oracle::QueryOracle& o_;
  int c_, h_, w_;
};

}  // namespace

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
      throw std::invalid_argument("BOS^2: latent side " + std::to_string(s) +
                                  " outside 1.." + std::to_string(max_side));
  for (int s : opt.init_sides)
    if (s < 1 || s > max_side)
      throw std::invalid_argument("BOS^2: initial latent side " + std::to_string(s) +
                                  " outside 1.." + std::to_string(max_side));
  if (opt.groups < 1) throw std::invalid_argument("BOS^2: need at least one additive group");

  Bos2Result result;
  LatentQuerier querier(oracle);
  std::vector<PerturbationSample> d_per;
  // D_dim: inputs (d / d_max, t / T), outputs best y of the loop.
  const double d_max = static_cast<double>(*std::max_element(opt.allowed_sides.begin(),
                                                             opt.allowed_sides.end()));
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
  ExactGP per_gp(std::make_unique<bo::StationaryKernel>(bo::KernelFamily::kSquaredExponential,
                                                        1, false),
                 1e-2);
  int prev_side = -1;
  int outer = 0;
  while (oracle.remaining() > 0 && !oracle.succeeded()) {
    ++outer;
    // ---- Algorithm 6: choose d* by GP-UCB over d_allowed at t + i_max.
    Eigen::MatrixXd xd(dim_x.size(), 2);
    Eigen::VectorXd yd(dim_y.size());
    for (size_t i = 0; i < dim_x.size(); ++i) {
      xd.row(i) = dim_x[i].transpose();
      yd(i) = dim_y[i];
    }
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

    // ---- Algorithm 7: perturbation BO loop in the latent space of side s*.
    const int m_groups = std::min(opt.groups, d);
    Eigen::MatrixXd xp(d_per.size(), d);
    Eigen::VectorXd yp(d_per.size());
    Eigen::Index inc = 0;
    for (size_t i = 0; i < d_per.size(); ++i) {
      xp.row(i) = ResizeLatent(d_per[i].u, c, d_per[i].side, side).transpose();
      yp(i) = d_per[i].y;
      if (yp(i) > yp(inc)) inc = static_cast<Eigen::Index>(i);
    }
    const double y_star = yp.maxCoeff();  // best before this loop (threshold of BOS)
    if (side != prev_side) {
      per_gp = ExactGP(std::make_unique<bo::AdditiveKernel>(opt.perturbation_kernel, d,
                                                            bo::RandomPartition(d, m_groups, rng),
                                                            2.0, 1.0 / m_groups),
                       1e-2);
      per_gp.SetData(xp, yp);
      bo::SelectDecomposition(&per_gp, opt.perturbation_kernel, m_groups,
                              opt.num_decompositions, rng, opt.perturbation_fit.max_points);
    } else {
      per_gp.SetData(xp, yp);
    }
    bo::FitHyperparameters(&per_gp, opt.perturbation_fit, rng);
    prev_side = side;

    Bos2Loop loop;
    loop.side = side;
    loop.latent_dim = d;
    loop.start_query = oracle.queries();
    loop.best_objective = -std::numeric_limits<double>::infinity();
    Eigen::VectorXd incumbent = xp.row(inc).transpose();
    double incumbent_y = yp(inc);
    Eigen::VectorXd lb = Eigen::VectorXd::Constant(d, -1.0), ub = Eigen::VectorXd::Constant(d, 1.0);
    std::vector<double> curve;  // running best errors of this loop (mapped into (0, 1])
    double y_first = 0.0, running_best = -std::numeric_limits<double>::infinity();
    std::optional<bo::BosDecisionTable> table;
    for (int i = 1; i <= opt.i_max && oracle.remaining() > 0; ++i) {
      Eigen::VectorXd u = bo::MaximizeAddGpUcb(per_gp, lb, ub, i, opt.acquisition, incumbent, rng);
      const double y = querier.Query({u}, side)(0);
      d_per.push_back({side, u, y});
      per_gp.AddObservation(u, y);
      if (y > incumbent_y) {
        incumbent_y = y;
        incumbent = u;
      }
      loop.queries = i;
      loop.best_objective = std::max(loop.best_objective, y);
      report();
      if (oracle.succeeded()) break;
      if (i % opt.refit_every == 0) bo::FitHyperparameters(&per_gp, opt.perturbation_refit, rng);

      // Bayesian optimal stopping on the running best (DESIGN.md mapping): errors
      // e = y_best / y_first (affine map sending y_first -> 1 and 0 (success) -> 0).
      if (!opt.stopping) continue;
      if (i == 1) y_first = std::min(y, -1e-12);
      running_best = std::max(running_best, y);
      curve.push_back(std::clamp(running_best / y_first, 1e-6, 1.0));
      if (i == opt.i_0) {
        Eigen::VectorXd warm = Eigen::Map<Eigen::VectorXd>(curve.data(), curve.size());
        table = bo::BosDecisionTable::Solve(warm, opt.i_max, y_star / y_first, outer, opt.bos,
                                            rng);
      } else if (i > opt.i_0 && table) {
        Eigen::VectorXd e = Eigen::Map<Eigen::VectorXd>(curve.data(), curve.size());
        if (table->Decide(i, table->SummaryStatistic(e)) == bo::BosDecision::kStop) {
          loop.stopped_early = i < opt.i_max;
          break;
        }
      }
    }
    result.loops.push_back(loop);
    if (loop.queries == 0) break;
    // Algorithm 5 line 7: D_dim <- ((d*, t + i), max y_j).
    dim_x.push_back({d / d_norm, oracle.queries() / t_norm});
    dim_y.push_back(loop.best_objective);
  }
  return finish();
}

}  // namespace advbo::attacks
