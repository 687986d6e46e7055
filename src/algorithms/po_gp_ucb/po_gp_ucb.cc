#include "algorithms/po_gp_ucb/po_gp_ucb.h"

#include <Eigen/SVD>
#include <cmath>
#include <stdexcept>
#include <string>

namespace advbo::algorithms {
namespace {

void CheckPrivacyParameters(double epsilon, double delta) {
  if (!(epsilon > 0) || !std::isfinite(epsilon))
    throw std::invalid_argument("PO-GP-UCB: epsilon must be finite and > 0");
  if (!(delta > 0 && delta < 1)) throw std::invalid_argument("PO-GP-UCB: delta must be in (0, 1)");
}

void CheckFinite(const Eigen::MatrixXd& x, const char* what) {
  if (x.size() == 0) throw std::invalid_argument(std::string("PO-GP-UCB: ") + what + " is empty");
  if (!x.allFinite())
    throw std::invalid_argument(std::string("PO-GP-UCB: ") + what + " has non-finite entries");
}

}  // namespace

double PrivacyThreshold(int r, double epsilon, double delta) {
  if (r < 1) throw std::invalid_argument("PO-GP-UCB: the projection dimension r must be >= 1");
  CheckPrivacyParameters(epsilon, delta);
  return 16.0 * std::sqrt(r * std::log(2.0 / delta)) / epsilon * std::log(16.0 * r / delta);
}

Eigen::MatrixXd CenterColumns(const Eigen::MatrixXd& x) {
  if (x.rows() < 1) throw std::invalid_argument("PO-GP-UCB: no records to centre");
  return x.rowwise() - x.colwise().mean();
}

Eigen::MatrixXd NormalizeMaxNorm(const Eigen::MatrixXd& x, double max_norm, double* scale) {
  CheckFinite(x, "the record matrix");
  if (!(max_norm > 0) || !std::isfinite(max_norm))
    throw std::invalid_argument("NormalizeMaxNorm: the maximal norm must be finite and > 0");
  const Eigen::MatrixXd c = CenterColumns(x);
  const double largest = c.rowwise().norm().maxCoeff();
  if (!(largest > 0)) throw std::invalid_argument("NormalizeMaxNorm: all records are equal");
  if (scale) *scale = max_norm / largest;
  return c * (max_norm / largest);
}

double SmallestSingularValue(const Eigen::MatrixXd& x) {
  CheckFinite(x, "the record matrix");
  Eigen::BDCSVD<Eigen::MatrixXd> svd(x);
  return svd.singularValues().minCoeff();
}

std::vector<int> DefaultProjectionDims() { return {5, 10, 15, 20, 25, 30, 35, 40, 45, 50}; }

int ChooseProjectionDim(double sigma_min, double epsilon, double delta,
                        const std::vector<int>& candidates) {
  CheckPrivacyParameters(epsilon, delta);
  if (candidates.empty()) throw std::invalid_argument("ChooseProjectionDim: no candidate r");
  int best = 0;
  for (int r : candidates) {
    if (r < 1) throw std::invalid_argument("ChooseProjectionDim: every candidate r must be >= 1");
    if (PrivacyThreshold(r, epsilon, delta) <= sigma_min && r > best) best = r;
  }
  return best;
}

void CuratorOptions::Validate() const {
  if (r < 1) throw std::invalid_argument("PO-GP-UCB: the projection dimension r must be >= 1");
  CheckPrivacyParameters(epsilon, delta);
}

void ModelerOptions::Validate() const {
  if (!(delta_prime > 0 && delta_prime < 1))
    throw std::invalid_argument("PO-GP-UCB: delta' must be in (0, 1)");
}

CuratorRelease ReleaseDataset(const Eigen::MatrixXd& x, const CuratorOptions& options,
                              bo::Rng& rng) {
  options.Validate();
  CheckFinite(x, "the record matrix");
  CuratorRelease out;
  out.omega = PrivacyThreshold(options.r, options.epsilon, options.delta);
  const Eigen::MatrixXd centred = CenterColumns(x);  // line 2
  const Eigen::Index d = x.cols(), r = options.r;
  Eigen::MatrixXd m(d, r);  // line 3, column by column
  std::normal_distribution<double> normal(0.0, 1.0);
  for (Eigen::Index j = 0; j < r; ++j)
    for (Eigen::Index i = 0; i < d; ++i) m(i, j) = normal(rng);
  Eigen::BDCSVD<Eigen::MatrixXd> svd(centred, Eigen::ComputeThinU | Eigen::ComputeThinV);  // 4
  const Eigen::VectorXd& s = svd.singularValues();
  out.sigma_min = s.minCoeff();
  const double scale = 1.0 / std::sqrt(static_cast<double>(r));
  if (out.sigma_min >= out.omega) {  // lines 6-7
    out.z = scale * (centred * m);
    return out;
  }
  out.lifted = true;  // lines 9-10: every singular value lifted to sqrt(s^2 + omega^2)
  const Eigen::VectorXd lifted = (s.array().square() + out.omega * out.omega).sqrt().matrix();
  const Eigen::MatrixXd vt_m = svd.matrixV().transpose() * m;  // [k, r]
  out.z = scale * (svd.matrixU() * (lifted.asDiagonal() * vt_m));
  return out;
}

Eigen::MatrixXd ReconstructRecords(const Eigen::MatrixXd& known_x, const Eigen::MatrixXd& known_z,
                                   const Eigen::MatrixXd& hidden_z) {
  const Eigen::Index k = known_x.rows(), d = known_x.cols(), r = known_z.cols();
  if (known_z.rows() != k || hidden_z.cols() != r)
    throw std::invalid_argument(
        "ReconstructRecords: known_x, known_z and hidden_z disagree in size");
  if (k < d + 1)
    throw std::invalid_argument("ReconstructRecords: needs at least d + 1 = " +
                                std::to_string(d + 1) + " known records, got " + std::to_string(k));
  if (r < d) throw std::invalid_argument("ReconstructRecords: the released rows have r < d");
  Eigen::MatrixXd a(k, d + 1);  // [x, 1]
  a << known_x, Eigen::VectorXd::Ones(k);
  const Eigen::ColPivHouseholderQR<Eigen::MatrixXd> qr(a);
  if (qr.rank() < d + 1)
    throw std::invalid_argument("ReconstructRecords: the known records are affinely dependent");
  const Eigen::MatrixXd w = qr.solve(known_z);  // [d + 1, r]: B on top, c^T last
  const Eigen::MatrixXd b = w.topRows(d);
  const Eigen::RowVectorXd c = w.row(d);
  // x B = z - c  <=>  B^T x^T = (z - c)^T, least squares over the r equations.
  const Eigen::MatrixXd rhs = (hidden_z.rowwise() - c).transpose();  // [r, m]
  return b.transpose().colPivHouseholderQr().solve(rhs).transpose();
}

std::pair<Eigen::VectorXd, Eigen::VectorXd> ModelerBox(const Eigen::MatrixXd& z) {
  CheckFinite(z, "the released rows");
  double lo = z.minCoeff(), hi = z.maxCoeff();
  if (!(hi > lo)) {
    lo -= 0.5;
    hi += 0.5;
  }
  return {Eigen::VectorXd::Constant(z.cols(), lo), Eigen::VectorXd::Constant(z.cols(), hi)};
}

bo::BoLoopOptions ModelerLoopOptions(const Eigen::MatrixXd& z, const bo::BoLoopOptions& base,
                                     const ModelerOptions& options) {
  options.Validate();
  CheckFinite(z, "the released rows");
  bo::BoLoopOptions o = base;
  o.acquisition = bo::AcquisitionKind::kUcb;
  o.beta = {bo::BetaPolicy::kSrinivas2010, 0.0, options.delta_prime};
  o.ard = false;
  if (o.initial_points == 0) o.initial_points = 3;  // not r + 1: r is no property of the task
  o.candidates = z;
  return o;
}

bo::BoResult RunPoGpUcb(const Eigen::MatrixXd& z, const std::function<double(int)>& evaluate,
                        const bo::BoLoopOptions& loop, bo::Rng& rng,
                        const bo::StepCallback& callback) {
  if (loop.candidates.rows() != z.rows() || loop.candidates.cols() != z.cols())
    throw std::invalid_argument("RunPoGpUcb: the loop's candidates must be the released rows");
  const auto [lb, ub] = ModelerBox(z);
  bo::BoSession session(lb, ub, loop, rng);
  while (!session.done()) {
    bo::BoStep step = session.Propose();
    const int i = step.candidate_index;
    if (i < 0 || i >= z.rows())
      throw std::logic_error("RunPoGpUcb: the session proposed a point outside the released rows");
    bo::BoSession::Evaluate([&](const Eigen::VectorXd&) { return evaluate(i); }, &step);
    step.extra = {{"index", i}};
    const bo::BoStep& recorded = session.Record(std::move(step));
    if (callback && !callback(recorded)) session.Stop("callback");
  }
  return session.result();
}

}  // namespace advbo::algorithms
