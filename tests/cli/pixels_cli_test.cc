// 8-bit queries end to end (docs/design.md "8-bit queries"): with --pixels 8bit every
// success of `advbo attack` is a PNG on disk that the model, reading it back, puts in the
// target class, and its pixels lie on the grid inside the ball; --pixels float keeps the
// float threat model. Reads the PNGs back with the library's own loader and model.
#include <gtest/gtest.h>

#include <Eigen/Dense>
#include <cctype>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>
#include <string>

#include "cli/cli_test_util.h"
#include "data/datasets.h"
#include "oracle/classifier.h"

namespace {
namespace fs = std::filesystem;
using advbo::testing::kRoot;
using advbo::testing::ReadJsonl;
using advbo::testing::RunAdvbo;
using advbo::testing::Slurp;

class Pixels : public advbo::testing::TempDirTest {
 protected:
  // Runs `attack` on the shipped `dataset` with --save-images; checks every record and
  // every saved PNG; returns the number of successes.
  int AttackAndReadBack(const std::string& dataset, const std::string& attack, double eps,
                        const std::string& extra) {
    const fs::path out = dir_ / (dataset + ".jsonl"), png = dir_ / ("png_" + dataset);
    const int rc = RunAdvbo("attack --dataset " + dataset + " --attack " + attack + " --eps " +
                                std::to_string(eps) + " -n 2 --budget 300 --seed 1 -q " + extra +
                                " -o " + out.string() + " --save-images " + png.string(),
                            dir_ / "log");
    EXPECT_EQ(rc, 0) << Slurp(dir_ / "log");
    auto model = advbo::oracle::Classifier::Load(kRoot + "/models/" + dataset + "_cw.pt");
    int successes = 0;
    for (const auto& r : ReadJsonl(out)) {
      EXPECT_EQ(r["pixels"], "8bit");
      const bool ok = r["success"].get<bool>();
      // 8-bit mode: the successful query is the saved image, so re-querying it agrees.
      EXPECT_EQ(r["quantized_success"].get<bool>(), ok);
      EXPECT_LE(r["linf"].get<double>(), eps);
      EXPECT_NEAR(r["linf"].get<double>(), r["quantized_linf"].get<double>(), 1e-7);
      const int target = r["target"].get<int>();
      const std::string tag =
          std::to_string(r["image_index"].get<int>()) + "_t" + std::to_string(target) + ".png";
      const fs::path adv = png / ("adversarial_" + tag);
      EXPECT_EQ(fs::exists(adv), ok) << tag;
      if (!ok) continue;
      ++successes;
      const advbo::data::ImageSet back = advbo::data::ReadImages(adv.string(), model->channels());
      const advbo::data::ImageSet clean =
          advbo::data::ReadImages((png / ("clean_" + tag)).string(), model->channels());
      EXPECT_EQ(back.size(), 1u);
      if (back.size() != 1) continue;
      double linf = 0;
      for (size_t i = 0; i < back.image_size(); ++i)
        linf = std::max(linf, std::abs(double(back.image(0)[i]) - clean.image(0)[i]));
      EXPECT_LE(linf, eps) << tag;
      Eigen::Index arg;
      model->LogProbabilities(back.image(0), 1).row(0).maxCoeff(&arg);
      EXPECT_EQ(arg, target) << tag << ": the saved PNG is not adversarial";
    }
    return successes;
  }
};

TEST_F(Pixels, EverySuccessIsASavedPngOfTheTargetClassMnist) {
  EXPECT_GE(AttackAndReadBack("mnist", "square", 0.3, ""), 5);
}

TEST_F(Pixels, EverySuccessIsASavedPngOfTheTargetClassCifar10) {
  EXPECT_GE(AttackAndReadBack("cifar10", "square", 0.05, "--pixels 8bit"), 1);
}

// A hard-label attack that fails at eps answers with the clean image (record linf 0, no
// adversarial PNG) and saves its closest adversarial query as closest_<tag>.png: on the 8-bit
// grid, so the PNG read back is still misclassified, at exactly the recorded distance, outside
// the ball.
TEST_F(Pixels, AFailedHardLabelRunSavesItsClosestAdversarialQuery) {
  const fs::path out = dir_ / "hl.jsonl", png = dir_ / "png_hl";
  ASSERT_EQ(RunAdvbo("attack --attack rays --feedback label --untargeted --eps 0.01 --indices 0 "
                     "--budget 200 "
                     "--seed 1 -q -o " +
                         out.string() + " --save-images " + png.string(),
                     dir_ / "log"),
            0)
      << Slurp(dir_ / "log");
  const auto records = ReadJsonl(out);
  ASSERT_EQ(records.size(), 1u);
  const auto& r = records[0];
  EXPECT_FALSE(r["success"].get<bool>());
  EXPECT_EQ(r["linf"].get<double>(), 0.0);
  ASSERT_TRUE(r["distance"].is_number());
  const std::string tag = "0_tu.png";
  EXPECT_FALSE(fs::exists(png / ("adversarial_" + tag)));
  ASSERT_TRUE(fs::exists(png / ("closest_" + tag)));
  auto model = advbo::oracle::Classifier::Load(kRoot + "/models/mnist_cw.pt");
  const auto near = advbo::data::ReadImages((png / ("closest_" + tag)).string(), 1);
  const auto clean = advbo::data::ReadImages((png / ("clean_" + tag)).string(), 1);
  ASSERT_EQ(near.size(), 1u);
  double linf = 0;
  for (size_t i = 0; i < near.image_size(); ++i)
    linf = std::max(linf, std::abs(double(near.image(0)[i]) - clean.image(0)[i]));
  EXPECT_NEAR(linf, r["distance"].get<double>(), 1e-6);
  EXPECT_GT(linf, 0.01);
  Eigen::Index arg;
  model->LogProbabilities(near.image(0), 1).row(0).maxCoeff(&arg);
  EXPECT_NE(arg, r["true_class"].get<int>());
}

TEST_F(Pixels, Bos2SuccessesAreSavedPngs) {
  EXPECT_GE(AttackAndReadBack("mnist", "bos2", 0.3, "--indices 0"), 3);
}

TEST_F(Pixels, FloatModeQueriesOffTheGridAndRecordsSayFloat) {
  const fs::path out = dir_ / "f.jsonl";
  ASSERT_EQ(RunAdvbo("attack --attack square --indices 0 --target 3 --budget 50 --seed 1 -q "
                     "--pixels float -o " +
                         out.string(),
                     dir_ / "log"),
            0)
      << Slurp(dir_ / "log");
  const auto r = ReadJsonl(out).at(0);
  EXPECT_EQ(r["pixels"], "float");
  // Square's +-eps stripes in float: the L_inf distance is eps itself (0.3 as float), which
  // no 8-bit image reaches (76/255 = 0.298).
  EXPECT_NEAR(r["linf"].get<double>(), 0.3, 1e-6);
  EXPECT_LT(r["quantized_linf"].get<double>(), 0.3 - 1e-3);
}

TEST_F(Pixels, BadValuesAreRefused) {
  for (const char* v : {"\"\"", "8-bit", "uint8", "FLOAT"}) {
    EXPECT_EQ(RunAdvbo(std::string("attack --indices 0 --budget 5 -q --pixels ") + v, dir_ / "log"),
              1)
        << v;
    EXPECT_NE(Slurp(dir_ / "log").find("--pixels"), std::string::npos) << Slurp(dir_ / "log");
  }
  // eps below one 8-bit step has no 8-bit image in the ball other than the clean one.
  EXPECT_EQ(RunAdvbo("attack --indices 0 --budget 5 -q --eps 0.003", dir_ / "log"), 1);
  EXPECT_NE(Slurp(dir_ / "log").find("below one 8-bit step"), std::string::npos)
      << Slurp(dir_ / "log");
  EXPECT_EQ(RunAdvbo("attack --indices 0 --budget 5 -q --eps 0.003 --pixels float -o " +
                         (dir_ / "ok.jsonl").string(),
                     dir_ / "log"),
            0)
      << Slurp(dir_ / "log");
}

}  // namespace
