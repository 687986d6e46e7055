#include "attacks/bo_hard_label/bo_hard_label.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <numeric>
#include <stdexcept>
#include <utility>
#include <vector>

#include "attacks/cgba/cgba.h"
#include "attacks/common/dct.h"
#include "attacks/common/ray.h"
#include "attacks/hsja/hsja.h"
#include "attacks/rays/rays.h"
#include "bo/acquisition.h"
#include "bo/gp.h"
#include "bo/hyperparameters.h"
#include "bo/kernel.h"

namespace advbo::attacks {
namespace {

// The rows of the (at most) k smallest observations y, smallest first.
std::vector<int> BestRows(const Eigen::VectorXd& y, int k) {
  std::vector<int> order(y.size());
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(), [&](int a, int b) { return y(a) < y(b); });
  order.resize(std::min<size_t>(k, order.size()));
  return order;
}

// Candidates for the next direction: random vertices and small flips of the best ones.
Eigen::MatrixXd Candidates(const Eigen::MatrixXd& x, const Eigen::VectorXd& y, int dim,
                           bo::Rng& rng) {
  constexpr int kRandom = 500, kBest = 5, kFlips = 100;
  std::bernoulli_distribution coin(0.5);
  std::uniform_int_distribution<int> pick(0, dim - 1), count(1, 3);
  const std::vector<int> order = BestRows(y, kBest);
  const int best = static_cast<int>(order.size());
  Eigen::MatrixXd c(kRandom + best * kFlips, dim);
  for (int i = 0; i < kRandom; ++i)
    for (int k = 0; k < dim; ++k) c(i, k) = coin(rng) ? 1.0 : -1.0;
  for (int b = 0; b < best; ++b)
    for (int f = 0; f < kFlips; ++f) {
      const int row = kRandom + b * kFlips + f;
      c.row(row) = x.row(order[b]);
      for (int n = count(rng); n > 0; --n) c(row, pick(rng)) *= -1;
    }
  return c;
}

// Candidates of the L2 mode: uniform points of the box [-1, 1]^dim and Gaussian moves
// (standard deviation 0.2, clipped to the box) of the best observed ones.
Eigen::MatrixXd BoxCandidates(const Eigen::MatrixXd& x, const Eigen::VectorXd& y, int dim,
                              bo::Rng& rng) {
  constexpr int kRandom = 500, kBest = 5, kMoves = 100;
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  std::normal_distribution<double> g(0.0, 0.2);
  const std::vector<int> order = BestRows(y, kBest);
  const int best = static_cast<int>(order.size());
  Eigen::MatrixXd c(kRandom + best * kMoves, dim);
  for (int i = 0; i < kRandom; ++i)
    for (int k = 0; k < dim; ++k) c(i, k) = u(rng);
  for (int b = 0; b < best; ++b)
    for (int m = 0; m < kMoves; ++m) {
      const int row = kRandom + b * kMoves + m;
      for (int k = 0; k < dim; ++k) c(row, k) = std::clamp(x(order[b], k) + g(rng), -1.0, 1.0);
    }
  return c;
}

// The L2 mode's boundary radius along unit direction v (RayProbe): censored at the best radius
// so far (one query there; only an improving direction is bisected, to a relative 1e-3 or one
// grid step), or, before any, searched outward from `guess` doubling up to 12 times; infinity
// when nothing adversarial was met.
double CensoredL2Radius(RayProbe* probe, const std::vector<double>& v, double best, double guess,
                        bool grid) {
  double max_abs = 0;
  for (double t : v) max_abs = std::max(max_abs, std::abs(t));
  const auto tol = [&](double hi) {
    return std::max(hi * 1e-3, grid ? 1.0 / 255.0 / std::max(max_abs, 1e-12) : 0.0);
  };
  if (std::isfinite(best))
    return probe->Adversarial(v, best) ? probe->Bisect(v, 0, best, tol(best)) : best;
  double lo = 0, hi = guess;
  for (int grow = 0; grow < 12 && !probe->done(); ++grow, lo = hi, hi *= 2)
    if (probe->Adversarial(v, hi)) return probe->Bisect(v, lo, hi, tol(hi));
  return std::numeric_limits<double>::infinity();
}

// The unit L2 direction of box point z [C * s * s]: z as the coefficients of the s x s lowest
// DCT frequencies of each channel (rows_h [s, H], rows_w [s, W]), inverse-transformed. [C H W].
std::vector<double> LowFrequencyDirection(const Eigen::VectorXd& z, int channels,
                                          const Eigen::MatrixXd& rows_h,
                                          const Eigen::MatrixXd& rows_w) {
  const Eigen::Index s = rows_h.rows();
  std::vector<Eigen::MatrixXd> coef(channels, Eigen::MatrixXd(s, s));
  for (int c = 0; c < channels; ++c)
    for (Eigen::Index i = 0; i < s; ++i)
      for (Eigen::Index j = 0; j < s; ++j) coef[c](i, j) = z((c * s + i) * s + j);
  std::vector<double> v;
  InverseDctLowFrequency(coef, rows_h, rows_w, &v);
  double n2 = 0;
  for (double t : v) n2 += t * t;
  if (n2 > 0)
    for (auto& t : v) t /= std::sqrt(n2);
  return v;
}

// The BO stage of both norms (module comment): GP-LCB (Matern-5/2, beta_t = 0.2 D log 2t,
// hyperparameters refit every `fit_every` observations) of the censored boundary radius over
// `dim`-dimensional points, until `bo_budget` queries are used. Point t = 1 is `first`, points
// 2-5 are `draw`n, later ones minimise the LCB over `candidates`; `radius(z, best)` queries the
// oracle (infinity: no boundary met, nothing observed).
struct BoStage {
  int dim = 0;
  Eigen::VectorXd first;
  std::function<void(Eigen::VectorXd*, bo::Rng&)> draw;
  std::function<Eigen::MatrixXd(const Eigen::MatrixXd&, const Eigen::VectorXd&, bo::Rng&)>
      candidates;
  std::function<double(const Eigen::VectorXd&, double)> radius;

  int evaluations = 0;  ///< points tried
  double best = std::numeric_limits<double>::infinity();
  Eigen::VectorXd best_z;  ///< the point of `best` (`first` while none)

  void Run(oracle::QueryOracle& oracle, long bo_budget, int fit_every, bo::Rng& rng,
           const AttackProgress& progress) {
    bo::ExactGP gp(std::make_unique<bo::StationaryKernel>(bo::KernelFamily::kMatern52, dim, false,
                                                          std::vector<int>{}, 1.0, 1.0),
                   1e-4);
    const bo::ExplorationWeight beta{bo::BetaPolicy::kKandasamy2015};
    bo::FitOptions fit;
    fit.restarts = 1;
    Eigen::MatrixXd x(0, dim);
    Eigen::VectorXd y(0), z = first;
    best_z = first;
    while (oracle.remaining() > 0 && !oracle.succeeded() && oracle.queries() < bo_budget) {
      const int t = ++evaluations;
      if (t > 1 && t <= 5) {
        draw(&z, rng);
      } else if (t > 5) {
        const Eigen::MatrixXd cand = candidates(x, y, rng);
        Eigen::VectorXd mean, var;
        gp.Predict(cand, &mean, &var);
        const double b = std::sqrt(beta.Beta(t, dim));
        Eigen::Index arg;
        (mean.array() - b * var.array().max(0).sqrt()).minCoeff(&arg);
        z = cand.row(arg).transpose();
      }
      const double r = radius(z, best);
      if (!std::isfinite(r)) continue;  // no boundary met: nothing to observe
      if (r < best) best = r, best_z = z;
      x.conservativeResize(x.rows() + 1, Eigen::NoChange);
      x.row(x.rows() - 1) = z.transpose();
      y.conservativeResize(y.size() + 1);
      y(y.size() - 1) = r;
      gp.AddObservation(z, r);  // O(N^2) Cholesky row-append, not a refactorisation
      if (x.rows() % fit_every == 0) bo::FitHyperparameters(&gp, fit, rng);
      if (progress) progress(oracle.queries(), oracle.best_objective());
    }
  }
};

// The BO stage's queries: its share of the budget (bo_fraction, else the norm's default), at
// most bo_max_queries.
long BoBudget(const oracle::QueryOracle& oracle, const BoHardLabelOptions& options,
              double default_fraction) {
  const double fraction = options.bo_fraction >= 0 ? options.bo_fraction : default_fraction;
  return std::min(static_cast<long>(fraction * oracle.budget()),
                  static_cast<long>(options.bo_max_queries));
}

// The L2 mode (BoHardLabelAttack's module comment): GP-LCB over low-frequency directions of
// the censored boundary radius, then CGBA's iterations from the best boundary point.
AttackResult RunL2(oracle::QueryOracle& oracle, const BoHardLabelOptions& options, bo::Rng& rng,
                   const AttackProgress& progress) {
  const double t0 = NowSeconds();
  const int c = oracle.model().channels(), h = oracle.model().height(), w = oracle.model().width();
  const int s = std::min({options.side, h, w}), dim = c * s * s;
  const size_t d = oracle.clean().size();
  const Eigen::MatrixXd rows_h = DctRows(h, s), rows_w = DctRows(w, s);
  RayProbe probe(oracle);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  const auto box_point = [&](Eigen::VectorXd* z, bo::Rng& r) {
    for (int k = 0; k < dim; ++k) (*z)(k) = u(r);
  };
  BoStage bo{dim, Eigen::VectorXd(dim), box_point,
             [&](const Eigen::MatrixXd& x, const Eigen::VectorXd& y, bo::Rng& r) {
               return BoxCandidates(x, y, dim, r);
             },
             [&](const Eigen::VectorXd& z, double best) {
               return CensoredL2Radius(&probe, LowFrequencyDirection(z, c, rows_h, rows_w), best,
                                       0.1 * std::sqrt(static_cast<double>(d)),
                                       oracle.pixel_space() == oracle::PixelSpace::k8bit);
             }};
  box_point(&bo.first, rng);
  bo.Run(oracle, BoBudget(oracle, options, 0.1), options.fit_every, rng, progress);
  const double best = bo.best;
  auto stop = [&] { return oracle.remaining() <= 0 || oracle.succeeded(); };
  long cgba_from = -1, hsja_from = -1;
  nlohmann::json finer_from = nlohmann::json::array();
  AttackResult res;
  if (!stop() && std::isfinite(best)) {
    cgba_from = oracle.queries();
    std::vector<float> start(oracle.clean());
    const std::vector<double> v = LowFrequencyDirection(bo.best_z, c, rows_h, rows_w);
    for (size_t k = 0; k < d; ++k)
      start[k] = std::clamp(start[k] + static_cast<float>(best * v[k]), 0.0f, 1.0f);
    std::vector<float> boundary;
    CgbaOptions cgba;
    CgbaIterate(oracle, cgba, std::move(start), rng, progress, options.patience, &boundary);
    while (options.finer && !stop() && cgba.dim_reduction > 1) {  // stalled: a larger subspace
      cgba.dim_reduction = std::max(1.0, cgba.dim_reduction / 2);
      finer_from.push_back(oracle.queries());
      std::vector<float> from = std::move(boundary);
      CgbaIterate(oracle, cgba, std::move(from), rng, progress, options.patience, &boundary);
    }
    if (!stop()) {  // CGBA stalled in the full image too: HopSkipJump
      hsja_from = oracle.queries();
      HsjaIterate(oracle, HsjaOptions{}, std::move(boundary), rng, progress);
    }
    FinishResult(oracle, t0, &res);
  } else if (!stop()) {  // no boundary met along the BO's directions: CGBA's own start
    cgba_from = oracle.queries();
    res = CgbaAttack().Run(oracle, rng, progress);
    res.seconds = NowSeconds() - t0;
  } else {
    FinishResult(oracle, t0, &res);
  }
  res.details["bo_hl_evaluations"] = bo.evaluations;
  res.details["bo_hl_cgba_from"] = cgba_from >= 0 ? nlohmann::json(cgba_from) : nullptr;
  res.details["bo_hl_hsja_from"] = hsja_from >= 0 ? nlohmann::json(hsja_from) : nullptr;
  res.details["bo_hl_finer_from"] = finer_from;
  res.details["bo_hl_radius_after_bo"] = std::isfinite(best) ? nlohmann::json(best) : nullptr;
  return res;
}

}  // namespace

std::vector<float> UpsampleSigns(const Eigen::VectorXd& z, int channels, int height, int width,
                                 int side) {
  std::vector<float> d(static_cast<size_t>(channels) * height * width);
  for (int c = 0; c < channels; ++c)
    for (int i = 0; i < height; ++i)
      for (int j = 0; j < width; ++j)
        d[(static_cast<size_t>(c) * height + i) * width + j] = static_cast<float>(
            z((static_cast<Eigen::Index>(c) * side + i * side / height) * side + j * side / width));
  return d;
}

void BoHardLabelOptions::Validate(const std::string& name) const {
  if (side < 1 || side > 64)
    throw std::invalid_argument("attack '" + name + "': side must be in [1, 64]");
  if (!(bo_fraction == -1 || (bo_fraction >= 0 && bo_fraction <= 1)))
    throw std::invalid_argument("attack '" + name +
                                "': bo_fraction must be in [0, 1] (or -1, the norm's default)");
  if (bo_max_queries < 0)
    throw std::invalid_argument("attack '" + name + "': bo_max_queries must be >= 0");
  if (patience < 0) throw std::invalid_argument("attack '" + name + "': patience must be >= 0");
  if (fit_every < 1) throw std::invalid_argument("attack '" + name + "': fit_every must be >= 1");
}

BoHardLabelAttack::BoHardLabelAttack(BoHardLabelOptions options, std::string name)
    : LabelAttack(std::move(name), {oracle::Norm::kLinf, oracle::Norm::kL2}), options_(options) {
  options_.Validate(this->name());
}

AttackResult BoHardLabelAttack::Run(oracle::QueryOracle& oracle, bo::Rng& rng,
                                    const AttackProgress& progress) const {
  if (oracle.norm() == oracle::Norm::kL2) return RunL2(oracle, options_, rng, progress);
  const double t0 = NowSeconds();
  const int c = oracle.model().channels(), h = oracle.model().height(), w = oracle.model().width();
  const int s = std::min({options_.side, h, w}), dim = c * s * s;
  RaySearch search(oracle, 1e-3);
  BoStage bo{dim, Eigen::VectorXd::Ones(dim),  // the first point: RayS' start
             [&](Eigen::VectorXd* z, bo::Rng& r) {
               std::bernoulli_distribution coin(0.5);
               for (int k = 0; k < dim; ++k) (*z)(k) = coin(r) ? 1.0 : -1.0;
             },
             [&](const Eigen::MatrixXd& x, const Eigen::VectorXd& y, bo::Rng& r) {
               return Candidates(x, y, dim, r);
             },
             [&](const Eigen::VectorXd& z, double best) {
               return search.Search(UpsampleSigns(z, c, h, w, s), best);
             }};
  bo.Run(oracle, BoBudget(oracle, options_, 0.3), options_.fit_every, rng, progress);
  double best = bo.best;
  auto stop = [&] { return oracle.remaining() <= 0 || oracle.succeeded(); };
  const double after_bo = best;
  std::vector<float> d = UpsampleSigns(bo.best_z, c, h, w, s);
  if (!stop()) {
    if (!std::isfinite(best)) best = search.Search(d, best);
    best = search.Hierarchical(&d, best, progress, options_.patience);
  }
  long hsja_from = -1;
  if (!stop() && std::isfinite(best)) {
    // RayS stalled (a plateau of sign directions: under 8-bit queries the radius moves in
    // whole grid steps): HopSkipJump's continuous steps from its closest adversarial point.
    hsja_from = oracle.queries();
    std::vector<float> start(oracle.clean());
    for (size_t k = 0; k < start.size(); ++k)
      start[k] = std::clamp(start[k] + static_cast<float>(best) * d[k], 0.0f, 1.0f);
    HsjaIterate(oracle, HsjaOptions{}, std::move(start), rng, progress);
  }
  AttackResult r;
  FinishResult(oracle, t0, &r);
  r.details["bo_hl_evaluations"] = bo.evaluations;
  r.details["bo_hl_hsja_from"] =
      hsja_from >= 0 ? nlohmann::json(hsja_from) : nlohmann::json(nullptr);
  r.details["bo_hl_radius_after_bo"] =
      std::isfinite(after_bo) ? nlohmann::json(after_bo) : nlohmann::json(nullptr);
  return r;
}

}  // namespace advbo::attacks
