#include "bo/optimal_stopping.h"

#include <algorithm>
#include <boost/random/normal_distribution.hpp>
#include <cmath>
#include <sstream>
#include <stdexcept>
#include <vector>

#include "bo/hyperparameters.h"

namespace advbo::bo {

LearningCurveKernel::LearningCurveKernel(double alpha, double beta, bool with_asymptote,
                                         double asymptote_variance)
    : asymptote_(with_asymptote) {
  if (!(alpha > 0) || !(beta > 0))
    throw std::invalid_argument("LearningCurveKernel: alpha and beta must be > 0");
  if (with_asymptote && !(asymptote_variance > 0))
    throw std::invalid_argument("LearningCurveKernel: the asymptote variance must be > 0");
  log_alpha_ = std::log(alpha);
  log_beta_ = std::log(beta);
  if (asymptote_) log_s_ = std::log(asymptote_variance);
}

Eigen::VectorXd LearningCurveKernel::LogParams() const {
  if (asymptote_) return Eigen::Vector3d(log_alpha_, log_beta_, log_s_);
  return Eigen::Vector2d(log_alpha_, log_beta_);
}

void LearningCurveKernel::SetLogParams(const Eigen::VectorXd& p) {
  if (p.size() != NumParams() || !p.allFinite())
    throw std::invalid_argument("LearningCurveKernel::SetLogParams: need " +
                                std::to_string(NumParams()) + " finite values");
  log_alpha_ = p(0);
  log_beta_ = p(1);
  if (asymptote_) log_s_ = p(2);
}

std::vector<ParamKind> LearningCurveKernel::ParamKinds() const {
  if (asymptote_) return {ParamKind::kShape, ParamKind::kShape, ParamKind::kSignalVariance};
  return {ParamKind::kShape, ParamKind::kShape};
}

Eigen::MatrixXd LearningCurveKernel::Eval(const Eigen::MatrixXd& x1,
                                          const Eigen::MatrixXd& x2) const {
  if (x1.cols() != 1 || x2.cols() != 1)
    throw std::invalid_argument("LearningCurveKernel: inputs must be [N, 1] step numbers");
  const double a = alpha(), b = beta();
  Eigen::ArrayXXd u =
      (x1.col(0).replicate(1, x2.rows()) + x2.col(0).transpose().replicate(x1.rows(), 1)).array() +
      b;
  return ((a * (std::log(b) - u.log())).exp() + asymptote_variance()).matrix();
}

Eigen::VectorXd LearningCurveKernel::Diag(const Eigen::MatrixXd& x) const {
  const double a = alpha(), b = beta();
  return ((a * (std::log(b) - (2.0 * x.col(0).array() + b).log())).exp() + asymptote_variance())
      .matrix();
}

PairwiseCache LearningCurveKernel::Precompute(const Eigen::MatrixXd& x) const {
  if (x.cols() != 1) throw std::invalid_argument("LearningCurveKernel: inputs must be [N, 1]");
  Eigen::MatrixXd s = x.col(0).replicate(1, x.rows()) + x.col(0).transpose().replicate(x.rows(), 1);
  return {s};
}

Eigen::MatrixXd LearningCurveKernel::GramFromCache(const PairwiseCache& cache,
                                                   std::vector<Eigen::MatrixXd>* grads) const {
  const double a = alpha(), b = beta();
  Eigen::ArrayXXd u = cache[0].array() + b;
  Eigen::ArrayXXd k = (a * (std::log(b) - u.log())).exp();
  if (grads) {
    grads->clear();
    // d k / d log alpha = alpha * log(b / u) * k ; d k / d log beta = alpha * k * (1 - b / u)
    grads->push_back((a * (std::log(b) - u.log()) * k).matrix());
    grads->push_back((a * k * (1.0 - b / u)).matrix());
    if (asymptote_)  // d s / d log s = s
      grads->push_back(Eigen::MatrixXd::Constant(k.rows(), k.cols(), asymptote_variance()));
  }
  return (k + asymptote_variance()).matrix();
}

Eigen::MatrixXd LearningCurveKernel::GradX(const Eigen::VectorXd& x,
                                           const Eigen::MatrixXd& xs) const {
  Eigen::MatrixXd xr = x.transpose();
  Eigen::ArrayXd k = Eval(xs, xr).col(0).array() - asymptote_variance();
  Eigen::ArrayXd u = xs.col(0).array() + x(0) + beta();
  return (-alpha() * k / u).matrix();
}

std::unique_ptr<Kernel> LearningCurveKernel::Clone() const {
  return std::make_unique<LearningCurveKernel>(*this);
}

std::string LearningCurveKernel::Describe() const {
  std::ostringstream s;
  s << "LearningCurve(alpha=" << alpha() << ", beta=" << beta();
  if (asymptote_) s << ", asymptote_variance=" << asymptote_variance();
  s << ")";
  return s.str();
}

namespace {

using RowMajorXd = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
using RowMajorXi = Eigen::Matrix<int, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

// Step 1: the learning-curve GP (eq. A.1) fitted on the warm-up errors [n0] at steps 1..n0
// by marginal likelihood.
ExactGP FitLearningCurve(const Eigen::VectorXd& initial_errors, const BosOptions& opt, Rng& rng) {
  const int n0 = static_cast<int>(initial_errors.size());
  Eigen::MatrixXd steps(n0, 1);
  for (int i = 0; i < n0; ++i) steps(i, 0) = i + 1;
  ExactGP gp(std::make_unique<LearningCurveKernel>(1.0, 1.0, opt.asymptote, 0.1),
             opt.noise_variance, false);
  gp.SetData(steps, initial_errors);
  FitOptions fit;
  fit.fit_noise = false;
  fit.variance_min = 1e-4;  // the asymptote variance (errors live in [0, 1])
  fit.variance_max = 10.0;
  fit.restarts = 2;
  fit.max_iterations = 50;
  FitHyperparameters(&gp, fit, rng);
  return gp;
}

// Step 2: num_paths sample paths [h, p] of the noisy errors at steps n0+1..n0+h from the GP
// posterior (row-major: every later pass walks one step across all paths).
RowMajorXd SimulatePaths(const ExactGP& gp, int n0, int h, const BosOptions& opt, Rng& rng) {
  Eigen::MatrixXd future(h, 1);
  for (int i = 0; i < h; ++i) future(i, 0) = n0 + 1 + i;
  Eigen::VectorXd mu;
  Eigen::MatrixXd cov;
  gp.PredictJoint(future, &mu, &cov);
  cov.diagonal().array() += opt.noise_variance;  // simulate noisy observations
  double jitter = 0;
  Eigen::MatrixXd l = CholeskyWithJitter(0.5 * (cov + cov.transpose()), &jitter);
  Eigen::MatrixXd z(h, opt.num_paths);
  // Boost's ziggurat sampler: ~5x faster than std::normal_distribution's polar method
  // on the num_paths * (N - N0) draws (3.2 million by default) that dominate Solve.
  boost::random::normal_distribution<double> normal(0.0, 1.0);
  for (Eigen::Index c = 0; c < z.cols(); ++c)
    for (Eigen::Index r = 0; r < z.rows(); ++r) z(r, c) = normal(rng);
  RowMajorXd paths = l.triangularView<Eigen::Lower>() * z;
  paths.colwise() += mu;
  return paths;
}

// The summary statistic along each path [h, p]: the running mean of the post-warm-up errors
// (BOS^2) or of all errors from step 1 (BO-BOS: the warm-up sum plus the simulated ones).
RowMajorXd RunningMeans(const RowMajorXd& paths, const Eigen::VectorXd& initial_errors,
                        bool from_first) {
  const int n0 = static_cast<int>(initial_errors.size());
  const Eigen::Index h = paths.rows();
  RowMajorXd stat(h, paths.cols());
  if (from_first) {
    const double s0 = initial_errors.sum();
    stat.row(0) = (paths.row(0).array() + s0) / (n0 + 1);
    for (int r = 1; r < h; ++r)
      stat.row(r) = (stat.row(r - 1) * (n0 + r) + paths.row(r)) / (n0 + r + 1);
  } else {
    stat.row(0) = paths.row(0);
    for (int r = 1; r < h; ++r) stat.row(r) = (stat.row(r - 1) * r + paths.row(r)) / (r + 1);
  }
  return stat;
}

// Step 3, backward induction (Algorithm 1.1) over the grid cells [h, p] of the paths'
// statistics, `success` per path: the decision per step and cell [h, g].
Eigen::MatrixXi BackwardInduction(const RowMajorXi& cells, const std::vector<char>& success, int g,
                                  double k1, const BosOptions& opt) {
  const int h = static_cast<int>(cells.rows()), p = static_cast<int>(cells.cols());
  Eigen::MatrixXi decisions = Eigen::MatrixXi::Zero(h, g);
  Eigen::VectorXd rho_next = Eigen::VectorXd::Zero(g), rho = Eigen::VectorXd::Zero(g);
  Eigen::VectorXd cnt(g), win(g), cont(g);
  for (int r = h - 1; r >= 0; --r) {
    cnt.setZero();
    win.setZero();
    cont.setZero();
    for (int c = 0; c < p; ++c) {
      const int m = cells(r, c);
      cnt(m) += 1;
      win(m) += success[c];
      if (r + 1 < h) cont(m) += rho_next(cells(r + 1, c));
    }
    for (int m = 0; m < g; ++m) {
      if (cnt(m) == 0) {
        rho(m) = 0;
        decisions(r, m) = static_cast<int>(BosDecision::kContinue);
        continue;
      }
      const double p2 = win(m) / cnt(m);
      // eq. 4.3: wrongly concluding theta_1; K1 = +infinity never recommends d1 (0 * inf).
      const double loss_d1 = std::isinf(k1) ? k1 : k1 * p2;
      const double loss_d2 = opt.k2 * (1 - p2);  // wrongly concluding theta_2
      double best = std::min(loss_d1, loss_d2);
      BosDecision d = loss_d1 <= loss_d2 ? BosDecision::kStop : BosDecision::kConcludeBetter;
      if (r + 1 < h) {
        const double loss_d0 = cont(m) / cnt(m) + opt.cost;
        if (loss_d0 < best) {
          best = loss_d0;
          d = BosDecision::kContinue;
        }
      }
      if (cnt(m) <= opt.min_cell_paths) d = BosDecision::kContinue;
      rho(m) = best;
      decisions(r, m) = static_cast<int>(d);
    }
    std::swap(rho, rho_next);
  }
  return decisions;
}

}  // namespace

void BosOptions::Validate() const {
  if (num_paths < 1 || grid_size < 1)
    throw std::invalid_argument("BOS: num_paths and grid_size must be >= 1");
  if (!(k1_base > 0) || !(k1_decay > 0) || !std::isfinite(k1_decay))
    throw std::invalid_argument("BOS: k1_base and k1_decay must be > 0");
  if (!(k2 > 0) || !std::isfinite(k2) || !(cost > 0) || !std::isfinite(cost))
    throw std::invalid_argument("BOS: k2 and cost must be finite and > 0");
  if (min_cell_paths < 0) throw std::invalid_argument("BOS: min_cell_paths must be >= 0");
  if (!(noise_variance > 0) || !std::isfinite(noise_variance))
    throw std::invalid_argument("BOS: noise_variance must be finite and > 0");
}

BosDecisionTable BosDecisionTable::Solve(const Eigen::VectorXd& initial_errors, int horizon,
                                         double threshold, int outer_iteration,
                                         const BosOptions& opt, Rng& rng) {
  const int n0 = static_cast<int>(initial_errors.size());
  if (n0 < 2) throw std::invalid_argument("BOS: need at least 2 warm-up observations");
  if (horizon <= n0) throw std::invalid_argument("BOS: horizon must exceed the warm-up length");
  if (!initial_errors.allFinite() || !std::isfinite(threshold))
    throw std::invalid_argument("BOS: non-finite learning curve or threshold");
  opt.Validate();
  BosDecisionTable table;
  table.n0_ = n0;
  table.from_first_ = opt.summary_from_first_step;
  table.horizon_ = horizon;
  const ExactGP gp = FitLearningCurve(initial_errors, opt, rng);
  const auto& lck = static_cast<const LearningCurveKernel&>(gp.kernel());
  table.alpha_ = lck.alpha();
  table.beta_ = lck.beta();
  const int h = horizon - n0, p = opt.num_paths, g = opt.grid_size;
  const RowMajorXd paths = SimulatePaths(gp, n0, h, opt, rng);
  const RowMajorXd stat = RunningMeans(paths, initial_errors, opt.summary_from_first_step);
  // The statistic's grid: g cells over its simulated range.
  table.lo_ = stat.minCoeff();
  table.hi_ = stat.maxCoeff();
  if (!(table.hi_ > table.lo_)) table.hi_ = table.lo_ + 1e-12;
  RowMajorXi cells(h, p);
  for (int r = 0; r < h; ++r)
    for (int c = 0; c < p; ++c) {
      const int k =
          static_cast<int>(std::floor((stat(r, c) - table.lo_) / (table.hi_ - table.lo_) * g));
      cells(r, c) = std::clamp(k, 0, g - 1);
    }
  std::vector<char> success(p);
  int n_success = 0;
  for (int c = 0; c < p; ++c) n_success += success[c] = paths(h - 1, c) < threshold;
  table.prior_success_ = static_cast<double>(n_success) / p;
  table.k1_ =
      opt.k1_base / std::pow(opt.k1_decay, std::max(1, outer_iteration) + opt.k1_exponent_offset);
  table.decisions_ = BackwardInduction(cells, success, g, table.k1_, opt);
  return table;
}

BosDecision BosDecisionTable::Decide(int step, double stat) const {
  const int r = step - n0_ - 1;
  if (r < 0 || r >= decisions_.rows() || !std::isfinite(stat)) return BosDecision::kContinue;
  const int g = static_cast<int>(decisions_.cols());
  int c = static_cast<int>(std::floor((stat - lo_) / (hi_ - lo_) * g));
  c = std::clamp(c, 0, g - 1);
  return static_cast<BosDecision>(decisions_(r, c));
}

double BosDecisionTable::SummaryStatistic(const Eigen::VectorXd& errors) const {
  const Eigen::Index n = errors.size();
  if (from_first_) return n ? errors.mean() : 0.0;
  if (n <= n0_) return errors.size() ? errors.tail(1)(0) : 0.0;
  return errors.segment(n0_, n - n0_).mean();
}

}  // namespace advbo::bo
