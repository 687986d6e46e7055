#include "bo/kernel.h"

#include <tbb/parallel_for.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <sstream>
#include <stdexcept>

#include "bo/enum_names.h"

namespace advbo::bo {
namespace {

constexpr double kSqrt5 = 2.23606797749978969640;
constexpr double kSqrt3 = 1.73205080756887729353;

// Squared Euclidean distances between rows of a [N1, k] and b [N2, k].
Eigen::MatrixXd SqDist(const Eigen::MatrixXd& a, const Eigen::MatrixXd& b) {
  Eigen::MatrixXd d = (-2.0 * a * b.transpose()).eval();
  d.colwise() += a.rowwise().squaredNorm();
  d.rowwise() += b.rowwise().squaredNorm().transpose();
  return d.cwiseMax(0.0);
}

// Same, by explicit differences: exactly 0 for identical rows. Used by the Matérn-1/2
// kernel, whose value depends on sqrt(r^2) and so turns the ~1e-16 round-off of the
// expanded form into ~1e-8 errors on the diagonal.
Eigen::MatrixXd SqDistExact(const Eigen::MatrixXd& a, const Eigen::MatrixXd& b) {
  Eigen::MatrixXd d(a.rows(), b.rows());
  for (Eigen::Index j = 0; j < b.rows(); ++j)
    d.col(j) = (a.rowwise() - b.row(j)).rowwise().squaredNorm();
  return d;
}

Eigen::MatrixXd Columns(const Eigen::MatrixXd& x, const std::vector<int>& cols) {
  Eigen::MatrixXd out(x.rows(), static_cast<Eigen::Index>(cols.size()));
  for (size_t j = 0; j < cols.size(); ++j) out.col(j) = x.col(cols[j]);
  return out;
}

}  // namespace

namespace {
constexpr NamedValue<KernelFamily> kKernelNames[] = {{KernelFamily::kSquaredExponential, "se"},
                                                     {KernelFamily::kMatern12, "matern12"},
                                                     {KernelFamily::kMatern32, "matern32"},
                                                     {KernelFamily::kMatern52, "matern52"}};
}  // namespace

KernelFamily ParseKernelFamily(const std::string& name) {
  return ParseNamed(kKernelNames, name, "kernel");
}

std::string KernelFamilyName(KernelFamily family) { return NameOf(kKernelNames, family); }

double MaternNu(KernelFamily family) {
  switch (family) {
    case KernelFamily::kMatern12:
      return 0.5;
    case KernelFamily::kMatern32:
      return 1.5;
    case KernelFamily::kMatern52:
      return 2.5;
    default:
      return std::numeric_limits<double>::infinity();
  }
}

Eigen::VectorXd Kernel::WeightedGradients(const PairwiseCache& cache,
                                          const Eigen::MatrixXd& w) const {
  std::vector<Eigen::MatrixXd> g;
  GramFromCache(cache, &g);
  Eigen::VectorXd out(static_cast<Eigen::Index>(g.size()));
  for (size_t i = 0; i < g.size(); ++i) out(i) = w.cwiseProduct(g[i]).sum();
  return out;
}

void Kernel::GramThenWeightedGradients(const PairwiseCache& cache, const GramWeights& weights,
                                       Eigen::VectorXd* grad) const {
  const Eigen::MatrixXd w = weights(GramFromCache(cache, nullptr));
  if (grad && w.size() > 0) *grad = WeightedGradients(cache, w);
}

StationaryKernel::StationaryKernel(KernelFamily family, int input_dim, bool ard,
                                   std::vector<int> active_dims, double lengthscale,
                                   double variance)
    : family_(family), input_dim_(input_dim), ard_(ard), active_(std::move(active_dims)) {
  if (input_dim <= 0) throw std::invalid_argument("StationaryKernel: input_dim must be > 0");
  if (active_.empty()) {
    active_.resize(input_dim);
    std::iota(active_.begin(), active_.end(), 0);
  }
  for (int a : active_)
    if (a < 0 || a >= input_dim)
      throw std::invalid_argument("StationaryKernel: active dimension " + std::to_string(a) +
                                  " outside [0, " + std::to_string(input_dim) + ")");
  if (!(lengthscale > 0) || !(variance > 0))
    throw std::invalid_argument("StationaryKernel: lengthscale and variance must be > 0");
  log_ls_ =
      Eigen::VectorXd::Constant(ard ? static_cast<int>(active_.size()) : 1, std::log(lengthscale));
  log_var_ = std::log(variance);
}

Eigen::VectorXd StationaryKernel::LogParams() const {
  Eigen::VectorXd p(NumParams());
  p << log_ls_, log_var_;
  return p;
}

void StationaryKernel::SetLogParams(const Eigen::VectorXd& p) {
  if (p.size() != NumParams())
    throw std::invalid_argument("StationaryKernel::SetLogParams: expected " +
                                std::to_string(NumParams()) + " values, got " +
                                std::to_string(p.size()));
  if (!p.allFinite()) throw std::invalid_argument("StationaryKernel::SetLogParams: non-finite");
  log_ls_ = p.head(log_ls_.size());
  log_var_ = p(p.size() - 1);
}

std::vector<ParamKind> StationaryKernel::ParamKinds() const {
  std::vector<ParamKind> k(log_ls_.size(), ParamKind::kLengthscale);
  k.push_back(ParamKind::kSignalVariance);
  return k;
}

void StationaryKernel::Profile(const Eigen::ArrayXXd& r2, Eigen::ArrayXXd* k,
                               Eigen::ArrayXXd* dk_dr2) const {
  const double s2 = std::exp(log_var_);
  switch (family_) {
    case KernelFamily::kSquaredExponential:
      *k = s2 * (-0.5 * r2).exp();
      if (dk_dr2) *dk_dr2 = -0.5 * (*k);
      break;
    case KernelFamily::kMatern52: {
      Eigen::ArrayXXd r = r2.sqrt();
      Eigen::ArrayXXd e = (-kSqrt5 * r).exp();
      *k = s2 * (1.0 + kSqrt5 * r + (5.0 / 3.0) * r2) * e;
      // d/d(r^2) of the Matérn-5/2 profile: -(5/6) s2 (1 + sqrt5 r) exp(-sqrt5 r).
      if (dk_dr2) *dk_dr2 = (-5.0 / 6.0) * s2 * (1.0 + kSqrt5 * r) * e;
      break;
    }
    case KernelFamily::kMatern32: {
      Eigen::ArrayXXd r = r2.sqrt();
      Eigen::ArrayXXd e = (-kSqrt3 * r).exp();
      *k = s2 * (1.0 + kSqrt3 * r) * e;
      // dk/dr = -3 s2 r exp(-sqrt3 r), so dk/d(r^2) = -(3/2) s2 exp(-sqrt3 r).
      if (dk_dr2) *dk_dr2 = -1.5 * s2 * e;
      break;
    }
    case KernelFamily::kMatern12: {
      Eigen::ArrayXXd r = r2.sqrt();
      *k = s2 * (-r).exp();
      // dk/d(r^2) = -s2 exp(-r) / (2r): unbounded at r = 0, where every caller multiplies
      // it by a factor that vanishes (r^2 or x - x'), so r is floored to keep that product 0.
      if (dk_dr2) *dk_dr2 = -0.5 * (*k) / r.max(1e-150);
      break;
    }
  }
}

Eigen::MatrixXd StationaryKernel::ActiveColumns(const Eigen::MatrixXd& x) const {
  if (x.cols() != input_dim_)
    throw std::invalid_argument("StationaryKernel::ActiveColumns: inputs must have " +
                                std::to_string(input_dim_) + " columns");
  return Columns(x, active_);
}

Eigen::MatrixXd StationaryKernel::EvalOnActive(const Eigen::MatrixXd& a1,
                                               const Eigen::MatrixXd& a2) const {
  const auto m = static_cast<Eigen::Index>(active_.size());
  if (a1.cols() != m || a2.cols() != m)
    throw std::invalid_argument("StationaryKernel::EvalOnActive: inputs must have " +
                                std::to_string(m) + " (active) columns");
  Eigen::ArrayXXd k;
  Profile(ScaledSqDistOnActive(a1, a2).array(), &k, nullptr);
  return k.matrix();
}

Eigen::MatrixXd StationaryKernel::ScaledSqDist(const Eigen::MatrixXd& x1,
                                               const Eigen::MatrixXd& x2) const {
  return ScaledSqDistOnActive(Columns(x1, active_), Columns(x2, active_));
}

Eigen::MatrixXd StationaryKernel::ScaledSqDistOnActive(const Eigen::MatrixXd& a,
                                                       const Eigen::MatrixXd& b) const {
  const bool exact = family_ == KernelFamily::kMatern12;
  if (ard_) {
    // ARD scales each column before the distances (scaled copies); isotropic kernels
    // scale the distances and read a and b in place.
    Eigen::RowVectorXd inv = (-log_ls_).array().exp().matrix().transpose();
    const Eigen::MatrixXd as = a.array().rowwise() * inv.array();
    const Eigen::MatrixXd bs = b.array().rowwise() * inv.array();
    return exact ? SqDistExact(as, bs) : SqDist(as, bs);
  }
  return (exact ? SqDistExact(a, b) : SqDist(a, b)) * std::exp(-2.0 * log_ls_(0));
}

Eigen::MatrixXd StationaryKernel::Eval(const Eigen::MatrixXd& x1, const Eigen::MatrixXd& x2) const {
  if (x1.cols() != input_dim_ || x2.cols() != input_dim_)
    throw std::invalid_argument("StationaryKernel::Eval: inputs must have " +
                                std::to_string(input_dim_) + " columns");
  return EvalOnActive(Columns(x1, active_), Columns(x2, active_));
}

Eigen::VectorXd StationaryKernel::Diag(const Eigen::MatrixXd& x) const {
  return Eigen::VectorXd::Constant(x.rows(), std::exp(log_var_));
}

PairwiseCache StationaryKernel::Precompute(const Eigen::MatrixXd& x) const {
  if (x.cols() != input_dim_)
    throw std::invalid_argument("StationaryKernel::Precompute: wrong number of columns");
  PairwiseCache cache;
  if (ard_) {
    for (int a : active_) {
      Eigen::MatrixXd c = x.col(a);
      cache.push_back(family_ == KernelFamily::kMatern12 ? SqDistExact(c, c) : SqDist(c, c));
    }
  } else {
    Eigen::MatrixXd a = Columns(x, active_);
    cache.push_back(family_ == KernelFamily::kMatern12 ? SqDistExact(a, a) : SqDist(a, a));
  }
  return cache;
}

void StationaryKernel::ProfileFromSqDist(const Eigen::MatrixXd& sq_dist, Eigen::ArrayXXd* r2,
                                         Eigen::ArrayXXd* k, Eigen::ArrayXXd* dk) const {
  if (ard_) throw std::logic_error("ProfileFromSqDist is for isotropic kernels");
  *r2 = sq_dist.array() * std::exp(-2.0 * log_ls_(0));
  Profile(*r2, k, dk);
}

Eigen::Vector2d StationaryKernel::WeightedGradientsFromProfile(const Eigen::ArrayXXd& r2,
                                                               const Eigen::ArrayXXd& k,
                                                               const Eigen::ArrayXXd& dk,
                                                               const Eigen::MatrixXd& w) const {
  if (ard_) throw std::logic_error("WeightedGradientsFromProfile is for isotropic kernels");
  return Eigen::Vector2d((w.array() * (dk * (-2.0) * r2)).sum(), (w.array() * k).sum());
}

Eigen::MatrixXd StationaryKernel::GramFromSqDist(const Eigen::MatrixXd& sq_dist,
                                                 std::vector<Eigen::MatrixXd>* grads) const {
  Eigen::ArrayXXd r2, k, dk;
  ProfileFromSqDist(sq_dist, &r2, &k, grads ? &dk : nullptr);
  if (grads) {
    grads->clear();
    grads->push_back((dk * (-2.0) * r2).matrix());
    grads->push_back(k.matrix());
  }
  return k.matrix();
}

Eigen::MatrixXd StationaryKernel::GramFromCache(const PairwiseCache& cache,
                                                std::vector<Eigen::MatrixXd>* grads) const {
  if (!ard_) return GramFromSqDist(cache[0], grads);
  const Eigen::ArrayXXd r2 = ScaledSqDistFromCache(cache);
  Eigen::ArrayXXd k, dk;
  Profile(r2, &k, grads ? &dk : nullptr);
  if (grads) {
    grads->clear();
    // d r^2 / d log l_j = -2 * (scaled distance along group j).
    if (ard_) {
      for (size_t j = 0; j < cache.size(); ++j)
        grads->push_back((dk * (-2.0 * std::exp(-2.0 * log_ls_(j))) * cache[j].array()).matrix());
    } else {
      grads->push_back((dk * (-2.0) * r2).matrix());
    }
    grads->push_back(k.matrix());  // d k / d log s2 = k
  }
  return k.matrix();
}

Eigen::Vector2d StationaryKernel::WeightedGradientsFromSqDist(const Eigen::MatrixXd& sq_dist,
                                                              const Eigen::MatrixXd& w) const {
  // Same element-wise arithmetic as GramFromSqDist's gradient matrices, fused with the
  // weighted sum (no [N, N] temporaries per parameter).
  Eigen::ArrayXXd r2, k, dk;
  ProfileFromSqDist(sq_dist, &r2, &k, &dk);
  return WeightedGradientsFromProfile(r2, k, dk, w);
}

Eigen::VectorXd StationaryKernel::WeightedGradients(const PairwiseCache& cache,
                                                    const Eigen::MatrixXd& w) const {
  if (!ard_) return WeightedGradientsFromSqDist(cache[0], w);
  Eigen::ArrayXXd k, dk;
  Profile(ScaledSqDistFromCache(cache), &k, &dk);
  return ArdWeightedGradients(cache, k, dk, w);
}

Eigen::ArrayXXd StationaryKernel::ScaledSqDistFromCache(const PairwiseCache& cache, Eigen::Index c0,
                                                        Eigen::Index w) const {
  const Eigen::Index n = cache[0].rows();
  if (w < 0) w = n - c0;
  Eigen::ArrayXXd r2 = cache[0].block(c0, c0, n - c0, w).array() * std::exp(-2.0 * log_ls_(0));
  for (size_t j = 1; j < cache.size(); ++j)
    r2 += cache[j].block(c0, c0, n - c0, w).array() * std::exp(-2.0 * log_ls_(j));
  return r2;
}

Eigen::VectorXd StationaryKernel::ArdWeightedGradients(const PairwiseCache& cache,
                                                       const Eigen::ArrayXXd& k,
                                                       const Eigen::ArrayXXd& dk,
                                                       const Eigen::MatrixXd& w) const {
  Eigen::VectorXd out(NumParams());
  // W .* dk is shared by every lengthscale: d K / d log l_j = dk * (-2 / l_j^2) * D_j.
  for (size_t j = 0; j < cache.size(); ++j)
    out(j) = (w.array() * (dk * (-2.0 * std::exp(-2.0 * log_ls_(j))) * cache[j].array())).sum();
  out(NumParams() - 1) = (w.array() * k).sum();
  return out;
}

void StationaryKernel::GramThenWeightedGradients(const PairwiseCache& cache,
                                                 const GramWeights& weights,
                                                 Eigen::VectorXd* grad) const {
  if (cache[0].rows() >= kLapackMinPoints) {
    LowerGramThenWeightedGradients(cache, weights, grad);
    return;
  }
  // GramFromCache and WeightedGradients with the profile computed once.
  const Eigen::ArrayXXd r2 = ScaledSqDistFromCache(cache);  // one matrix unless ARD
  Eigen::ArrayXXd k, dk;
  Profile(r2, &k, grad ? &dk : nullptr);
  const Eigen::MatrixXd w = weights(Eigen::MatrixXd(k.matrix()));
  if (!grad || w.size() == 0) return;
  *grad = ard_ ? ArdWeightedGradients(cache, k, dk, w)
               : Eigen::VectorXd(WeightedGradientsFromProfile(r2, k, dk, w));
}

void StationaryKernel::LowerGramThenWeightedGradients(const PairwiseCache& cache,
                                                      const GramWeights& weights,
                                                      Eigen::VectorXd* grad) const {
  // Block b: columns [c0, c0 + w) from row c0 down (its diagonal square and everything below
  // it). Pass 1 writes K there; pass 2, after weights, recomputes the block's profile (cheaper
  // than keeping dk/dr2 [N, N] in memory) and sums W_lower .* dK/dtheta into its own column
  // of `partial`. Above the diagonal squares K stays 0 and W_lower is 0.
  constexpr Eigen::Index kBlock = 64;
  const Eigen::Index n = cache[0].rows();
  const Eigen::Index num_blocks = (n + kBlock - 1) / kBlock;
  auto width = [&](Eigen::Index c0) { return std::min(kBlock, n - c0); };
  Eigen::MatrixXd gram = Eigen::MatrixXd::Zero(n, n);
  tbb::parallel_for(Eigen::Index{0}, num_blocks, [&](Eigen::Index b) {
    const Eigen::Index c0 = b * kBlock, w = width(c0);
    Eigen::ArrayXXd k;
    Profile(ScaledSqDistFromCache(cache, c0, w), &k, nullptr);
    gram.block(c0, c0, n - c0, w) = k.matrix();
  });
  const Eigen::MatrixXd wl = weights(std::move(gram));
  if (!grad || wl.size() == 0) return;
  const int p = NumParams();
  Eigen::MatrixXd partial(p, num_blocks);
  tbb::parallel_for(Eigen::Index{0}, num_blocks, [&](Eigen::Index b) {
    const Eigen::Index c0 = b * kBlock, w = width(c0);
    const Eigen::ArrayXXd r2 = ScaledSqDistFromCache(cache, c0, w);
    Eigen::ArrayXXd k, dk;
    Profile(r2, &k, &dk);
    const auto wb = wl.block(c0, c0, n - c0, w).array();
    const Eigen::ArrayXXd wdk = wb * dk;
    // d k / d log l_j = dk/dr2 * (-2 / l_j^2) * D_j (ARD) or dk/dr2 * (-2) * r2 (isotropic).
    if (ard_) {
      for (size_t j = 0; j < cache.size(); ++j)
        partial(j, b) = -2.0 * std::exp(-2.0 * log_ls_(j)) *
                        (wdk * cache[j].block(c0, c0, n - c0, w).array()).sum();
    } else {
      partial(0, b) = -2.0 * (wdk * r2).sum();
    }
    partial(p - 1, b) = (wb * k).sum();  // d k / d log s2 = k
  });
  *grad = partial.rowwise().sum();  // in block order: independent of the thread count
}

Eigen::MatrixXd StationaryKernel::GradX(const Eigen::VectorXd& x, const Eigen::MatrixXd& xs) const {
  Eigen::MatrixXd xr = x.transpose();
  Eigen::ArrayXXd r2 = ScaledSqDist(xr, xs).array();  // [1, N]
  Eigen::ArrayXXd k, dk;
  Profile(r2, &k, &dk);
  Eigen::MatrixXd g = Eigen::MatrixXd::Zero(xs.rows(), input_dim_);
  for (size_t j = 0; j < active_.size(); ++j) {
    const int a = active_[j];
    const double inv_l2 = std::exp(-2.0 * log_ls_(ard_ ? j : 0));
    g.col(a) = (dk.row(0).transpose() * 2.0 * inv_l2 * (x(a) - xs.col(a).array())).matrix();
  }
  return g;
}

std::unique_ptr<Kernel> StationaryKernel::Clone() const {
  return std::make_unique<StationaryKernel>(*this);
}

std::string StationaryKernel::Describe() const {
  std::ostringstream s;
  s << KernelFamilyName(family_) << (ard_ ? "-ARD" : "") << "(dims=" << active_.size()
    << ", lengthscale=";
  for (int i = 0; i < log_ls_.size(); ++i) s << (i ? "," : "") << std::exp(log_ls_(i));
  s << ", variance=" << std::exp(log_var_) << ")";
  return s.str();
}

AdditiveKernel::AdditiveKernel(KernelFamily family, int input_dim,
                               const std::vector<std::vector<int>>& groups, double lengthscale,
                               double variance)
    : input_dim_(input_dim) {
  if (groups.empty()) throw std::invalid_argument("AdditiveKernel: no groups");
  std::vector<char> used(input_dim, 0);
  for (const auto& g : groups) {
    if (g.empty()) throw std::invalid_argument("AdditiveKernel: empty group");
    for (int a : g) {
      if (a < 0 || a >= input_dim)
        throw std::invalid_argument("AdditiveKernel: coordinate " + std::to_string(a) +
                                    " outside [0, " + std::to_string(input_dim) + ")");
      if (used[a])
        throw std::invalid_argument("AdditiveKernel: groups overlap at coordinate " +
                                    std::to_string(a));
      used[a] = 1;
    }
    parts_.emplace_back(family, input_dim, false, g, lengthscale, variance);
  }
}

int AdditiveKernel::NumParams() const { return 2 * num_groups(); }

Eigen::VectorXd AdditiveKernel::LogParams() const {
  Eigen::VectorXd p(NumParams());
  for (int j = 0; j < num_groups(); ++j) p.segment(2 * j, 2) = parts_[j].LogParams();
  return p;
}

void AdditiveKernel::SetLogParams(const Eigen::VectorXd& p) {
  if (p.size() != NumParams())
    throw std::invalid_argument("AdditiveKernel::SetLogParams: expected " +
                                std::to_string(NumParams()) + " values");
  for (int j = 0; j < num_groups(); ++j) parts_[j].SetLogParams(p.segment(2 * j, 2));
}

std::vector<ParamKind> AdditiveKernel::ParamKinds() const {
  std::vector<ParamKind> k;
  for (int j = 0; j < num_groups(); ++j) {
    k.push_back(ParamKind::kLengthscale);
    k.push_back(ParamKind::kSignalVariance);
  }
  return k;
}

Eigen::MatrixXd AdditiveKernel::Eval(const Eigen::MatrixXd& x1, const Eigen::MatrixXd& x2) const {
  Eigen::MatrixXd k = parts_[0].Eval(x1, x2);
  for (int j = 1; j < num_groups(); ++j) k += parts_[j].Eval(x1, x2);
  return k;
}

Eigen::VectorXd AdditiveKernel::Diag(const Eigen::MatrixXd& x) const {
  Eigen::VectorXd d = Eigen::VectorXd::Zero(x.rows());
  for (const auto& p : parts_) d += p.Diag(x);
  return d;
}

PairwiseCache AdditiveKernel::Precompute(const Eigen::MatrixXd& x) const {
  PairwiseCache c;
  for (const auto& p : parts_) c.push_back(p.Precompute(x)[0]);
  return c;
}

Eigen::MatrixXd AdditiveKernel::GramFromCache(const PairwiseCache& cache,
                                              std::vector<Eigen::MatrixXd>* grads) const {
  const Eigen::Index n = cache[0].rows();
  Eigen::MatrixXd k = Eigen::MatrixXd::Zero(n, n);
  if (grads) grads->clear();
  std::vector<Eigen::MatrixXd> g;
  for (int j = 0; j < num_groups(); ++j) {
    k += parts_[j].GramFromSqDist(cache[j], grads ? &g : nullptr);
    if (grads)
      for (auto& m : g) grads->push_back(std::move(m));
  }
  return k;
}

Eigen::VectorXd AdditiveKernel::WeightedGradients(const PairwiseCache& cache,
                                                  const Eigen::MatrixXd& w) const {
  Eigen::VectorXd out(NumParams());
  for (int j = 0; j < num_groups(); ++j)
    out.segment(2 * j, 2) = parts_[j].WeightedGradientsFromSqDist(cache[j], w);
  return out;
}

void AdditiveKernel::GramThenWeightedGradients(const PairwiseCache& cache,
                                               const GramWeights& weights,
                                               Eigen::VectorXd* grad) const {
  // GramFromCache's sum, keeping every group's profile for WeightedGradients.
  const Eigen::Index n = cache[0].rows();
  const int m = num_groups();
  std::vector<Eigen::ArrayXXd> r2(m), k(m), dk(m);
  Eigen::MatrixXd gram = Eigen::MatrixXd::Zero(n, n);
  for (int j = 0; j < m; ++j) {
    parts_[j].ProfileFromSqDist(cache[j], &r2[j], &k[j], grad ? &dk[j] : nullptr);
    gram += k[j].matrix();
  }
  const Eigen::MatrixXd w = weights(std::move(gram));
  if (!grad || w.size() == 0) return;
  grad->resize(NumParams());
  for (int j = 0; j < m; ++j)
    grad->segment(2 * j, 2) = parts_[j].WeightedGradientsFromProfile(r2[j], k[j], dk[j], w);
}

Eigen::MatrixXd AdditiveKernel::GradX(const Eigen::VectorXd& x, const Eigen::MatrixXd& xs) const {
  Eigen::MatrixXd g = parts_[0].GradX(x, xs);
  for (int j = 1; j < num_groups(); ++j) g += parts_[j].GradX(x, xs);
  return g;
}

std::unique_ptr<Kernel> AdditiveKernel::Clone() const {
  return std::make_unique<AdditiveKernel>(*this);
}

std::string AdditiveKernel::Describe() const {
  std::ostringstream s;
  s << "Additive[" << num_groups() << " groups]";
  return s.str();
}

CompositeKernel::CompositeKernel(Op op, std::vector<std::unique_ptr<Kernel>> children)
    : op_(op), children_(std::move(children)) {
  if (children_.empty()) throw std::invalid_argument("CompositeKernel: no child kernels");
  for (const auto& c : children_)
    if (!c) throw std::invalid_argument("CompositeKernel: null child kernel");
}

CompositeKernel::CompositeKernel(const CompositeKernel& o) : Kernel(o), op_(o.op_) {
  for (const auto& c : o.children_) children_.push_back(c->Clone());
}

int CompositeKernel::NumParams() const {
  int n = 0;
  for (const auto& c : children_) n += c->NumParams();
  return n;
}

Eigen::VectorXd CompositeKernel::LogParams() const {
  Eigen::VectorXd p(NumParams());
  int o = 0;
  for (const auto& c : children_) {
    p.segment(o, c->NumParams()) = c->LogParams();
    o += c->NumParams();
  }
  return p;
}

void CompositeKernel::SetLogParams(const Eigen::VectorXd& p) {
  if (p.size() != NumParams())
    throw std::invalid_argument("CompositeKernel::SetLogParams: expected " +
                                std::to_string(NumParams()) + " values, got " +
                                std::to_string(p.size()));
  int o = 0;
  for (auto& c : children_) {
    c->SetLogParams(p.segment(o, c->NumParams()));
    o += c->NumParams();
  }
}

std::vector<ParamKind> CompositeKernel::ParamKinds() const {
  std::vector<ParamKind> k;
  for (const auto& c : children_) {
    auto ck = c->ParamKinds();
    k.insert(k.end(), ck.begin(), ck.end());
  }
  return k;
}

Eigen::MatrixXd CompositeKernel::Eval(const Eigen::MatrixXd& x1, const Eigen::MatrixXd& x2) const {
  Eigen::MatrixXd k = children_[0]->Eval(x1, x2);
  for (size_t i = 1; i < children_.size(); ++i) {
    if (op_ == Op::kSum)
      k += children_[i]->Eval(x1, x2);
    else
      k.array() *= children_[i]->Eval(x1, x2).array();
  }
  return k;
}

Eigen::VectorXd CompositeKernel::Diag(const Eigen::MatrixXd& x) const {
  Eigen::VectorXd d = children_[0]->Diag(x);
  for (size_t i = 1; i < children_.size(); ++i) {
    if (op_ == Op::kSum)
      d += children_[i]->Diag(x);
    else
      d.array() *= children_[i]->Diag(x).array();
  }
  return d;
}

PairwiseCache CompositeKernel::Precompute(const Eigen::MatrixXd& x) const {
  PairwiseCache cache;
  for (const auto& c : children_) {
    PairwiseCache cc = c->Precompute(x);
    for (auto& m : cc) cache.push_back(std::move(m));
  }
  return cache;
}

int CompositeKernel::CacheSize() const {
  int n = 0;
  for (const auto& c : children_) n += c->CacheSize();
  return n;
}

Eigen::MatrixXd CompositeKernel::GramFromCache(const PairwiseCache& cache,
                                               std::vector<Eigen::MatrixXd>* grads) const {
  if (static_cast<int>(cache.size()) != CacheSize())
    throw std::invalid_argument("CompositeKernel::GramFromCache: cache of the wrong kernel");
  std::vector<Eigen::MatrixXd> grams;
  std::vector<std::vector<Eigen::MatrixXd>> child_grads(children_.size());
  size_t o = 0;
  for (size_t i = 0; i < children_.size(); ++i) {
    const int cs = children_[i]->CacheSize();
    PairwiseCache sub(cache.begin() + o, cache.begin() + o + cs);
    o += cs;
    grams.push_back(children_[i]->GramFromCache(sub, grads ? &child_grads[i] : nullptr));
  }
  Eigen::MatrixXd k = grams[0];
  for (size_t i = 1; i < grams.size(); ++i) {
    if (op_ == Op::kSum)
      k += grams[i];
    else
      k.array() *= grams[i].array();
  }
  if (grads) {
    grads->clear();
    for (size_t i = 0; i < children_.size(); ++i) {
      for (auto& g : child_grads[i]) {
        if (op_ == Op::kProduct) {  // d(prod k_j)/d theta_i = dk_i * prod_{j != i} k_j
          for (size_t j = 0; j < grams.size(); ++j)
            if (j != i) g.array() *= grams[j].array();
        }
        grads->push_back(std::move(g));
      }
    }
  }
  return k;
}

Eigen::MatrixXd CompositeKernel::GradX(const Eigen::VectorXd& x, const Eigen::MatrixXd& xs) const {
  if (op_ == Op::kSum) {
    Eigen::MatrixXd g = children_[0]->GradX(x, xs);
    for (size_t i = 1; i < children_.size(); ++i) g += children_[i]->GradX(x, xs);
    return g;
  }
  const Eigen::MatrixXd xr = x.transpose();
  std::vector<Eigen::VectorXd> vals;
  for (const auto& c : children_) vals.push_back(c->Eval(xr, xs).row(0).transpose());
  Eigen::MatrixXd g = Eigen::MatrixXd::Zero(xs.rows(), xs.cols());
  for (size_t i = 0; i < children_.size(); ++i) {
    Eigen::VectorXd others = Eigen::VectorXd::Ones(xs.rows());
    for (size_t j = 0; j < children_.size(); ++j)
      if (j != i) others.array() *= vals[j].array();
    g += (children_[i]->GradX(x, xs).array().colwise() * others.array()).matrix();
  }
  return g;
}

std::unique_ptr<Kernel> CompositeKernel::Clone() const {
  return std::make_unique<CompositeKernel>(*this);
}

std::string CompositeKernel::Describe() const {
  std::ostringstream s;
  s << "(";
  for (size_t i = 0; i < children_.size(); ++i)
    s << (i ? (op_ == Op::kSum ? " + " : " * ") : "") << children_[i]->Describe();
  s << ")";
  return s.str();
}

std::unique_ptr<Kernel> SumOf(const Kernel& a, const Kernel& b) {
  std::vector<std::unique_ptr<Kernel>> c;
  c.push_back(a.Clone());
  c.push_back(b.Clone());
  return std::make_unique<CompositeKernel>(CompositeKernel::Op::kSum, std::move(c));
}

std::unique_ptr<Kernel> ProductOf(const Kernel& a, const Kernel& b) {
  std::vector<std::unique_ptr<Kernel>> c;
  c.push_back(a.Clone());
  c.push_back(b.Clone());
  return std::make_unique<CompositeKernel>(CompositeKernel::Op::kProduct, std::move(c));
}

std::vector<std::vector<int>> RandomPartition(int d, int m, Rng& rng) {
  if (m < 1 || m > d)
    throw std::invalid_argument("RandomPartition: need 1 <= groups (" + std::to_string(m) +
                                ") <= dimension (" + std::to_string(d) + ")");
  std::vector<int> perm(d);
  std::iota(perm.begin(), perm.end(), 0);
  std::shuffle(perm.begin(), perm.end(), rng);
  std::vector<std::vector<int>> groups(m);
  for (int i = 0; i < d; ++i) groups[i % m].push_back(perm[i]);
  for (auto& g : groups) std::sort(g.begin(), g.end());
  return groups;
}

}  // namespace advbo::bo
