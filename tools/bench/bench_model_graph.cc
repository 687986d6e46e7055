// the model's forward time per image, plain module vs frozen inference graph, at
// several batch sizes, in one run on this machine (tools/bench/bench_model_graph.sh).
//
//   bench_model_graph --models models/cifar10_at.pt,models/mnist_cw.pt --batches 1,10,100
//                     --threads 1 --reps 5 --out tools/results/model_graph/forward.jsonl
//
// For every model, graph (plain | frozen) and batch size B: `images` random images in [0, 1]
// scored in batches of B through oracle::MakeTorchScriptBackend, repeated `reps` times after
// one warm-up pass; the record keeps the best and the median milliseconds per image (the
// best is the figure the issue compares against: the least a forward costs here). Also
// the largest |frozen - plain| raw output over the images and whether every argmax agreed.
#include <CLI/CLI.hpp>
#include <algorithm>
#include <array>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "bench_util.h"
#include "oracle/classifier.h"

namespace {

using advbo::oracle::ModelGraph;

// Milliseconds per image of one pass over `x` ([n, c, h, w]) in batches of `batch`.
double PassMsPerImage(const advbo::oracle::ScoreBackend& b, const std::vector<float>& x, int n,
                      int c, int h, int w, int batch) {
  const auto t0 = std::chrono::steady_clock::now();
  const size_t d = static_cast<size_t>(c) * h * w;
  for (int s = 0; s < n; s += batch)
    b.Scores(x.data() + s * d, std::min(batch, n - s), c, h, w, nullptr);
  const double ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  return ms / n;
}

// The input shape a shipped model takes: MNIST's or CIFAR-10's, by probing.
std::array<int, 3> ShapeOf(const advbo::oracle::ScoreBackend& b) {
  for (std::array<int, 3> s : {std::array<int, 3>{1, 28, 28}, std::array<int, 3>{3, 32, 32}}) {
    std::vector<float> x(static_cast<size_t>(s[0]) * s[1] * s[2], 0.5f);
    try {
      b.Scores(x.data(), 1, s[0], s[1], s[2], nullptr);
      return s;
    } catch (const std::exception&) {
    }
  }
  throw std::runtime_error(b.name() + ": takes neither [1,28,28] nor [3,32,32]");
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Forward time per image: plain module vs frozen inference graph"};
  std::string models = "models/cifar10_at.pt,models/cifar10_cw.pt,models/mnist_cw.pt";
  std::string batches = "1,10,100";
  std::string out = "tools/results/model_graph/forward.jsonl";
  int threads = 1, reps = 5, images = 200;
  app.add_option("--models", models, "comma-separated TorchScript files");
  app.add_option("--batches", batches, "comma-separated batch sizes");
  app.add_option("--threads", threads, "LibTorch intra-op threads")->check(CLI::Range(1, 64));
  app.add_option("--reps", reps, "timed passes per cell (best and median kept)")
      ->check(CLI::Range(1, 1000));
  app.add_option("--images", images, "random images per pass")->check(CLI::Range(1, 100000));
  app.add_option("--out", out, "JSONL output (one record per model, graph and batch)");
  CLI11_PARSE(app, argc, argv);
  std::ofstream o(out + ".partial");
  if (!o) {
    std::fprintf(stderr, "%s.partial: cannot write\n", out.c_str());
    return 1;
  }
  try {
    for (const std::string& path : advbo::tools::SplitList(models)) {
      auto plain = advbo::oracle::MakeTorchScriptBackend(path, threads, ModelGraph::kPlain);
      auto frozen = advbo::oracle::MakeTorchScriptBackend(path, threads, ModelGraph::kFrozen);
      const auto [c, h, w] = ShapeOf(*plain);
      std::mt19937 gen(0);
      std::uniform_real_distribution<float> u(0.0f, 1.0f);
      std::vector<float> x(static_cast<size_t>(images) * c * h * w);
      for (auto& v : x) v = u(gen);
      const Eigen::MatrixXd a = plain->Scores(x.data(), images, c, h, w, nullptr);
      const Eigen::MatrixXd b = frozen->Scores(x.data(), images, c, h, w, nullptr);
      bool same_argmax = true;
      for (int i = 0; i < images; ++i) {
        Eigen::Index ia, ib;
        a.row(i).maxCoeff(&ia);
        b.row(i).maxCoeff(&ib);
        same_argmax = same_argmax && ia == ib;
      }
      const double max_diff = (a - b).cwiseAbs().maxCoeff();
      for (const std::string& bs : advbo::tools::SplitList(batches)) {
        const int batch = std::stoi(bs);
        if (batch < 1 || batch > images)
          throw std::invalid_argument("--batches: " + bs + " is not in 1.." +
                                      std::to_string(images));
        for (const auto* backend : {plain.get(), frozen.get()}) {
          PassMsPerImage(*backend, x, images, c, h, w, batch);  // warm-up
          std::vector<double> ms;
          for (int r = 0; r < reps; ++r)
            ms.push_back(PassMsPerImage(*backend, x, images, c, h, w, batch));
          std::sort(ms.begin(), ms.end());
          const nlohmann::json rec = {{"model", path},
                                      {"graph", backend->graph()},
                                      {"batch", batch},
                                      {"threads", threads},
                                      {"images", images},
                                      {"reps", reps},
                                      {"best_ms_per_image", ms.front()},
                                      {"median_ms_per_image", ms[ms.size() / 2]},
                                      {"max_abs_diff_frozen_vs_plain", max_diff},
                                      {"same_argmax", same_argmax},
                                      {"blas", advbo::oracle::BlasLibrary()}};
          o << rec.dump() << "\n" << std::flush;
          std::fprintf(stderr, "%-28s %-6s batch %4d: best %.3f ms/image (median %.3f)\n",
                       path.c_str(), backend->graph().c_str(), batch, ms.front(),
                       ms[ms.size() / 2]);
        }
      }
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bench_model_graph: %s\n", e.what());
    o.close();
    std::remove((out + ".partial").c_str());  // no half-written result
    return 1;
  }
  o.close();
  std::rename((out + ".partial").c_str(), out.c_str());
  return 0;
}
