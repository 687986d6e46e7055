#include "attacks/bayesopt/bayesopt.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>
#include <stdexcept>

#include "attacks/common/latent.h"
#include "bo/acquisition_optimizer.h"
#include "bo/design.h"

namespace advbo::attacks {

bo::FitOptions BayesOptOptions::DefaultFit() {
  bo::FitOptions f;
  f.restarts = 1;
  f.max_iterations = 30;
  f.lengthscale_min = 0.05;
  f.lengthscale_max = 50.0;
  f.max_points = 150;
  return f;
}

namespace {

// Latents us [n, from*from*c] resized to side `to` (bilinear, attacks/common/latent.h).
Eigen::MatrixXd ResizeAll(const Eigen::MatrixXd& us, int c, int from, int to) {
  Eigen::MatrixXd out(us.rows(), to * to * c);
  for (Eigen::Index i = 0; i < us.rows(); ++i)
    out.row(i) = ResizeLatent(us.row(i).transpose(), c, from, to).transpose();
  return out;
}

// The GP of a d-dimensional latent: additive SE over a random partition into
// min(groups, d) groups (Ru et al. 2020, ADDGP-BO), or one SE kernel.
bo::ExactGP MakeGp(const BayesOptOptions& o, int d, bo::Rng& rng) {
  const int m = std::min(o.groups, d);
  std::unique_ptr<bo::Kernel> k;
  if (o.additive)
    k = std::make_unique<bo::AdditiveKernel>(bo::KernelFamily::kSquaredExponential, d,
                                             bo::RandomPartition(d, m, rng), 2.0, 1.0 / m);
  else
    k = std::make_unique<bo::StationaryKernel>(bo::KernelFamily::kSquaredExponential, d, false,
                                               std::vector<int>{}, 2.0, 1.0);
  return bo::ExactGP(std::move(k), 1e-2);
}

// The latent side whose fitted GP has the largest log marginal likelihood on the initial
// design u0 (at side init_side) with objectives y0 (Ru et al. 2020, Sec. 3.3: learning the
// reduced dimension); each candidate side is clamped to the image by `valid`.
template <typename Valid>
int LearnSide(const BayesOptOptions& o, const Eigen::MatrixXd& u0, const Eigen::VectorXd& y0,
              int init_side, int c, const Valid& valid, int side, bo::Rng& rng) {
  double best_lml = -std::numeric_limits<double>::infinity();
  for (int s : o.candidate_sides) {
    const int sv = valid(s);
    bo::ExactGP g = MakeGp(o, sv * sv * c, rng);
    g.SetData(ResizeAll(u0, c, init_side, sv), y0);
    const double lml = bo::FitHyperparameters(&g, o.fit, rng).log_marginal_likelihood;
    if (lml > best_lml) {
      best_lml = lml;
      side = sv;
    }
  }
  return side;
}

// The next latent of iteration `it`: Add-GP-UCB (additive) or GP-UCB maximised from the
// incumbent.
Eigen::VectorXd NextPoint(const BayesOptOptions& o, const bo::ExactGP& gp, int it,
                          const bo::AddGpUcbOptions& acq, const Eigen::VectorXd& lb,
                          const Eigen::VectorXd& ub, bo::Rng& rng) {
  Eigen::Index ib;
  gp.y().maxCoeff(&ib);
  if (o.additive) return bo::MaximizeAddGpUcb(gp, lb, ub, it, acq, gp.X().row(ib).transpose(), rng);
  bo::UcbAcquisition a(gp, acq.beta.value);
  bo::AcquisitionOptimizerOptions ao;
  ao.num_candidates = 500;
  ao.num_starts = 2;
  ao.max_iterations = 15;
  return bo::MaximizeAcquisition(a, lb, ub, ao, rng, gp.X().row(ib)).x;
}

// After iteration `it`: every decomposition_every iterations a new decomposition (kept only
// when its fitted likelihood is not worse), else every refit_every a hyperparameter refit.
void UpdateModel(const BayesOptOptions& o, int it, int m, bo::ExactGP* gp, bo::Rng& rng) {
  if (o.additive && it % o.decomposition_every == 0) {
    const bo::ExactGP before = *gp;
    const double lml_before = gp->LogMarginalLikelihood();
    bo::SelectDecomposition(gp, bo::KernelFamily::kSquaredExponential, m, o.num_decompositions, rng,
                            o.fit.max_points);
    bo::FitHyperparameters(gp, o.fit, rng);
    if (gp->LogMarginalLikelihood() < lml_before) *gp = before;
  } else if (it % o.refit_every == 0) {
    bo::FitHyperparameters(gp, o.fit, rng);
  }
}

}  // namespace

void BayesOptOptions::Validate() const {
  if (latent_side < 1 || groups < 1 || initial_points < 1 || decomposition_every < 1 ||
      num_decompositions < 1 || refit_every < 1)
    throw std::invalid_argument(
        "BayesOpt: latent_side, groups, initial_points, decomposition_every, "
        "num_decompositions and refit_every must be >= 1");
  if (learn_side && candidate_sides.empty())
    throw std::invalid_argument("BayesOpt: learn_side needs candidate sides");
  for (int s : candidate_sides)
    if (s < 1) throw std::invalid_argument("BayesOpt: candidate sides must be >= 1");
  if (!(sigma_multiplier >= 0)) throw std::invalid_argument("BayesOpt: sigma_multiplier >= 0");
  fit.Validate();
}

AttackResult BayesOptAttack::Run(oracle::QueryOracle& oracle, bo::Rng& rng,
                                 const AttackProgress& progress) const {
  const BayesOptOptions& o = options_;
  o.Validate();
  const double t0 = NowSeconds();
  const int c = oracle.model().channels(), h = oracle.model().height(), w = oracle.model().width();
  LatentQuerier querier(oracle, 1.0);
  auto valid_side = [&](int s) { return std::clamp(s, 1, std::min(h, w)); };
  auto report = [&] {
    if (progress) progress(oracle.queries(), oracle.best_objective());
  };

  // Initial design: Latin hypercube in the (largest candidate) latent space.
  int side = valid_side(o.latent_side);
  const int init_side =
      o.learn_side
          ? valid_side(*std::max_element(o.candidate_sides.begin(), o.candidate_sides.end()))
          : side;
  const int d_init = init_side * init_side * c;
  const int n_init = static_cast<int>(std::min<long>(o.initial_points, oracle.remaining()));
  Eigen::MatrixXd u0 = bo::MakeDesign(bo::DesignKind::kLatinHypercube, n_init,
                                      Eigen::VectorXd::Constant(d_init, -1.0),
                                      Eigen::VectorXd::Constant(d_init, 1.0), rng);
  Eigen::VectorXd y0 = querier.QueryRows(u0, init_side);
  report();
  u0.conservativeResize(y0.size(), Eigen::NoChange);
  if (o.learn_side && y0.size() > 1)
    side = LearnSide(o, u0, y0, init_side, c, valid_side, side, rng);
  const int d = side * side * c;
  const int m = std::min(o.groups, d);
  bo::ExactGP gp = MakeGp(o, d, rng);
  gp.SetData(side == init_side ? u0 : ResizeAll(u0, c, init_side, side), y0);
  if (o.additive && gp.num_data() > 0) {
    bo::SelectDecomposition(&gp, bo::KernelFamily::kSquaredExponential, m, o.num_decompositions,
                            rng, o.fit.max_points);
  }
  if (gp.num_data() > 0) bo::FitHyperparameters(&gp, o.fit, rng);

  bo::AddGpUcbOptions acq;
  acq.beta = bo::ExplorationWeight{bo::BetaPolicy::kConstant,
                                   o.sigma_multiplier * o.sigma_multiplier, 0.1};
  const Eigen::VectorXd lb = Eigen::VectorXd::Constant(d, -1.0),
                        ub = Eigen::VectorXd::Constant(d, 1.0);
  for (int it = 1; oracle.remaining() > 0 && !oracle.succeeded() && gp.num_data() > 0; ++it) {
    const Eigen::VectorXd u = NextPoint(o, gp, it, acq, lb, ub, rng);
    const double y = querier.QueryRows(u.transpose(), side)(0);
    gp.AddObservation(u, y);
    report();
    UpdateModel(o, it, m, &gp, rng);
  }
  AttackResult r;
  FinishResult(oracle, t0, &r);
  r.details["latent_side"] = side;
  return r;
}

}  // namespace advbo::attacks
