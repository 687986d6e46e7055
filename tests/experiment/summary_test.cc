// The summary's distance fields of the min-distance goal: the closest adversarial
// distance within q queries read off a distance trace, the record's checkpoints within the
// budget, and the median / mean over records, an instance without an adversarial query
// counting as +inf in the median and not at all in the mean.
#include "experiment/summary.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

namespace advbo::experiment {
namespace {

TEST(DistanceSummary, CheckpointsReadTheTraceAndTheSummaryTakesMedianAndMean) {
  const std::vector<std::pair<long, double>> trace = {{3, 9.0}, {120, 4.0}, {260, 2.5}, {900, 2.0}};
  EXPECT_TRUE(std::isinf(DistanceWithin(trace, 2)));
  EXPECT_EQ(DistanceWithin(trace, 3), 9.0);
  EXPECT_EQ(DistanceWithin(trace, 259), 4.0);
  EXPECT_EQ(DistanceWithin(trace, 10000), 2.0);
  const nlohmann::json at = DistanceAtCheckpoints(trace, 600);  // 100, 250, 500 only
  EXPECT_EQ(at, nlohmann::json({{"100", 9.0}, {"250", 4.0}, {"500", 2.5}}));
  EXPECT_TRUE(DistanceAtCheckpoints({{150, 1.0}}, 100)["100"].is_null());

  auto record = [](nlohmann::json at) {
    return nlohmann::json{{"success", false}, {"queries", 600},       {"budget", 600},
                          {"seconds", 1.0},   {"model_seconds", 0.5}, {"distance_at", at}};
  };
  const std::vector<nlohmann::json> records = {record({{"100", 9.0}, {"250", 4.0}}),
                                               record({{"100", 3.0}, {"250", 1.0}}),
                                               record({{"100", nullptr}, {"250", 2.0}})};
  const nlohmann::json s = SummarizeRecords(records);
  ASSERT_TRUE(s.contains("distance_at"));
  EXPECT_EQ(s["distance_at"]["100"]["median"], 9.0);  // {3, 9, +inf}
  EXPECT_EQ(s["distance_at"]["100"]["mean"], 6.0);    // of the 2 found
  EXPECT_EQ(s["distance_at"]["100"]["found"], 2);
  EXPECT_EQ(s["distance_at"]["250"]["median"], 2.0);
  EXPECT_DOUBLE_EQ(s["distance_at"]["250"]["mean"].get<double>(), 7.0 / 3);
  // Mostly without an adversarial query: the median is +inf, reported as null.
  const nlohmann::json none = SummarizeRecords(
      {record({{"100", nullptr}}), record({{"100", nullptr}}), record({{"100", 5.0}})});
  EXPECT_TRUE(none["distance_at"]["100"]["median"].is_null());
  EXPECT_EQ(none["distance_at"]["100"]["mean"], 5.0);
  // Records of the default goal carry no distance_at, nor does their summary.
  EXPECT_FALSE(
      SummarizeRecords(std::vector<nlohmann::json>{record(nullptr)}).contains("distance_at"));
}

}  // namespace
}  // namespace advbo::experiment
