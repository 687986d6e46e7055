// The checks that say when an evaluation's number cannot be trusted (experiment/trust_checks.h):
// each fires on a model made to trigger it -- the shipped MNIST CNN wrapped in TorchScript
// with noise on its logits (randomised), a softmax on them (probabilities), its input rounded
// to a coarse grid (zero gradients, and black-box breaks the white-box reference cannot
// follow), or a black-box budget too small to find what APGD finds -- and none fires on the
// shipped CNN itself. The thresholds are tested on their edges.
#include "experiment/trust_checks.h"

#include <gtest/gtest.h>
#include <torch/script.h>

#include <set>
#include <string>
#include <vector>

#include "cli/cli_test_util.h"
#include "experiment/evaluation.h"

namespace advbo::experiment {
namespace {
namespace fs = std::filesystem;

class TrustChecks : public advbo::testing::TempDirTest {
 protected:
  // The shipped MNIST CNN inside a TorchScript module whose forward is `body` (a function of
  // x and self.net), saved as <name>.pt.
  std::string Wrapped(const std::string& name, const std::string& body) {
    torch::jit::Module m("Wrapped");
    m.register_module("net",
                      torch::jit::load(std::string(ADVBO_SOURCE_DIR) + "/models/mnist_cw.pt"));
    m.define("def forward(self, x):\n    return " + body + "\n");
    const std::string path = (dir_ / (name + ".pt")).string();
    m.save(path);
    return path;
  }

  // An evaluation of the first 8 MNIST test images at eps 0.3 with a short reference.
  EvaluationOptions Options(const std::string& model, long budget, const std::string& out) {
    EvaluationOptions o;
    o.spec.dataset = "mnist";
    o.spec.model = model;
    o.spec.num_images = 8;
    o.spec.budget = budget;
    o.spec.threads = 1;
    o.spec.eps = 0.3;
    o.apgd.iterations = 20;
    o.apgd.target_classes = 2;
    o.out_dir = (dir_ / out).string();
    return o;
  }

  static std::set<std::string> Fired(const nlohmann::json& summary) {
    std::set<std::string> names;
    for (const auto& f : summary.at("flags")) names.insert(f.at("check").get<std::string>());
    return names;
  }
};

TEST_F(TrustChecks, NoneFiresOnTheShippedCnn) {
  const EvaluationResult r =
      Evaluate(Options(std::string(ADVBO_SOURCE_DIR) + "/models/mnist_cw.pt", 10000, "cw"));
  EXPECT_EQ(Fired(r.summary), std::set<std::string>{}) << r.summary["flags"].dump();
  EXPECT_FALSE(r.summary["checks"]["randomised_outputs"]["randomised"].get<bool>());
  EXPECT_EQ(r.summary["checks"]["randomised_outputs"]["queries"].get<long>(), 8);
  EXPECT_EQ(r.summary["checks"]["zero_gradient_images"].get<long>(), 0);
  EXPECT_NE(r.table.find("checks                     none fired"), std::string::npos) << r.table;
}

TEST_F(TrustChecks, RandomisedOutputsFire) {
  const std::string noisy =
      Wrapped("noisy", "self.net.forward(x) + 0.5 * torch.randn([x.size(0), 10])");
  EvaluationOptions o = Options(noisy, 200, "noisy");
  o.reference = "none";
  const EvaluationResult r = Evaluate(o);
  EXPECT_TRUE(Fired(r.summary).count("randomised_outputs")) << r.summary["flags"].dump();
  EXPECT_GT(r.summary["checks"]["randomised_outputs"]["max_difference"].get<double>(), 0.01);
  EXPECT_NE(r.table.find("randomised outputs"), std::string::npos) << r.table;
}

TEST_F(TrustChecks, ProbabilityOutputsFire) {
  const std::string probs = Wrapped("probs", "torch.softmax(self.net.forward(x), 1)");
  EvaluationOptions o = Options(probs, 200, "probs");
  o.reference = "none";
  const EvaluationResult r = Evaluate(o);
  EXPECT_EQ(Fired(r.summary), std::set<std::string>{"probability_outputs"})
      << r.summary["flags"].dump();
}

TEST_F(TrustChecks, ZeroGradientsAndMaskingFire) {
  // Inputs rounded to quarters: the model still classifies the digits, its input gradient is
  // zero everywhere, and APGD's signed steps cannot move; Square's vertex steps still flip
  // the rounded pixels.
  const std::string stepped = Wrapped("stepped", "self.net.forward(torch.round(x * 4.0) / 4.0)");
  const EvaluationResult r = Evaluate(Options(stepped, 2000, "stepped"));
  const auto fired = Fired(r.summary);
  EXPECT_TRUE(fired.count("zero_gradients")) << r.summary["flags"].dump();
  EXPECT_TRUE(fired.count("masking_suspected")) << r.summary.dump(1);
  EXPECT_EQ(r.summary["checks"]["zero_gradient_images"].get<long>(),
            r.summary["checks"]["reference_images"].get<long>());
}

TEST_F(TrustChecks, VertexResistanceFiresWhenTheReferenceFindsMore) {
  // At eps 0.15, 2 queries per image leave Square nearly powerless where APGD breaks most
  // images.
  EvaluationOptions o = Options(std::string(ADVBO_SOURCE_DIR) + "/models/mnist_cw.pt", 2, "short");
  o.spec.eps = 0.15;
  const EvaluationResult r = Evaluate(o);
  EXPECT_TRUE(Fired(r.summary).count("vertex_resistance")) << r.summary.dump(1);
  EXPECT_NE(r.table.find("the black-box number is an upper bound"), std::string::npos);
}

TEST(TrustCheckThresholds, FireAboveTheirEdges) {
  // 1,000 images: 2 ensemble-only breaks are 0.2 points (not above AutoAttack's 0.2), 3 are
  // 0.3; 20 reference-only breaks are 2.0 points, 21 are 2.1.
  auto summary = [](long ensemble_only, long reference_only) {
    return nlohmann::json{{"images", 1000},
                          {"ensemble", {"square"}},
                          {"reference", {{"applies", true}}},
                          {"reference_robust_accuracy", 0.5},
                          {"robust_reference_only", ensemble_only},
                          {"robust_blackbox_only", reference_only}};
  };
  for (const auto& [ens, ref, flags] : std::vector<std::tuple<long, long, size_t>>{
           {2, 20, 0}, {3, 20, 1}, {2, 21, 1}, {3, 21, 2}}) {
    nlohmann::json s = summary(ens, ref);
    AddTrustChecks(&s, {}, OutputProbe{}, false);
    EXPECT_EQ(s["flags"].size(), flags) << ens << " " << ref << ": " << s["flags"].dump();
  }
  // Without a reference number the comparison checks stay silent.
  nlohmann::json s = summary(50, 50);
  s["reference_robust_accuracy"] = nullptr;
  AddTrustChecks(&s, {}, OutputProbe{}, false);
  EXPECT_TRUE(s["flags"].empty());
}

}  // namespace
}  // namespace advbo::experiment
