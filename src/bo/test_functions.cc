#include "bo/test_functions.h"

#include <cmath>
#include <memory>
#include <stdexcept>

#include "bo/acquisition.h"
#include "bo/acquisition_optimizer.h"
#include "bo/kernel.h"
#include "bo/random.h"
#include "bo/random_features.h"

namespace advbo::bo {
namespace {

TestFunction Box(const std::string& name, int d, double lo, double hi) {
  TestFunction t;
  t.name = name;
  t.dim = d;
  t.lb = Eigen::VectorXd::Constant(d, lo);
  t.ub = Eigen::VectorXd::Constant(d, hi);
  return t;
}

// One coordinate's term of the Deceptive function (Ha et al., App. D, after
// infinity77.net's definition, which adds the +1 and +4/5 that keep g continuous; peak
// g(alpha) = 1, g(0) = g(1) = 4/5).
double DeceptiveG(double x, double alpha) {
  if (x <= 0.8 * alpha) return -x / alpha + 0.8;
  if (x <= alpha) return 5.0 * x / alpha - 4.0;
  if (x <= (1.0 + 4.0 * alpha) / 5.0) return 5.0 * (x - alpha) / (alpha - 1.0) + 1.0;
  return (x - 1.0) / (1.0 - alpha) + 0.8;
}

double Hartmann(const Eigen::VectorXd& x, const Eigen::MatrixXd& a, const Eigen::MatrixXd& p) {
  static const double alpha[4] = {1.0, 1.2, 3.0, 3.2};
  double s = 0.0;
  for (int i = 0; i < 4; ++i) {
    const double r =
        (a.row(i).transpose().array() * (x - p.row(i).transpose()).array().square()).sum();
    s -= alpha[i] * std::exp(-r);
  }
  return s;
}

// Maximises -f of a feature function to estimate its minimum.
class NegatedFeatureFunction final : public Acquisition {
 public:
  explicit NegatedFeatureFunction(std::shared_ptr<FeatureFunction> f) : f_(std::move(f)) {}
  int dim() const override { return f_->input_dim(); }
  Eigen::VectorXd Evaluate(const Eigen::MatrixXd& x) const override { return -f_->Evaluate(x); }
  double ValueAndGradient(const Eigen::VectorXd& x, Eigen::VectorXd* g) const override {
    const double v = f_->ValueAndGradient(x, g);
    if (g) *g = -*g;
    return -v;
  }

 private:
  std::shared_ptr<FeatureFunction> f_;
};

}  // namespace

std::vector<std::string> TestFunctionNames() {
  return {"branin",   "hartmann3", "hartmann6", "ackley", "rosenbrock", "michalewicz",
          "shekel10", "cosines",   "deceptive", "h1",     "gp-sample"};
}

namespace {

// What MakeTestFunction was asked for: the name, the requested dimension (0 = the function's
// own), the dimension of any-dimensional functions, and the seed and lengthscale of gp-sample.
struct Request {
  std::string name;
  int dim = 0, any_d = 2;
  uint64_t seed = 0;
  double lengthscale = 0.1;
  // The fixed dimension d of the function; a different requested --dim is an error.
  int Fixed(int d) const {
    if (dim != 0 && dim != d)
      throw std::invalid_argument("test function '" + name + "' is " + std::to_string(d) +
                                  "-dimensional; --dim " + std::to_string(dim) + " given");
    return d;
  }
};

TestFunction MakeBranin(const Request& r) {
  TestFunction t = Box(r.name, r.Fixed(2), 0, 0);
  t.lb << -5.0, 0.0;
  t.ub << 10.0, 15.0;
  t.f = [](const Eigen::VectorXd& x) {
    const double b = 5.1 / (4 * M_PI * M_PI), c = 5 / M_PI, tt = 1 / (8 * M_PI);
    const double q = x(1) - b * x(0) * x(0) + c * x(0) - 6.0;
    return q * q + 10.0 * (1 - tt) * std::cos(x(0)) + 10.0;
  };
  t.minimum = 0.397887357729739;
  return t;
}

TestFunction MakeHartmann3(const Request& r) {
  TestFunction t = Box(r.name, r.Fixed(3), 0.0, 1.0);
  Eigen::MatrixXd a(4, 3), p(4, 3);
  a << 3.0, 10, 30, 0.1, 10, 35, 3.0, 10, 30, 0.1, 10, 35;
  p << 3689, 1170, 2673, 4699, 4387, 7470, 1091, 8732, 5547, 381, 5743, 8828;
  p *= 1e-4;
  t.f = [a, p](const Eigen::VectorXd& x) { return Hartmann(x, a, p); };
  t.minimum = -3.86278214782076;
  return t;
}

TestFunction MakeHartmann6(const Request& r) {
  TestFunction t = Box(r.name, r.Fixed(6), 0.0, 1.0);
  Eigen::MatrixXd a(4, 6), p(4, 6);
  a << 10, 3, 17, 3.5, 1.7, 8, 0.05, 10, 17, 0.1, 8, 14, 3, 3.5, 1.7, 10, 17, 8, 17, 8, 0.05, 10,
      0.1, 14;
  p << 1312, 1696, 5569, 124, 8283, 5886, 2329, 4135, 8307, 3736, 1004, 9991, 2348, 1451, 3522,
      2883, 3047, 6650, 4047, 8828, 8732, 5743, 1091, 381;
  p *= 1e-4;
  t.f = [a, p](const Eigen::VectorXd& x) { return Hartmann(x, a, p); };
  t.minimum = -3.32236801141551;
  return t;
}

TestFunction MakeShekel10(const Request& r) {
  TestFunction t = Box(r.name, r.Fixed(4), 0.0, 10.0);
  Eigen::MatrixXd c(4, 10);
  c << 4, 1, 8, 6, 3, 2, 5, 8, 6, 7, 4, 1, 8, 6, 7, 9, 3, 1, 2, 3.6, 4, 1, 8, 6, 3, 2, 5, 8, 6, 7,
      4, 1, 8, 6, 7, 9, 3, 1, 2, 3.6;
  Eigen::VectorXd beta(10);
  beta << 1, 2, 2, 4, 4, 6, 3, 7, 5, 5;
  beta *= 0.1;
  t.f = [c, beta](const Eigen::VectorXd& x) {
    double s = 0.0;
    for (int i = 0; i < 10; ++i) s -= 1.0 / ((x - c.col(i)).squaredNorm() + beta(i));
    return s;
  };
  t.minimum = -10.536409816692;
  return t;
}

TestFunction MakeCosines(const Request& r) {
  TestFunction t = Box(r.name, r.Fixed(2), 0.0, 1.0);
  t.f = [](const Eigen::VectorXd& x) {
    const double u = 1.6 * x(0) - 0.5, v = 1.6 * x(1) - 0.5;
    return -(1.0 - (u * u + v * v - 0.3 * std::cos(3 * M_PI * u) - 0.3 * std::cos(3 * M_PI * v)));
  };
  t.minimum = -1.6;
  return t;
}

TestFunction MakeAckley(const Request& r) {
  TestFunction t = Box(r.name, r.any_d, -32.768, 32.768);
  t.f = [](const Eigen::VectorXd& x) {
    const double n = static_cast<double>(x.size());
    return -20.0 * std::exp(-0.2 * std::sqrt(x.squaredNorm() / n)) -
           std::exp((2 * M_PI * x.array()).cos().sum() / n) + 20.0 + M_E;
  };
  t.minimum = 0.0;
  return t;
}

TestFunction MakeRosenbrock(const Request& r) {
  if (r.any_d < 2) throw std::invalid_argument("rosenbrock needs dimension >= 2");
  TestFunction t = Box(r.name, r.any_d, -2.048, 2.048);
  t.f = [](const Eigen::VectorXd& x) {
    double s = 0.0;
    for (Eigen::Index i = 0; i + 1 < x.size(); ++i)
      s += 100.0 * std::pow(x(i + 1) - x(i) * x(i), 2) + std::pow(x(i) - 1.0, 2);
    return s;
  };
  t.minimum = 0.0;
  return t;
}

// any dimension n (UHE-BO uses n = 3), beta = 2
TestFunction MakeDeceptive(const Request& r) {
  TestFunction t = Box(r.name, r.any_d, 0.0, 1.0);
  t.f = [](const Eigen::VectorXd& x) {
    const double n = static_cast<double>(x.size());
    double s = 0.0;
    for (Eigen::Index i = 0; i < x.size(); ++i) s += DeceptiveG(x(i), (i + 1) / (n + 1));
    return -std::pow(s / n, 2.0);
  };
  t.minimum = -1.0;  // at x_i = alpha_i = i / (n + 1)
  return t;
}

// maximised in Ha et al.; minimised here as -h1
TestFunction MakeH1(const Request& r) {
  TestFunction t = Box(r.name, r.Fixed(2), -100.0, 100.0);
  t.f = [](const Eigen::VectorXd& x) {
    const double a = std::sin(x(0) - x(1) / 8.0), b = std::sin(x(1) + x(0) / 8.0);
    const double r = std::sqrt(std::pow(x(0) - 8.6998, 2) + std::pow(x(1) - 6.7665, 2) + 1.0);
    return -(a * a + b * b) / r;
  };
  t.minimum = -2.0;  // at (8.6998, 6.7665), where sin^2 + sin^2 = 2 to 4 decimals
  return t;
}

TestFunction MakeMichalewicz(const Request& r) {
  TestFunction t = Box(r.name, r.any_d, 0.0, M_PI);
  t.f = [](const Eigen::VectorXd& x) {
    double s = 0.0;
    for (Eigen::Index i = 0; i < x.size(); ++i)
      s -= std::sin(x(i)) * std::pow(std::sin((i + 1) * x(i) * x(i) / M_PI), 20);
    return s;
  };
  if (r.any_d == 2) t.minimum = -1.8013034;
  if (r.any_d == 5) t.minimum = -4.687658;
  if (r.any_d == 10) t.minimum = -9.66015;
  return t;
}

TestFunction MakeGpSample(const Request& r) {
  if (!(r.lengthscale > 0)) throw std::invalid_argument("gp-sample lengthscale must be > 0");
  TestFunction t = Box(r.name, r.any_d, 0.0, 1.0);
  Rng rng(DeriveSeed(r.seed, 0x6770));
  StationaryKernel k(KernelFamily::kSquaredExponential, r.any_d, false, {}, r.lengthscale, 1.0);
  RandomFeatures features(k, 1024, rng);
  std::normal_distribution<double> n01(0.0, 1.0);
  Eigen::VectorXd w = Eigen::VectorXd::NullaryExpr(1024, [&]() { return n01(rng); });
  auto f = std::make_shared<FeatureFunction>(features, w);
  t.f = [f](const Eigen::VectorXd& x) { return f->Evaluate(x.transpose())(0); };
  NegatedFeatureFunction neg(f);
  AcquisitionOptimizerOptions o;
  o.num_candidates = 4096;
  o.num_starts = 20;
  o.max_iterations = 200;
  t.minimum = -MaximizeAcquisition(neg, t.lb, t.ub, o, rng).value;
  t.minimum_estimated = true;
  return t;
}

}  // namespace

TestFunction MakeTestFunction(const std::string& name, int dim, uint64_t seed, double lengthscale) {
  if (dim < 0) throw std::invalid_argument("test function dimension must be >= 1");
  const Request r{name, dim, dim == 0 ? 2 : dim, seed, lengthscale};
  using Maker = TestFunction (*)(const Request&);
  static const std::pair<const char*, Maker> kMakers[] = {
      {"branin", MakeBranin},           {"hartmann3", MakeHartmann3}, {"hartmann6", MakeHartmann6},
      {"shekel10", MakeShekel10},       {"cosines", MakeCosines},     {"ackley", MakeAckley},
      {"rosenbrock", MakeRosenbrock},   {"deceptive", MakeDeceptive}, {"h1", MakeH1},
      {"michalewicz", MakeMichalewicz}, {"gp-sample", MakeGpSample},
  };
  for (const auto& [n, make] : kMakers)
    if (name == n) return make(r);
  std::string names;
  for (const auto& n : TestFunctionNames()) names += (names.empty() ? "" : ", ") + n;
  throw std::invalid_argument("unknown test function '" + name + "' (use " + names + ")");
}

}  // namespace advbo::bo
