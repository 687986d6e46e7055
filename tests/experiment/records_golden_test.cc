// The records guard that runs everywhere: every score-based attack without a GP, in float and
// 8-bit queries, against a linear model computed in plain scalar code (tests/attacks/
// linear_model.h: no BLAS, no LibTorch), must end exactly as the golden file says -- its query
// count, success, best objective and answer image. A change that moves any query of these
// attacks shows here on any machine; the GP attacks (bos2, bayesopt) are left out because their
// Eigen arithmetic is vectorised for the build machine's CPU and differs in the last bits on
// another.
//
// The golden file is this version's output: ADVBO_WRITE_GOLDEN=1 build/tests/test_experiment
// --gtest_filter='RecordsGolden.*' rewrites tests/experiment/golden/linear_records.json after a
// change that is meant to alter the records (say so in the commit).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "attacks/attack.h"
#include "attacks/linear_model.h"
#include "bo/random.h"
#include "oracle/oracle.h"

namespace advbo::experiment {
namespace {

const std::string kGolden =
    std::string(ADVBO_SOURCE_DIR) + "/tests/experiment/golden/linear_records.json";
constexpr int kSide = 10;

// A clean 8-bit image of kSide x kSide pixels from a fixed integer sequence.
std::vector<float> CleanImage() {
  std::vector<float> x(kSide * kSide);
  unsigned s = 12345;
  for (auto& v : x) {
    s = s * 1103515245u + 12345u;
    v = static_cast<float>((s >> 16) % 256) / 255.0f;
  }
  return x;
}

// One attack's run: the fields that a change to its queries would move.
nlohmann::json RunOne(const std::string& attack, oracle::PixelSpace pixels) {
  const std::vector<float> clean = CleanImage();
  const Eigen::VectorXd a = testing::MixedSignWeights(kSide * kSide, 5);
  const auto model = testing::LinearModel(a, clean, -2.5, kSide, nullptr);
  oracle::Referee orc(*model, clean.data(), 0, -1,
                      oracle::BallShape{oracle::Norm::kLinf, 0.05, pixels}, 150);
  attacks::AttackContext ctx;
  ctx.dataset = "custom";
  ctx.height = ctx.width = kSide;
  bo::Rng rng(7);
  const attacks::AttackResult r = attacks::MakeAttack(attack, ctx)->Run(orc, rng, {});
  double checksum = 0;  // a position-weighted sum of the answer's pixels
  for (size_t i = 0; i < r.adversarial.size(); ++i) checksum += (i + 1.0) * r.adversarial[i];
  return {{"success", r.success},
          {"queries", r.queries},
          {"queries_used", orc.queries()},
          {"best_objective", r.best_objective},
          {"answer_checksum", checksum}};
}

TEST(RecordsGolden, GpFreeScoreAttacksEndAsTheGoldenFileSays) {
  nlohmann::json now = nlohmann::json::object();
  for (const char* attack :
       {"square", "parsimonious", "random", "signhunter", "nes", "bandits", "zoo", "genattack"})
    for (oracle::PixelSpace p : {oracle::PixelSpace::kFloat, oracle::PixelSpace::k8bit})
      now[std::string(attack) + "/" + oracle::PixelSpaceName(p)] = RunOne(attack, p);
  if (std::getenv("ADVBO_WRITE_GOLDEN")) {
    std::ofstream(kGolden) << now.dump(1) << "\n";
    GTEST_SKIP() << "wrote " << kGolden;
  }
  std::ifstream in(kGolden);
  ASSERT_TRUE(in) << kGolden << " is missing";
  const nlohmann::json golden = nlohmann::json::parse(in);
  ASSERT_EQ(now.size(), golden.size());
  int succeeded = 0;
  for (const auto& [key, want] : golden.items()) {
    ASSERT_TRUE(now.contains(key)) << key;
    const nlohmann::json& got = now[key];
    EXPECT_EQ(got["success"], want["success"]) << key;
    EXPECT_EQ(got["queries"], want["queries"]) << key;
    EXPECT_EQ(got["queries_used"], want["queries_used"]) << key;
    succeeded += want["success"].get<bool>();
#ifdef ADVBO_SANITIZED
    // The sanitizer build compiles at -O1, where GCC contracts other multiply-adds into FMAs:
    // values differ in their last bits there; the counts above are what it checks.
    continue;
#endif
    // Scalar arithmetic: equal to rounding (FMA contraction may differ between compilers).
    EXPECT_NEAR(got["best_objective"].get<double>(), want["best_objective"].get<double>(), 1e-9)
        << key;
    EXPECT_NEAR(got["answer_checksum"].get<double>(), want["answer_checksum"].get<double>(), 1e-6)
        << key;
  }
  // The case is neither trivial nor hopeless: some attacks succeed, not all at once.
  EXPECT_GT(succeeded, 0);
  for (const auto& [key, want] : golden.items())
    EXPECT_GT(want["queries_used"].get<long>(), 1) << key;
}

}  // namespace
}  // namespace advbo::experiment
