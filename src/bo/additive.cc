#include "bo/additive.h"

#include <tbb/parallel_for.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <stdexcept>
#include <string>

#include "bo/hyperparameters.h"
#include "bo/optimize.h"

namespace advbo::bo {
namespace {

const AdditiveKernel& AsAdditive(const ExactGP& gp) {
  const auto* k = dynamic_cast<const AdditiveKernel*>(&gp.kernel());
  if (k == nullptr) throw std::invalid_argument("Add-GP-UCB needs a GP with an AdditiveKernel");
  return *k;
}

// Whether gp has changed only by row-append updates since (n, factorizations, theta, x_last)
// were recorded: same factorisation count and hyperparameters, at least n points, and the
// n-th point still the same (so SetData with other points is not mistaken for growth).
bool OnlyGrown(const ExactGP& gp, Eigen::Index n, long factorizations, const Eigen::VectorXd& theta,
               const Eigen::RowVectorXd& x_last) {
  if (n == 0 || factorizations != gp.num_factorizations() || gp.num_data() < n) return false;
  const Eigen::VectorXd now = gp.LogHyperparameters();
  if (now.size() != theta.size() || now != theta) return false;
  return gp.X().row(n - 1) == x_last;
}

// Refines group j's best candidates `starts` ([d_j] each) by bounded L-BFGS-B on
// mu_j + sqrt_beta sigma_j with its analytic gradient; updates best_z / best when better.
void PolishGroup(const ExactGP& gp, int j, double sqrt_beta, const Eigen::VectorXd& lb,
                 const Eigen::VectorXd& ub, int iterations,
                 const std::vector<Eigen::VectorXd>& starts, Eigen::VectorXd* best_z, double* best,
                 const GpPrecision* precision = nullptr) {
  if (iterations <= 0 || starts.empty()) return;
  const std::vector<int>& dims = AsAdditive(gp).group(j).active_dims();
  const int dj = static_cast<int>(dims.size());
  Eigen::VectorXd zlb(dj), zub(dj);
  for (int i = 0; i < dj; ++i) {
    zlb(i) = lb(dims[i]);
    zub(i) = ub(dims[i]);
  }
  ComponentUcb ucb(gp, j, sqrt_beta, precision);
  GradObjective neg_ucb = [&](const Eigen::VectorXd& z, Eigen::VectorXd* g) {
    const double v = ucb.Value(z, g);
    if (g) *g = -*g;
    return -v;
  };
  for (const Eigen::VectorXd& z0 : starts) {
    BoxedResult r = MinimizeBoxed(neg_ucb, z0, zlb, zub, iterations);
    if (-r.f > *best) {
      *best = -r.f;
      *best_z = r.x;
    }
  }
}

}  // namespace

void ComponentPosterior(const ExactGP& gp, int j, const Eigen::MatrixXd& xs, Eigen::VectorXd* mean,
                        Eigen::VectorXd* var) {
  const AdditiveKernel& k = AsAdditive(gp);
  if (j < 0 || j >= k.num_groups())
    throw std::invalid_argument("ComponentPosterior: group index out of range");
  const StationaryKernel& kj = k.group(j);
  Eigen::VectorXd prior = kj.Diag(xs);
  if (gp.num_data() == 0) {
    if (mean) mean->setZero(xs.rows());
    if (var) *var = prior;
    return;
  }
  Eigen::MatrixXd ks = kj.Eval(gp.X(), xs);  // [N, M]
  if (mean) *mean = ks.transpose() * gp.alpha();
  if (var) {
    gp.cholesky().triangularView<Eigen::Lower>().solveInPlace(ks);
    *var = (prior - ks.colwise().squaredNorm().transpose()).cwiseMax(0.0);
  }
}

ComponentUcb::ComponentUcb(const ExactGP& gp, int j, double sqrt_beta, const GpPrecision* precision)
    : gp_(gp), precision_(precision), sqrt_beta_(sqrt_beta) {
  if (precision_ && !precision_->Matches(gp))
    throw std::invalid_argument("ComponentUcb: the precision cache is not synced to the GP");
  const AdditiveKernel& k = AsAdditive(gp);
  if (j < 0 || j >= k.num_groups())
    throw std::invalid_argument("ComponentUcb: group index out of range");
  if (gp.num_data() < 1) throw std::invalid_argument("ComponentUcb: the GP has no data");
  kj_ = &k.group(j);
  const auto& dims = kj_->active_dims();
  xj_.resize(gp.num_data(), static_cast<Eigen::Index>(dims.size()));
  for (size_t i = 0; i < dims.size(); ++i) xj_.col(i) = gp.X().col(dims[i]);
  inv_l2_ = 1.0 / std::pow(kj_->lengthscales()(0), 2);
}

double ComponentUcb::Value(const Eigen::VectorXd& z, Eigen::VectorXd* grad) const {
  const auto& l = gp_.cholesky();
  const Eigen::Index n = xj_.rows(), dj = xj_.cols();
  // diff = z - x_i per row [N, d_j], column by column (the same values as a row-wise
  // broadcast: -x + z and z - x round identically).
  diff_.resize(n, dj);
  for (Eigen::Index a = 0; a < dj; ++a) diff_.col(a) = (-xj_.col(a)).array() + z(a);
  r2_ = diff_.rowwise().squaredNorm().array() * inv_l2_;
  kj_->Profile(r2_, &kx_, grad ? &dk_ : nullptr);
  const auto k = kx_.matrix().col(0);
  double reduction;  // k^T K^{-1} k
  if (precision_) {
    v_.noalias() = precision_->matrix().selfadjointView<Eigen::Lower>() * k;
    reduction = k.dot(v_);  // v = K^{-1} k already
  } else {
    v_ = l.triangularView<Eigen::Lower>().solve(kx_.matrix());
    reduction = v_.squaredNorm();
  }
  const double m = k.dot(gp_.alpha());
  const double s = std::sqrt(std::max(kj_->variance() - reduction, 1e-12));
  if (grad) {
    if (!precision_) l.triangularView<Eigen::Lower>().transpose().solveInPlace(v_);  // K^{-1} k
    // d k(z, x_i) / dz = dk/dr2_i * 2 (z - x_i) / l^2, so with w = dk/dr2 .* alpha and
    // w' = dk/dr2 .* K^{-1} k:  d mu / dz = 2 diff^T w / l^2,  d s^2 / dz = -4 diff^T w' / l^2,
    // both from one pass over diff ([d_j, N] x [N, 2]).
    w_ = (dk_.col(0) * gp_.alpha().array()).matrix();
    const Eigen::VectorXd dm = 2.0 * inv_l2_ * diff_.transpose() * w_;
    w_ = (dk_.col(0) * v_.array()).matrix();
    const Eigen::VectorXd ds2 = -4.0 * inv_l2_ * diff_.transpose() * w_;
    *grad = dm + sqrt_beta_ * ds2 / (2.0 * s);
  }
  return m + sqrt_beta_ * s;
}

void AddGpUcbOptions::Validate() const {
  if (random_candidates < 0 || local_candidates < 0 || polish_starts < 0 || polish_iterations < 0)
    throw std::invalid_argument(
        "Add-GP-UCB: candidate counts, polish_starts and polish_iterations must be >= 0");
  if (!(vertex_fraction >= 0 && vertex_fraction <= 1))
    throw std::invalid_argument("Add-GP-UCB: vertex_fraction must be in [0, 1]");
  if (!(local_scale > 0)) throw std::invalid_argument("Add-GP-UCB: local_scale must be > 0");
}

Eigen::VectorXd MaximizeAddGpUcb(const ExactGP& gp, const Eigen::VectorXd& lb,
                                 const Eigen::VectorXd& ub, int t, const AddGpUcbOptions& opt,
                                 const Eigen::VectorXd& incumbent, Rng& rng) {
  const AdditiveKernel& k = AsAdditive(gp);
  const Eigen::Index d = gp.X().cols();
  if (lb.size() != d || ub.size() != d || incumbent.size() != d)
    throw std::invalid_argument("MaximizeAddGpUcb: bounds/incumbent must have the GP's dimension");
  if (gp.num_data() < 1) throw std::invalid_argument("MaximizeAddGpUcb: the GP has no data");
  opt.Validate();
  std::uniform_real_distribution<double> unif(0.0, 1.0);
  std::normal_distribution<double> normal(0.0, 1.0);
  Eigen::VectorXd x = incumbent.cwiseMax(lb).cwiseMin(ub);
  const auto& l = gp.cholesky();

  for (int j = 0; j < k.num_groups(); ++j) {
    const StationaryKernel& kj = k.group(j);
    const std::vector<int>& dims = kj.active_dims();
    const int dj = static_cast<int>(dims.size());
    const double sqrt_beta = std::sqrt(std::max(0.0, opt.beta.Beta(t, dj)));
    // Candidate matrix (only the group's columns matter to k_j).
    const int nc = opt.random_candidates + opt.local_candidates + 1;
    Eigen::MatrixXd cand(nc, d);
    cand.rowwise() = x.transpose();
    const int n_vertex = static_cast<int>(std::lround(opt.vertex_fraction * opt.random_candidates));
    for (int c = 0; c < nc - 1; ++c)
      for (int a : dims) {
        const double w = ub(a) - lb(a);
        if (c < n_vertex)
          cand(c, a) = unif(rng) < 0.5 ? lb(a) : ub(a);
        else if (c < opt.random_candidates)
          cand(c, a) = lb(a) + unif(rng) * w;
        else
          cand(c, a) = std::clamp(x(a) + opt.local_scale * w * normal(rng), lb(a), ub(a));
      }
    Eigen::VectorXd mu, var;
    ComponentPosterior(gp, j, cand, &mu, &var);
    Eigen::VectorXd score = Ucb(mu, var, sqrt_beta * sqrt_beta);
    std::vector<int> order(nc);
    for (int c = 0; c < nc; ++c) order[c] = c;
    const int starts = std::min(opt.polish_starts, nc);
    std::partial_sort(order.begin(), order.begin() + std::max(starts, 1), order.end(),
                      [&](int a, int b) { return score(a) > score(b); });
    Eigen::VectorXd best_z(dj);
    for (int i = 0; i < dj; ++i) best_z(i) = cand(order[0], dims[i]);
    double best = score(order[0]);
    std::vector<Eigen::VectorXd> starts_z;
    for (int s = 0; s < starts; ++s) {
      Eigen::VectorXd z0(dj);
      for (int i = 0; i < dj; ++i) z0(i) = cand(order[s], dims[i]);
      starts_z.push_back(z0);
    }

    PolishGroup(gp, j, sqrt_beta, lb, ub, opt.polish_iterations, starts_z, &best_z, &best);
    for (int i = 0; i < dj; ++i) x(dims[i]) = best_z(i);
  }
  return x;
}

std::vector<std::vector<int>> SelectDecomposition(ExactGP* gp, KernelFamily family, int groups,
                                                  int num_partitions, Rng& rng, int max_points) {
  if (gp == nullptr || gp->num_data() < 1)
    throw std::invalid_argument("SelectDecomposition: the GP has no data");
  const int d = static_cast<int>(gp->X().cols());
  double ls = 1.0, var = 1.0;
  if (const auto* k = dynamic_cast<const AdditiveKernel*>(&gp->kernel())) {
    Eigen::VectorXd p = k->LogParams();
    double sl = 0, sv = 0;
    for (int j = 0; j < k->num_groups(); ++j) {
      sl += p(2 * j);
      sv += p(2 * j + 1);
    }
    ls = std::exp(sl / k->num_groups());
    var = std::exp(sv / k->num_groups());
  }
  std::optional<ExactGP> subset;
  if (max_points > 0 && gp->num_data() > max_points) subset = SubsetOf(*gp, max_points, rng);
  const ExactGP* scorer = subset ? &*subset : gp;
  std::vector<std::vector<int>> best_groups;
  double best_lml = -std::numeric_limits<double>::infinity();
  for (int i = 0; i < std::max(1, num_partitions); ++i) {
    auto part = RandomPartition(d, groups, rng);
    AdditiveKernel cand(family, d, part, ls, var / groups);
    const double lml = scorer->LogMarginalLikelihoodWith(cand, gp->noise_variance(),
                                                         cand.Precompute(scorer->X()), nullptr);
    if (lml > best_lml || best_groups.empty()) {
      best_lml = lml;
      best_groups = part;
    }
  }
  gp->SetKernel(std::make_unique<AdditiveKernel>(family, d, best_groups, ls, var / groups));
  return best_groups;
}

}  // namespace advbo::bo

namespace advbo::bo {

AdditiveCandidatePool::AdditiveCandidatePool(const ExactGP& gp) {
  groups_.resize(AsAdditive(gp).num_groups());
}

void AdditiveCandidatePool::Recompute(const ExactGP& gp, Group* g, int j) {
  const Eigen::Index n = gp.num_data(), m = g->zj.rows(), cap = n + 64;
  g->v.resize(cap, m);
  g->vsq.setZero(m);
  g->a.setZero(m);
  g->b.setZero(m);
  if (m == 0 || n == 0) return;
  ComputeColumns(gp, j, g->zj, g->v.topRows(n), &g->vsq, &g->a, &g->b);
}

void AdditiveCandidatePool::ComputeColumns(const ExactGP& gp, int j, const Eigen::MatrixXd& zj,
                                           Eigen::Ref<Eigen::MatrixXd> v, Eigen::VectorXd* vsq,
                                           Eigen::VectorXd* a, Eigen::VectorXd* b) const {
  const StationaryKernel& kj = AsAdditive(gp).group(j);
  v = kj.EvalOnActive(kj.ActiveColumns(gp.X()), zj);  // K_j(X, Z) [N, m]
  gp.cholesky().triangularView<Eigen::Lower>().solveInPlace(v);
  *vsq = v.colwise().squaredNorm().transpose();
  Eigen::MatrixXd ue(v.rows(), 2);
  ue << u_, e_;
  const Eigen::MatrixXd ab = v.transpose() * ue;  // [m, 2]
  *a = ab.col(0);
  *b = ab.col(1);
}

bool AdditiveCandidatePool::SameState(const ExactGP& gp) const {
  return OnlyGrown(gp, n_, factorizations_, theta_, x_last_);
}

void AdditiveCandidatePool::SolveTargets(const ExactGP& gp) {
  const Eigen::Index n = gp.num_data();
  const auto l = gp.cholesky().triangularView<Eigen::Lower>();
  u_ = gp.y().array() - anchor_;
  l.solveInPlace(u_);
  e_ = Eigen::VectorXd::Ones(n);
  l.solveInPlace(e_);
}

void AdditiveCandidatePool::SetCandidates(const ExactGP& gp, int j, const Eigen::MatrixXd& z) {
  if (j < 0 || j >= num_groups())
    throw std::invalid_argument("AdditiveCandidatePool: group index out of range");
  if (z.rows() > 0 && z.cols() != gp.X().cols())
    throw std::invalid_argument("AdditiveCandidatePool: candidates need the GP's dimension");
  SetGroupCandidates(gp, j,
                     z.rows() > 0 ? AsAdditive(gp).group(j).ActiveColumns(z) : Eigen::MatrixXd());
}

void AdditiveCandidatePool::SetGroupCandidates(const ExactGP& gp, int j, Eigen::MatrixXd zj) {
  if (j < 0 || j >= num_groups())
    throw std::invalid_argument("AdditiveCandidatePool: group index out of range");
  const auto dj = static_cast<Eigen::Index>(AsAdditive(gp).group(j).active_dims().size());
  if (zj.rows() > 0 && zj.cols() != dj)
    throw std::invalid_argument("AdditiveCandidatePool: group candidates need the group's " +
                                std::to_string(dj) + " coordinates, got " +
                                std::to_string(zj.cols()));
  Sync(gp);
  groups_[j].zj = std::move(zj);
  Recompute(gp, &groups_[j], j);
  UpdateMean(gp, &groups_[j]);
  columns_computed_ += groups_[j].zj.rows();
}

void AdditiveCandidatePool::CheckGroupCandidates(const ExactGP& gp,
                                                 const std::vector<Eigen::MatrixXd>& zj) const {
  if (static_cast<int>(zj.size()) != num_groups())
    throw std::invalid_argument("AdditiveCandidatePool: " + std::to_string(zj.size()) +
                                " candidate sets for " + std::to_string(num_groups()) + " groups");
  const AdditiveKernel& k = AsAdditive(gp);
  for (int j = 0; j < num_groups(); ++j) {
    const auto dj = static_cast<Eigen::Index>(k.group(j).active_dims().size());
    if (zj[j].rows() > 0 && zj[j].cols() != dj)
      throw std::invalid_argument("AdditiveCandidatePool: group " + std::to_string(j) +
                                  "'s candidates need its " + std::to_string(dj) +
                                  " coordinates, got " + std::to_string(zj[j].cols()));
  }
}

void AdditiveCandidatePool::SetAllGroupCandidates(const ExactGP& gp,
                                                  std::vector<Eigen::MatrixXd> zj) {
  CheckGroupCandidates(gp, zj);
  // The old candidates are dropped before the Sync, which then only updates the targets'
  // solves (the same u, e and anchor as SetGroupCandidates group by group).
  for (auto& g : groups_) g = Group{};
  Sync(gp);
  for (int j = 0; j < num_groups(); ++j) groups_[j].zj = std::move(zj[j]);
  tbb::parallel_for(0, num_groups(), [&](int j) {
    Recompute(gp, &groups_[j], j);
    UpdateMean(gp, &groups_[j]);
  });
  for (const auto& g : groups_) columns_computed_ += g.zj.rows();
}

void AdditiveCandidatePool::UpdateAllGroupCandidates(const ExactGP& gp,
                                                     std::vector<Eigen::MatrixXd> zj) {
  CheckGroupCandidates(gp, zj);
  // A full recomputation is due (refit, refactorisation, new data): every candidate's caches
  // are computed once, as by SetAllGroupCandidates, not the old ones first and the changed
  // ones again.
  if (!SameState(gp)) return SetAllGroupCandidates(gp, std::move(zj));
  Sync(gp);  // the staying rows' caches as of gp
  const Eigen::Index n = gp.num_data();
  std::vector<long> computed(num_groups(), 0);
  tbb::parallel_for(0, num_groups(), [&](int j) {
    Group& g = groups_[j];
    if (zj[j].rows() != g.zj.rows() || n == 0) {
      g.zj = std::move(zj[j]);
      Recompute(gp, &g, j);
      UpdateMean(gp, &g);
      computed[j] = g.zj.rows();
      return;
    }
    std::vector<Eigen::Index> changed;
    for (Eigen::Index c = 0; c < g.zj.rows(); ++c)
      if (zj[j].row(c) != g.zj.row(c)) changed.push_back(c);
    g.zj = std::move(zj[j]);
    if (changed.empty()) return;
    Eigen::MatrixXd znew(static_cast<Eigen::Index>(changed.size()), g.zj.cols());
    for (size_t c = 0; c < changed.size(); ++c) znew.row(c) = g.zj.row(changed[c]);
    Eigen::MatrixXd vnew(n, znew.rows());
    Eigen::VectorXd vsq, a, b;
    ComputeColumns(gp, j, znew, vnew, &vsq, &a, &b);
    for (size_t c = 0; c < changed.size(); ++c) {
      const Eigen::Index col = changed[c];
      g.v.col(col).head(n) = vnew.col(c);
      g.vsq(col) = vsq(c);
      g.a(col) = a(c);
      g.b(col) = b(c);
    }
    UpdateMean(gp, &g);
    computed[j] = static_cast<long>(changed.size());
  });
  for (long c : computed) columns_computed_ += c;
}

void AdditiveCandidatePool::UpdateMean(const ExactGP& gp, Group* g) const {
  // w = L^{-1} y~ = (u - (y_shift - anchor) e) / y_scale, so V^T w = (a - delta b) / y_scale.
  const double delta = gp.y_shift() - anchor_;
  g->mean = (g->a - delta * g->b) / gp.y_scale();
}

void AdditiveCandidatePool::Sync(const ExactGP& gp) {
  if (AsAdditive(gp).num_groups() != num_groups())
    throw std::invalid_argument("AdditiveCandidatePool: the GP's decomposition changed");
  const Eigen::Index n = gp.num_data();
  if (SameState(gp)) {
    // Old targets unchanged (no ReplaceTargets since the last Sync): u and e only gain the
    // new rows' entries (forward substitution), and a, b the new rows' terms.
    const bool same_targets = gp.y().head(n_) == y_;
    const Eigen::MatrixXd& l = gp.cholesky();
    if (same_targets) {
      u_.conservativeResize(n);
      e_.conservativeResize(n);
      for (Eigen::Index r = n_; r < n; ++r) {
        u_(r) = (gp.y()(r) - anchor_ - l.row(r).head(r).dot(u_.head(r))) / l(r, r);
        e_(r) = (1.0 - l.row(r).head(r).dot(e_.head(r))) / l(r, r);
      }
    } else {
      SolveTargets(gp);
    }
    if (n > n_) {
      const Eigen::MatrixXd xnew = gp.X().bottomRows(n - n_);
      // Groups are independent: extended in parallel, each exactly as alone.
      tbb::parallel_for(0, num_groups(), [&](int j) {
        Group& g = groups_[j];
        if (g.zj.rows() == 0) return;
        if (g.v.rows() < n) {  // grow the capacity (64 spare rows at a time)
          Eigen::MatrixXd v2(n + 64, g.zj.rows());
          v2.topRows(n_) = g.v.topRows(n_);
          g.v.swap(v2);
        }
        const StationaryKernel& kj = AsAdditive(gp).group(j);
        const Eigen::MatrixXd knew = kj.EvalOnActive(kj.ActiveColumns(xnew), g.zj);  // [n-n_, M]
        for (Eigen::Index r = n_; r < n; ++r) {
          // One matrix-vector pass over V's old rows per new row: its projection.
          g.v.row(r) = (knew.row(r - n_) - l.row(r).head(r) * g.v.topRows(r)) / l(r, r);
          g.vsq += g.v.row(r).transpose().cwiseAbs2();
          if (same_targets) {
            g.a += u_(r) * g.v.row(r).transpose();
            g.b += e_(r) * g.v.row(r).transpose();
          }
        }
        if (!same_targets) {
          g.a.noalias() = g.v.topRows(n).transpose() * u_;
          g.b.noalias() = g.v.topRows(n).transpose() * e_;
        }
      });
    } else if (!same_targets) {
      for (auto& g : groups_)
        if (g.zj.rows() > 0 && n > 0) g.a.noalias() = g.v.topRows(n).transpose() * u_;
    }
  } else {
    ++recomputes_;
    anchor_ = n > 0 ? gp.y_shift() : 0.0;
    SolveTargets(gp);
    tbb::parallel_for(0, num_groups(), [&](int j) { Recompute(gp, &groups_[j], j); });
    for (const auto& g : groups_) columns_computed_ += g.zj.rows();
  }
  for (auto& g : groups_) UpdateMean(gp, &g);
  n_ = n;
  factorizations_ = gp.num_factorizations();
  theta_ = gp.LogHyperparameters();
  y_ = gp.y();
  if (n > 0) x_last_ = gp.X().row(n - 1);
}

void AdditiveCandidatePool::Posterior(const ExactGP& gp, int j, Eigen::VectorXd* mean,
                                      Eigen::VectorXd* var) const {
  const Group& g = groups_.at(j);
  const StationaryKernel& kj = AsAdditive(gp).group(j);
  if (!SameState(gp) || n_ != gp.num_data())
    throw std::logic_error("AdditiveCandidatePool::Posterior: call Sync after the GP changed");
  if (mean) *mean = g.mean;
  if (var) *var = (Eigen::VectorXd::Constant(g.zj.rows(), kj.variance()) - g.vsq).cwiseMax(0.0);
}

namespace {

// Group j's part of MaximizeAddGpUcbOnPoolsBatch: its coordinates [d_j] of each of the q
// batch points -- point 0 the polished best of the pools' candidates and the incumbent x0's
// own coordinates by the group's UCB, point b >= 1 the b-th best scored one (the last when
// fewer are scored).
std::vector<Eigen::VectorXd> MaximizeGroupOnPools(
    const ExactGP& gp, int j, const Eigen::VectorXd& lb, const Eigen::VectorXd& ub, int t,
    const AddGpUcbOptions& opt, const Eigen::VectorXd& x0,
    const std::vector<const AdditiveCandidatePool*>& pools, int q, const GpPrecision* precision) {
  const std::vector<int>& dims = AsAdditive(gp).group(j).active_dims();
  const int dj = static_cast<int>(dims.size());
  const double sqrt_beta = std::sqrt(std::max(0.0, opt.beta.Beta(t, dj)));
  // Every candidate's score, best first; the incumbent's own coordinates compete too.
  std::vector<std::pair<double, Eigen::VectorXd>> scored;
  {
    Eigen::VectorXd mu, var;
    ComponentPosterior(gp, j, x0.transpose(), &mu, &var);
    Eigen::VectorXd z(dj);
    for (int i = 0; i < dj; ++i) z(i) = x0(dims[i]);
    scored.emplace_back(Ucb(mu, var, sqrt_beta * sqrt_beta)(0), z);
  }
  for (const auto* p : pools) {
    const Eigen::MatrixXd& zj = p->group_candidates(j);
    if (zj.rows() == 0) continue;
    Eigen::VectorXd mu, var;
    p->Posterior(gp, j, &mu, &var);
    const Eigen::VectorXd score = Ucb(mu, var, sqrt_beta * sqrt_beta);
    const int keep = std::max({1, opt.polish_starts, q});
    std::vector<int> order(score.size());
    for (int c = 0; c < score.size(); ++c) order[c] = c;
    const int top = std::min<int>(keep, static_cast<int>(order.size()));
    std::partial_sort(order.begin(), order.begin() + top, order.end(),
                      [&](int a, int b) { return score(a) > score(b); });
    for (int s = 0; s < top; ++s)
      scored.emplace_back(score(order[s]), zj.row(order[s]).transpose());
  }
  std::stable_sort(scored.begin(), scored.end(),
                   [](const auto& a, const auto& b) { return a.first > b.first; });
  Eigen::VectorXd best_z = scored[0].second;
  double best = scored[0].first;
  std::vector<Eigen::VectorXd> starts;
  for (int s = 0; s < std::min<int>(opt.polish_starts, static_cast<int>(scored.size())); ++s)
    starts.push_back(scored[s].second);
  PolishGroup(gp, j, sqrt_beta, lb, ub, opt.polish_iterations, starts, &best_z, &best, precision);
  std::vector<Eigen::VectorXd> out(q);
  out[0] = best_z;
  for (int b = 1; b < q; ++b) out[b] = scored[std::min<size_t>(b, scored.size() - 1)].second;
  return out;
}

}  // namespace

Eigen::VectorXd MaximizeAddGpUcbOnPools(const ExactGP& gp, const Eigen::VectorXd& lb,
                                        const Eigen::VectorXd& ub, int t,
                                        const AddGpUcbOptions& opt,
                                        const Eigen::VectorXd& incumbent,
                                        const std::vector<const AdditiveCandidatePool*>& pools,
                                        const GpPrecision* precision) {
  return MaximizeAddGpUcbOnPoolsBatch(gp, lb, ub, t, opt, incumbent, pools, 1, precision)[0];
}

std::vector<Eigen::VectorXd> MaximizeAddGpUcbOnPoolsBatch(
    const ExactGP& gp, const Eigen::VectorXd& lb, const Eigen::VectorXd& ub, int t,
    const AddGpUcbOptions& opt, const Eigen::VectorXd& incumbent,
    const std::vector<const AdditiveCandidatePool*>& pools, int q, const GpPrecision* precision) {
  const AdditiveKernel& k = AsAdditive(gp);
  const Eigen::Index d = gp.X().cols();
  if (lb.size() != d || ub.size() != d || incumbent.size() != d)
    throw std::invalid_argument(
        "MaximizeAddGpUcbOnPools: bounds/incumbent must have the GP's dimension");
  if (gp.num_data() < 1) throw std::invalid_argument("MaximizeAddGpUcbOnPools: the GP has no data");
  if (q < 1) throw std::invalid_argument("MaximizeAddGpUcbOnPools: batch size must be >= 1");
  opt.Validate();
  for (const auto* p : pools)
    if (p == nullptr || p->num_groups() != k.num_groups())
      throw std::invalid_argument("MaximizeAddGpUcbOnPools: a pool of another decomposition");
  const Eigen::VectorXd x0 = incumbent.cwiseMax(lb).cwiseMin(ub);
  // The acquisition is a sum of per-group terms on disjoint coordinates (eq. 5.4), so the
  // groups are maximised independently and in parallel; each group's result is the same as
  // in a serial pass. chosen[j][b]: group j's coordinates of batch point b.
  std::vector<std::vector<Eigen::VectorXd>> chosen(k.num_groups());
  tbb::parallel_for(0, k.num_groups(), [&](int j) {
    chosen[j] = MaximizeGroupOnPools(gp, j, lb, ub, t, opt, x0, pools, q, precision);
  });
  std::vector<Eigen::VectorXd> batch(q, x0);
  for (int j = 0; j < k.num_groups(); ++j) {
    const std::vector<int>& dims = k.group(j).active_dims();
    for (int b = 0; b < q; ++b)
      for (size_t i = 0; i < dims.size(); ++i) batch[b](dims[i]) = chosen[j][b](i);
  }
  return batch;
}

bool GpPrecision::Matches(const ExactGP& gp) const {
  return n_ == gp.num_data() && OnlyGrown(gp, n_, factorizations_, theta_, x_last_);
}

void GpPrecision::Sync(const ExactGP& gp) {
  const Eigen::Index n = gp.num_data();
  if (n < 1) throw std::invalid_argument("GpPrecision: the GP has no data");
  const Eigen::MatrixXd& l = gp.cholesky();
  const bool grown = OnlyGrown(gp, n_, factorizations_, theta_, x_last_);
  if (grown) {
    // K_new = [[K, k], [k^T, kappa]], Schur complement s = kappa - k^T K^{-1} k = L(r, r)^2,
    // u = K^{-1} k = L^{-T} l_r:  K_new^{-1} = [[K^{-1} + u u^T / s, -u / s], [-u^T / s, 1 / s]].
    for (Eigen::Index r = n_; r < n; ++r) {
      const Eigen::VectorXd u =
          l.topLeftCorner(r, r).triangularView<Eigen::Lower>().transpose().solve(
              l.row(r).head(r).transpose());
      const double inv_s = 1.0 / (l(r, r) * l(r, r));
      k_inv_.conservativeResize(r + 1, r + 1);
      k_inv_.topLeftCorner(r, r).noalias() += inv_s * u * u.transpose();
      k_inv_.col(r).head(r) = -inv_s * u;
      k_inv_.row(r).head(r) = -inv_s * u.transpose();
      k_inv_(r, r) = inv_s;
    }
  } else {
    ++recomputes_;
    const Eigen::MatrixXd l_inv =
        l.triangularView<Eigen::Lower>().solve(Eigen::MatrixXd::Identity(n, n));
    k_inv_.noalias() = l_inv.transpose() * l_inv;
  }
  n_ = n;
  factorizations_ = gp.num_factorizations();
  theta_ = gp.LogHyperparameters();
  x_last_ = gp.X().row(n - 1);
}

}  // namespace advbo::bo
