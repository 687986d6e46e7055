#include "bo/acquisition_optimizer.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <nlopt.hpp>
#include <numeric>
#include <stdexcept>
#include <string>

#include "bo/optimize.h"

namespace advbo::bo {
namespace {

void CheckBox(const Acquisition& acq, const Eigen::VectorXd& lb, const Eigen::VectorXd& ub) {
  if (lb.size() != acq.dim() || ub.size() != acq.dim())
    throw std::invalid_argument("acquisition optimiser: bounds have " + std::to_string(lb.size()) +
                                " entries, acquisition dimension is " + std::to_string(acq.dim()));
  if ((ub.array() < lb.array()).any())
    throw std::invalid_argument("acquisition optimiser: lower bound above upper bound");
}

double Finite(double v) { return std::isfinite(v) ? v : -std::numeric_limits<double>::infinity(); }

}  // namespace

AcquisitionMax MaximizeOverSet(const Acquisition& acq, const Eigen::MatrixXd& set, int* index) {
  if (set.rows() < 1) throw std::invalid_argument("MaximizeOverSet: empty set");
  const Eigen::VectorXd v = acq.Evaluate(set);
  Eigen::Index best = 0;
  double bv = -std::numeric_limits<double>::infinity();
  for (Eigen::Index i = 0; i < v.size(); ++i)
    if (Finite(v(i)) > bv) {
      bv = v(i);
      best = i;
    }
  if (index) *index = static_cast<int>(best);
  return {set.row(best).transpose(), bv, static_cast<int>(set.rows())};
}

void AcquisitionOptimizerOptions::Validate() const {
  if (num_candidates < 1)
    throw std::invalid_argument("acquisition optimiser: num_candidates must be >= 1");
  if (num_starts < 0 || max_iterations < 0)
    throw std::invalid_argument(
        "acquisition optimiser: num_starts and max_iterations must be >= 0");
}

AcquisitionMax MaximizeAcquisition(const Acquisition& acq, const Eigen::VectorXd& lb,
                                   const Eigen::VectorXd& ub,
                                   const AcquisitionOptimizerOptions& opt, Rng& rng,
                                   const Eigen::MatrixXd& extra_starts) {
  CheckBox(acq, lb, ub);
  opt.Validate();
  Eigen::MatrixXd cand = MakeDesign(opt.design, opt.num_candidates, lb, ub, rng);
  if (extra_starts.rows() > 0) {
    if (extra_starts.cols() != acq.dim())
      throw std::invalid_argument("MaximizeAcquisition: extra starts have the wrong width");
    Eigen::MatrixXd all(cand.rows() + extra_starts.rows(), cand.cols());
    all << cand, extra_starts.array()
                     .max(lb.transpose().replicate(extra_starts.rows(), 1).array())
                     .min(ub.transpose().replicate(extra_starts.rows(), 1).array())
                     .matrix();
    cand = std::move(all);
  }
  const Eigen::VectorXd v = acq.Evaluate(cand);
  std::vector<int> order(cand.rows());
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(), [&](int a, int b) { return Finite(v(a)) > Finite(v(b)); });
  AcquisitionMax best{cand.row(order[0]).transpose(), Finite(v(order[0])),
                      static_cast<int>(cand.rows())};
  GradObjective neg = [&](const Eigen::VectorXd& x, Eigen::VectorXd* g) {
    const double f = acq.ValueAndGradient(x, g);
    if (g) *g = -*g;
    return -f;
  };
  const int starts = std::min<int>(opt.num_starts, static_cast<int>(order.size()));
  for (int s = 0; s < starts && opt.max_iterations > 0; ++s) {
    BoxedResult r = MinimizeBoxed(neg, cand.row(order[s]).transpose(), lb, ub, opt.max_iterations);
    best.evaluations += r.evaluations;
    if (std::isfinite(r.f) && -r.f > best.value) {
      best.value = -r.f;
      best.x = r.x;
    }
  }
  return best;
}

AcquisitionMax MaximizeDirect(const Acquisition& acq, const Eigen::VectorXd& lb,
                              const Eigen::VectorXd& ub, int max_evaluations) {
  CheckBox(acq, lb, ub);
  if (max_evaluations < 1) throw std::invalid_argument("MaximizeDirect: max_evaluations < 1");
  const unsigned d = static_cast<unsigned>(acq.dim());
  nlopt::opt o(nlopt::GN_DIRECT_L, d);
  std::vector<double> l(lb.data(), lb.data() + d), u(ub.data(), ub.data() + d);
  // DIRECT needs a non-degenerate box; pinned coordinates get a tiny width.
  for (unsigned i = 0; i < d; ++i)
    if (u[i] <= l[i]) u[i] = l[i] + 1e-12;
  o.set_lower_bounds(l);
  o.set_upper_bounds(u);
  o.set_maxeval(max_evaluations);
  struct Ctx {
    const Acquisition* acq;
    int evals;
    Eigen::VectorXd best_x;
    double best;
  } ctx{&acq, 0, lb, -std::numeric_limits<double>::infinity()};
  auto f = [](unsigned n, const double* x, double*, void* data) -> double {
    auto* c = static_cast<Ctx*>(data);
    Eigen::Map<const Eigen::VectorXd> xv(x, n);
    const double v = Finite(c->acq->ValueAndGradient(xv, nullptr));
    ++c->evals;
    if (v > c->best) {
      c->best = v;
      c->best_x = xv;
    }
    return std::isfinite(v) ? -v : std::numeric_limits<double>::max();
  };
  o.set_min_objective(f, &ctx);
  std::vector<double> x0(d);
  for (unsigned i = 0; i < d; ++i) x0[i] = 0.5 * (l[i] + u[i]);
  double fmin = 0.0;
  try {
    o.optimize(x0, fmin);
  } catch (const nlopt::roundoff_limited&) {
  } catch (const nlopt::forced_stop&) {
  } catch (const std::runtime_error& e) {
    if (ctx.evals == 0) throw std::runtime_error(std::string("DIRECT (NLopt) failed: ") + e.what());
  }
  return {ctx.best_x.cwiseMax(lb).cwiseMin(ub), ctx.best, ctx.evals};
}

BlockAcquisition::BlockAcquisition(const Acquisition& acq, std::vector<int> block,
                                   Eigen::VectorXd base)
    : acq_(acq), block_(std::move(block)), base_(std::move(base)) {
  if (base_.size() != acq.dim())
    throw std::invalid_argument("BlockAcquisition: base point has the wrong dimension");
  std::vector<int> seen(acq.dim(), 0);
  for (int b : block_)
    if (b < 0 || b >= acq.dim() || seen[b]++)
      throw std::invalid_argument("BlockAcquisition: block indices must be distinct, in range");
  if (block_.empty()) throw std::invalid_argument("BlockAcquisition: empty block");
}

Eigen::VectorXd BlockAcquisition::Embed(const Eigen::VectorXd& z) const {
  Eigen::VectorXd x = base_;
  for (size_t i = 0; i < block_.size(); ++i) x(block_[i]) = z(i);
  return x;
}

Eigen::VectorXd BlockAcquisition::Evaluate(const Eigen::MatrixXd& z) const {
  Eigen::MatrixXd x = base_.transpose().replicate(z.rows(), 1);
  for (size_t i = 0; i < block_.size(); ++i) x.col(block_[i]) = z.col(i);
  return acq_.Evaluate(x);
}

double BlockAcquisition::ValueAndGradient(const Eigen::VectorXd& z, Eigen::VectorXd* grad) const {
  Eigen::VectorXd g;
  const double v = acq_.ValueAndGradient(Embed(z), grad ? &g : nullptr);
  if (grad) {
    grad->resize(block_.size());
    for (size_t i = 0; i < block_.size(); ++i) (*grad)(i) = g(block_[i]);
  }
  return v;
}

}  // namespace advbo::bo
