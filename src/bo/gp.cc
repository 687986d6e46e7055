#include "bo/gp.h"

#include <tbb/parallel_for.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

// LAPACK (Debian's liblapack.so.3: OpenBLAS's multithreaded build once libopenblas0-pthread
// is installed, as tools/setup.sh does): Cholesky factor and inverse from it.
extern "C" {
void dpotrf_(const char* uplo, const int* n, double* a, const int* lda, int* info);
void dpotri_(const char* uplo, const int* n, double* a, const int* lda, int* info);
}

namespace advbo::bo {
namespace {
constexpr double kLog2Pi = 1.8378770664093453;

// In place: the lower Cholesky factor of the SPD matrix a [n, n] by LAPACK dpotrf (the upper
// triangle is zeroed). False when a is not numerically positive definite (a is then garbage).
bool LapackCholesky(Eigen::MatrixXd* a) {
  const int n = static_cast<int>(a->rows()), lda = n;
  int info = 0;
  dpotrf_("L", &n, a->data(), &lda, &info);
  if (info != 0) return false;
  a->triangularView<Eigen::StrictlyUpper>().setZero();
  return true;
}

// In place: K's lower Cholesky factor l [n, n] (zeros above the diagonal) becomes the lower
// triangle of K^{-1} by LAPACK dpotri (2n^3/3 flops instead of the 2n^3 of two triangular
// solves against the identity); the zeros above stay.
void LapackLowerInverseFromCholesky(Eigen::MatrixXd* l) {
  const int n = static_cast<int>(l->rows()), lda = n;
  int info = 0;
  dpotri_("L", &n, l->data(), &lda, &info);
  if (info != 0)
    throw NumericalError("dpotri: singular Cholesky factor (info " + std::to_string(info) + ")");
}
}  // namespace

Eigen::MatrixXd CholeskyWithJitter(const Eigen::MatrixXd& a, double* jitter_used) {
  const Eigen::Index n = a.rows();
  const double scale = n > 0 ? std::max(a.diagonal().mean(), 1e-300) : 1.0;
  double jitter = 0.0;
  for (int attempt = 0; attempt < 10; ++attempt) {
    Eigen::MatrixXd m = a;
    if (jitter > 0) m.diagonal().array() += jitter;
    Eigen::LLT<Eigen::MatrixXd> llt(m);
    if (llt.info() == Eigen::Success && llt.matrixLLT().diagonal().allFinite() &&
        (llt.matrixLLT().diagonal().array() > 0).all()) {
      if (jitter_used) *jitter_used = jitter;
      return llt.matrixL();
    }
    jitter = jitter == 0.0 ? 1e-10 * scale : jitter * 10.0;
    if (jitter > 1e-2 * scale) break;
  }
  throw NumericalError("GP covariance matrix of size " + std::to_string(n) +
                       " is not positive definite even with jitter " + std::to_string(jitter));
}

ExactGP::ExactGP(std::unique_ptr<Kernel> kernel, double noise_variance, bool standardize)
    : kernel_(std::move(kernel)), noise_(noise_variance), standardize_(standardize) {
  if (!kernel_) throw std::invalid_argument("ExactGP: null kernel");
  if (!(noise_variance >= 0))
    throw std::invalid_argument("ExactGP: noise variance must be >= 0 (0 = noise-free)");
}

ExactGP::ExactGP(const ExactGP& o)
    : kernel_(o.kernel_->Clone()),
      noise_(o.noise_),
      standardize_(o.standardize_),
      x_(o.x_),
      y_(o.y_),
      l_(o.l_),
      alpha_(o.alpha_),
      jitter_(o.jitter_),
      y_shift_(o.y_shift_),
      y_scale_(o.y_scale_),
      frozen_standardization_(o.frozen_standardization_),
      num_factorizations_(o.num_factorizations_) {}

ExactGP& ExactGP::operator=(const ExactGP& o) {
  if (this != &o) {
    kernel_ = o.kernel_->Clone();
    noise_ = o.noise_;
    standardize_ = o.standardize_;
    x_ = o.x_;
    y_ = o.y_;
    l_ = o.l_;
    alpha_ = o.alpha_;
    jitter_ = o.jitter_;
    y_shift_ = o.y_shift_;
    y_scale_ = o.y_scale_;
    frozen_standardization_ = o.frozen_standardization_;
    num_factorizations_ = o.num_factorizations_;
  }
  return *this;
}

void ExactGP::UpdateStandardization() {
  if (frozen_standardization_) return;  // a fantasy copy keeps the real data's shift/scale
  const Eigen::Index n = y_.size();
  if (!standardize_ || n == 0) {
    y_shift_ = 0.0;
    y_scale_ = 1.0;
    return;
  }
  y_shift_ = y_.mean();
  const double var = n > 1 ? (y_.array() - y_shift_).square().sum() / (n - 1) : 0.0;
  y_scale_ = var > 1e-24 ? std::sqrt(var) : 1.0;
}

void ExactGP::SolveAlpha() {
  Eigen::VectorXd yt = (y_.array() - y_shift_) / y_scale_;
  alpha_ = l_.triangularView<Eigen::Lower>().solve(yt);
  l_.triangularView<Eigen::Lower>().transpose().solveInPlace(alpha_);
}

void ExactGP::SetData(const Eigen::MatrixXd& x, const Eigen::VectorXd& y) {
  if (x.rows() != y.size())
    throw std::invalid_argument("ExactGP::SetData: X has " + std::to_string(x.rows()) +
                                " rows but y has " + std::to_string(y.size()) + " values");
  if (!y.allFinite()) throw NumericalError("ExactGP::SetData: non-finite observation");
  if (!x.allFinite()) throw NumericalError("ExactGP::SetData: non-finite input");
  x_ = x;
  y_ = y;
  Refactorize();
}

void ExactGP::Refactorize() {
  UpdateStandardization();
  if (x_.rows() == 0) {
    l_.resize(0, 0);
    alpha_.resize(0);
    return;
  }
  Eigen::MatrixXd k = kernel_->Eval(x_, x_);
  k.diagonal().array() += noise_;
  l_ = CholeskyWithJitter(k, &jitter_);
  ++num_factorizations_;
  SolveAlpha();
}

void ExactGP::AddObservation(const Eigen::VectorXd& x, double y) {
  if (x_.rows() > 0 && x.size() != x_.cols())
    throw std::invalid_argument("ExactGP::AddObservation: point has " + std::to_string(x.size()) +
                                " coordinates, expected " + std::to_string(x_.cols()));
  if (!std::isfinite(y)) throw NumericalError("ExactGP::AddObservation: non-finite observation");
  const Eigen::Index n = x_.rows();
  if (n == 0) {
    SetData(x.transpose(), Eigen::VectorXd::Constant(1, y));
    return;
  }
  Eigen::MatrixXd xr = x.transpose();
  Eigen::VectorXd kx = kernel_->Eval(x_, xr).col(0);
  const double kxx = kernel_->Diag(xr)(0) + noise_ + jitter_;
  Eigen::VectorXd l = l_.triangularView<Eigen::Lower>().solve(kx);
  const double d2 = kxx - l.squaredNorm();
  x_.conservativeResize(n + 1, Eigen::NoChange);
  x_.row(n) = xr;
  y_.conservativeResize(n + 1);
  y_(n) = y;
  if (!(d2 > 1e-10 * kxx)) {  // pivot lost to round-off: refactorise (with jitter if needed)
    Refactorize();
    return;
  }
  l_.conservativeResize(n + 1, n + 1);
  l_.col(n).setZero();
  l_.row(n).head(n) = l.transpose();
  l_(n, n) = std::sqrt(d2);
  UpdateStandardization();
  SolveAlpha();
}

void ExactGP::ReplaceTargets(Eigen::Index from, const Eigen::VectorXd& y) {
  if (from < 0 || from + y.size() > y_.size())
    throw std::invalid_argument("ExactGP::ReplaceTargets: values " + std::to_string(from) + ".." +
                                std::to_string(from + y.size()) + " outside the " +
                                std::to_string(y_.size()) + " observations");
  if (!y.allFinite()) throw NumericalError("ExactGP::ReplaceTargets: non-finite observation");
  if (y.size() == 0) return;
  y_.segment(from, y.size()) = y;
  UpdateStandardization();
  SolveAlpha();
}

void ExactGP::Predict(const Eigen::MatrixXd& xs, Eigen::VectorXd* mean,
                      Eigen::VectorXd* var) const {
  if (x_.rows() == 0) {
    Eigen::VectorXd prior = kernel_->Diag(xs);
    if (mean) *mean = Eigen::VectorXd::Constant(xs.rows(), y_shift_);
    if (var) *var = prior * y_scale_ * y_scale_;
    return;
  }
  // Large query sets are processed in blocks of ~512 KiB of cross-covariance, so temporaries
  // stay in cache and are reused instead of touching fresh pages (measured 7x faster for
  // 10^4 points at N = 500, d = 10), and blocks run in parallel; each point's result does
  // not depend on the blocking or the thread count.
  const Eigen::Index m = xs.rows();
  const Eigen::Index block = std::max<Eigen::Index>(64, (Eigen::Index{1} << 16) / x_.rows());
  if (m <= block) {
    PredictBlock(xs, mean, var);
    return;
  }
  if (mean) mean->resize(m);
  if (var) var->resize(m);
  // Blocks are independent: predict them in parallel (TBB); results do not depend on the
  // number of threads.
  const Eigen::Index nblocks = (m + block - 1) / block;
  tbb::parallel_for(Eigen::Index{0}, nblocks, [&](Eigen::Index i) {
    const Eigen::Index s = i * block, b = std::min(block, m - s);
    Eigen::VectorXd mb, vb;
    PredictBlock(xs.middleRows(s, b), mean ? &mb : nullptr, var ? &vb : nullptr);
    if (mean) mean->segment(s, b) = mb;
    if (var) var->segment(s, b) = vb;
  });
}

void ExactGP::PredictBlock(const Eigen::MatrixXd& xs, Eigen::VectorXd* mean,
                           Eigen::VectorXd* var) const {
  Eigen::MatrixXd ks = kernel_->Eval(x_, xs);  // [N, M]
  if (mean) *mean = ((ks.transpose() * alpha_).array() * y_scale_ + y_shift_).matrix();
  if (var) {
    Eigen::VectorXd prior = kernel_->Diag(xs);
    l_.triangularView<Eigen::Lower>().solveInPlace(ks);
    *var = ((prior - ks.colwise().squaredNorm().transpose()).array().max(0.0) * y_scale_ * y_scale_)
               .matrix();
  }
}

void ExactGP::PredictJoint(const Eigen::MatrixXd& xs, Eigen::VectorXd* mean,
                           Eigen::MatrixXd* cov) const {
  Eigen::MatrixXd prior = kernel_->Eval(xs, xs);
  const double s2 = y_scale_ * y_scale_;
  if (x_.rows() == 0) {
    *mean = Eigen::VectorXd::Constant(xs.rows(), y_shift_);
    *cov = prior * s2;
    return;
  }
  Eigen::MatrixXd ks = kernel_->Eval(x_, xs);
  *mean = ((ks.transpose() * alpha_).array() * y_scale_ + y_shift_).matrix();
  l_.triangularView<Eigen::Lower>().solveInPlace(ks);
  *cov = (prior - ks.transpose() * ks) * s2;
}

void ExactGP::PredictWithGradient(const Eigen::MatrixXd& xs, Eigen::VectorXd* mean,
                                  Eigen::VectorXd* var, Eigen::MatrixXd* dmean,
                                  Eigen::MatrixXd* dvar) const {
  const Eigen::Index m = xs.rows(), d = xs.cols();
  if (x_.rows() == 0) {
    Predict(xs, mean, var);
    if (dmean) dmean->setZero(m, d);
    if (dvar) dvar->setZero(m, d);
    return;
  }
  if (d != x_.cols())
    throw std::invalid_argument("ExactGP::PredictWithGradient: points have " + std::to_string(d) +
                                " coordinates, expected " + std::to_string(x_.cols()));
  const double s2 = y_scale_ * y_scale_;
  Eigen::MatrixXd ks = kernel_->Eval(x_, xs);  // [N, M]
  if (mean) *mean = ((ks.transpose() * alpha_).array() * y_scale_ + y_shift_).matrix();
  Eigen::MatrixXd w;  // K^{-1} k(X, x) per column, needed for the variance gradient
  if (var || dvar) {
    l_.triangularView<Eigen::Lower>().solveInPlace(ks);  // ks <- L^{-1} k
    if (var)
      *var = ((kernel_->Diag(xs) - ks.colwise().squaredNorm().transpose()).array().max(0.0) * s2)
                 .matrix();
    if (dvar) {
      w = std::move(ks);
      l_.triangularView<Eigen::Lower>().transpose().solveInPlace(w);
    }
  }
  if (dmean) dmean->resize(m, d);
  if (dvar) dvar->resize(m, d);
  if (!dmean && !dvar) return;
  for (Eigen::Index i = 0; i < m; ++i) {
    const Eigen::MatrixXd g = kernel_->GradX(xs.row(i).transpose(), x_);  // [N, D]
    if (dmean) dmean->row(i) = (g.transpose() * alpha_).transpose() * y_scale_;
    if (dvar) dvar->row(i) = (g.transpose() * w.col(i)).transpose() * (-2.0 * s2);
  }
}

Eigen::MatrixXd ExactGP::SamplePosterior(const Eigen::MatrixXd& xs, int num_samples,
                                         Rng& rng) const {
  if (num_samples < 1) throw std::invalid_argument("SamplePosterior: num_samples must be >= 1");
  Eigen::VectorXd mu;
  Eigen::MatrixXd cov;
  PredictJoint(xs, &mu, &cov);
  cov = 0.5 * (cov + cov.transpose());
  double jitter = 0.0;
  const Eigen::MatrixXd l = CholeskyWithJitter(cov, &jitter);
  std::normal_distribution<double> n01(0.0, 1.0);
  Eigen::MatrixXd z =
      Eigen::MatrixXd::NullaryExpr(xs.rows(), num_samples, [&]() { return n01(rng); });
  Eigen::MatrixXd f = l * z;
  f.colwise() += mu;
  return f;
}

ExactGP ExactGP::Fantasize(const Eigen::MatrixXd& xs, const Eigen::VectorXd& ys) const {
  if (xs.rows() != ys.size())
    throw std::invalid_argument("ExactGP::Fantasize: " + std::to_string(xs.rows()) +
                                " points but " + std::to_string(ys.size()) + " values");
  ExactGP g(*this);
  g.frozen_standardization_ = true;
  for (Eigen::Index i = 0; i < xs.rows(); ++i) g.AddObservation(xs.row(i).transpose(), ys(i));
  return g;
}

double ExactGP::LogMarginalLikelihood(Eigen::VectorXd* grad) const {
  return LogMarginalLikelihoodAt(LogHyperparameters(), kernel_->Precompute(x_), grad);
}

double ExactGP::LogMarginalLikelihoodAt(const Eigen::VectorXd& theta, const PairwiseCache& cache,
                                        Eigen::VectorXd* grad) const {
  const int p = kernel_->NumParams();
  if (theta.size() != p + 1)
    throw std::invalid_argument("ExactGP::LogMarginalLikelihoodAt: expected " +
                                std::to_string(p + 1) + " log-hyperparameters");
  std::unique_ptr<Kernel> k = kernel_->Clone();
  k->SetLogParams(theta.head(p));
  return LogMarginalLikelihoodWith(*k, std::exp(theta(p)), cache, grad);
}

double ExactGP::LogMarginalLikelihoodWith(const Kernel& k, double noise, const PairwiseCache& cache,
                                          Eigen::VectorXd* grad) const {
  const int p = k.NumParams();
  const Eigen::Index n = x_.rows();
  if (n == 0) throw std::invalid_argument("ExactGP: log marginal likelihood needs data");
  // The kernel hands over K, gets back W = a a^T - K^{-1} for the gradient, and reuses its
  // element-wise work of K for sum(W .* dK/dtheta) (Kernel::GramThenWeightedGradients).
  double lml = 0.0, w_trace = 0.0;
  bool failed = false;
  Eigen::VectorXd kernel_grad;
  k.GramThenWeightedGradients(
      cache,
      [&](Eigen::MatrixXd&& kmat) -> Eigen::MatrixXd {
        kmat.diagonal().array() += noise;
        double jitter = 0.0;
        Eigen::MatrixXd l;
        // Large n: LAPACK's blocked, multithreaded factorisation and inverse
        // (kLapackMinPoints; below it Eigen's, so the BO loops' and BOS^2's small GPs give
        // the same results as before). A matrix LAPACK finds indefinite falls back to the
        // jittered Eigen path.
        const bool lapack = n >= kLapackMinPoints;
        if (lapack) {
          l = kmat;
          if (!LapackCholesky(&l)) l.resize(0, 0);
        }
        if (l.size() == 0) {
          try {
            l = CholeskyWithJitter(kmat, &jitter);
          } catch (const NumericalError&) {
            failed = true;
            return {};
          }
        }
        Eigen::VectorXd yt = (y_.array() - y_shift_) / y_scale_;
        Eigen::VectorXd a = l.triangularView<Eigen::Lower>().solve(yt);
        const double fit = a.squaredNorm();
        l.triangularView<Eigen::Lower>().transpose().solveInPlace(a);
        lml =
            -0.5 * fit - l.diagonal().array().log().sum() - 0.5 * static_cast<double>(n) * kLog2Pi;
        if (!grad) return {};
        // dLML/dtheta_p = 1/2 tr((a a^T - K^{-1}) dK/dtheta_p)   (RW06 eq. 5.9)
        if (lapack) {
          // W in lower form (Kernel::GramThenWeightedGradients): K^{-1}'s lower triangle in
          // place of l, then column by column 2 (a a^T - K^{-1}) below the diagonal and
          // a_i^2 - K^{-1}_ii on it; l's zeros above the diagonal stay.
          LapackLowerInverseFromCholesky(&l);
          for (Eigen::Index c = 0; c < n; ++c) {
            l(c, c) = a(c) * a(c) - l(c, c);
            l.col(c).tail(n - c - 1) = 2.0 * (a.tail(n - c - 1) * a(c) - l.col(c).tail(n - c - 1));
          }
          w_trace = l.trace();
          return l;
        }
        Eigen::MatrixXd kinv = Eigen::MatrixXd::Identity(n, n);
        l.triangularView<Eigen::Lower>().solveInPlace(kinv);
        l.triangularView<Eigen::Lower>().transpose().solveInPlace(kinv);
        Eigen::MatrixXd w = a * a.transpose() - kinv;
        w_trace = w.trace();
        return w;
      },
      grad ? &kernel_grad : nullptr);
  if (failed) {
    if (grad) grad->setZero(p + 1);
    return -std::numeric_limits<double>::infinity();
  }
  if (grad) {
    grad->resize(p + 1);
    grad->head(p) = 0.5 * kernel_grad;
    (*grad)(p) = 0.5 * noise * w_trace;
  }
  return lml;
}

void ExactGP::SetKernel(std::unique_ptr<Kernel> kernel) {
  if (!kernel) throw std::invalid_argument("ExactGP::SetKernel: null kernel");
  kernel_ = std::move(kernel);
  if (x_.rows() > 0) Refactorize();
}

Eigen::VectorXd ExactGP::LogHyperparameters() const {
  Eigen::VectorXd kp = kernel_->LogParams();
  Eigen::VectorXd t(kp.size() + 1);
  t << kp, std::log(noise_);
  return t;
}

void ExactGP::SetLogHyperparameters(const Eigen::VectorXd& theta) {
  const int p = kernel_->NumParams();
  if (theta.size() != p + 1)
    throw std::invalid_argument("ExactGP::SetLogHyperparameters: wrong length");
  kernel_->SetLogParams(theta.head(p));
  noise_ = std::exp(theta(p));
  if (x_.rows() > 0) Refactorize();
}

}  // namespace advbo::bo
