// Per-query cost of a served model (advbo serve, HTTP on loopback) next to the same model in
// process: the same random batches scored both ways, interleaved (local, remote, local, ...)
// so both see the same machine load; every remote score is checked equal to the local one.
// One JSON line per (model, batch size): seconds per image local / remote, the paired
// difference (HTTP overhead per query) with its standard error over repetitions.
#include <CLI/CLI.hpp>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <random>
#include <vector>

#include "bo/allocator.h"
#include "oracle/classifier.h"

int main(int argc, char** argv) {
  CLI::App app{"HTTP overhead per query of a served model vs the same model in process"};
  std::string model, url, out;
  std::vector<int> batches = {1, 10, 100};
  int reps = 200, threads = 1;
  app.add_option("--model", model, "TorchScript file (the one the server serves)")->required();
  app.add_option("--url", url, "the served model, http://127.0.0.1:PORT/predict")->required();
  app.add_option("--batches", batches, "batch sizes")->delimiter(',');
  app.add_option("--reps", reps, "repetitions per batch size")->check(CLI::PositiveNumber);
  app.add_option("--threads", threads, "LibTorch threads of the local model");
  app.add_option("-o", out, "append JSON lines here");
  CLI11_PARSE(app, argc, argv);
  advbo::bo::ConfigureAllocatorForLargeMatrices();  // as the advbo binary (and its server) do
  using advbo::oracle::Classifier;
  advbo::oracle::ClassifierOptions opt;
  opt.threads = threads;
  auto local = Classifier::Load(model, opt);
  opt.channels = local->channels();
  opt.height = local->height();
  opt.width = local->width();
  auto remote = Classifier::Load(url, opt);
  std::mt19937_64 rng(1);
  std::uniform_real_distribution<float> u(0, 1);
  std::ofstream file;
  if (!out.empty()) file.open(out, std::ios::app);
  for (int b : batches) {
    std::vector<float> x(static_cast<size_t>(b) * local->input_size());
    std::vector<double> tl, tr, diff;
    bool equal = true;
    for (int r = -5; r < reps; ++r) {  // 5 warm-up rounds
      for (auto& v : x) v = u(rng);
      auto t0 = std::chrono::steady_clock::now();
      Eigen::MatrixXd a = local->LogProbabilities(x.data(), b);
      auto t1 = std::chrono::steady_clock::now();
      Eigen::MatrixXd c = remote->LogProbabilities(x.data(), b);
      auto t2 = std::chrono::steady_clock::now();
      equal = equal && a == c;
      if (r < 0) continue;
      const double l = std::chrono::duration<double>(t1 - t0).count() / b;
      const double m = std::chrono::duration<double>(t2 - t1).count() / b;
      tl.push_back(l);
      tr.push_back(m);
      diff.push_back(m - l);
    }
    auto mean = [](const std::vector<double>& v) {
      double s = 0;
      for (double x : v) s += x;
      return s / v.size();
    };
    auto se = [&](const std::vector<double>& v) {
      const double m = mean(v);
      double s = 0;
      for (double x : v) s += (x - m) * (x - m);
      return std::sqrt(s / (v.size() - 1) / v.size());
    };
    nlohmann::json rec = {{"model", model},
                          {"batch", b},
                          {"reps", reps},
                          {"local_ms_per_image", 1e3 * mean(tl)},
                          {"remote_ms_per_image", 1e3 * mean(tr)},
                          {"overhead_ms_per_image", 1e3 * mean(diff)},
                          {"overhead_se_ms", 1e3 * se(diff)},
                          {"scores_identical", equal},
                          {"threads", threads}};
    std::printf("%s\n", rec.dump().c_str());
    if (file) file << rec.dump() << "\n";
  }
  return 0;
}
