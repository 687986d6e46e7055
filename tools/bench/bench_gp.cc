// GP fitting / prediction benchmark driver for tools/bench/bench_gp.py: reads a training set and
// test inputs (raw little-endian float64), fits a Matérn-5/2 ARD GP with signal variance and
// noise by maximum marginal likelihood (advbo's FitHyperparameters, L-BFGS-B + restarts),
// predicts mean and standard deviation at the test inputs, and prints one JSON object with
// times, the log marginal likelihood reached and the fitted log-hyperparameters.
//
// Usage: bench_gp N D M TRAIN.bin TEST.bin RESTARTS SEED PRED_OUT.bin
//   TRAIN.bin = X [N, D] row-major then y [N]; TEST.bin = Xs [M, D]; PRED_OUT.bin receives
//   mean [M] then std [M]. Outputs are used as given (no standardisation), matching
//   scikit-learn's normalize_y=False on the same pre-standardised targets.
#include <chrono>
#include <cstdio>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <vector>

#include "bo/allocator.h"
#include "bo/gp.h"
#include "bo/hyperparameters.h"

namespace {

std::vector<double> ReadDoubles(const std::string& path, size_t count) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error(path + ": cannot open");
  std::vector<double> v(count);
  in.read(reinterpret_cast<char*>(v.data()), static_cast<std::streamsize>(count * sizeof(double)));
  if (in.gcount() != static_cast<std::streamsize>(count * sizeof(double)))
    throw std::runtime_error(path + ": expected " + std::to_string(count) + " float64 values");
  return v;
}

}  // namespace

int main(int argc, char** argv) {
  using namespace advbo::bo;
  using Clock = std::chrono::steady_clock;
  ConfigureAllocatorForLargeMatrices();  // as the advbo binary does
  if (argc != 9) {
    std::fprintf(stderr, "usage: bench_gp N D M TRAIN.bin TEST.bin RESTARTS SEED PRED_OUT.bin\n");
    return 1;
  }
  try {
    const int n = std::stoi(argv[1]), d = std::stoi(argv[2]), m = std::stoi(argv[3]);
    const int restarts = std::stoi(argv[6]);
    const uint64_t seed = std::stoull(argv[7]);
    const std::vector<double> train = ReadDoubles(argv[4], static_cast<size_t>(n) * (d + 1));
    const std::vector<double> test = ReadDoubles(argv[5], static_cast<size_t>(m) * d);
    using RowMajor = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
    const Eigen::MatrixXd x = Eigen::Map<const RowMajor>(train.data(), n, d);
    const Eigen::VectorXd y = Eigen::Map<const Eigen::VectorXd>(train.data() + n * d, n);
    const Eigen::MatrixXd xs = Eigen::Map<const RowMajor>(test.data(), m, d);

    // Same model, bounds and starting point as the scikit-learn side:
    // C(1, [1e-2, 1e2]) * Matern(nu=2.5, l=1 (ARD), [1e-2, 1e2]) + White(1e-2, [1e-6, 1]).
    ExactGP gp(std::make_unique<StationaryKernel>(KernelFamily::kMatern52, d, true,
                                                  std::vector<int>{}, 1.0, 1.0),
               1e-2, /*standardize=*/false);
    FitOptions fit;
    fit.restarts = restarts;
    fit.max_iterations = 1000;
    fit.lengthscale_min = 1e-2;
    fit.lengthscale_max = 1e2;
    fit.variance_min = 1e-2;
    fit.variance_max = 1e2;
    fit.noise_min = 1e-6;
    fit.noise_max = 1.0;
    Rng rng(seed);
    const auto t0 = Clock::now();
    gp.SetData(x, y);
    const FitResult r = FitHyperparameters(&gp, fit, rng);
    const double fit_s = std::chrono::duration<double>(Clock::now() - t0).count();

    const auto t1 = Clock::now();
    Eigen::VectorXd mean, var;
    gp.Predict(xs, &mean, &var);
    const Eigen::VectorXd sd = var.cwiseSqrt();
    const double pred_s = std::chrono::duration<double>(Clock::now() - t1).count();

    std::ofstream out(argv[8], std::ios::binary);
    out.write(reinterpret_cast<const char*>(mean.data()), m * sizeof(double));
    out.write(reinterpret_cast<const char*>(sd.data()), m * sizeof(double));
    if (!out) throw std::runtime_error(std::string(argv[8]) + ": cannot write predictions");
    const Eigen::VectorXd theta = gp.LogHyperparameters();
    nlohmann::json j = {{"fit_seconds", fit_s},
                        {"predict_seconds", pred_s},
                        {"log_marginal_likelihood", r.log_marginal_likelihood},
                        {"likelihood_evaluations", r.evaluations},
                        {"theta", std::vector<double>(theta.data(), theta.data() + theta.size())}};
    std::printf("%s\n", j.dump().c_str());
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bench_gp: error: %s\n", e.what());
    return 1;
  }
}
