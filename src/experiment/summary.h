// The one summary of a set of attack records: what `advbo attack`, `bench` and
// `evaluate` write into their summary.json and print, and what the Python table scripts
// (tools/summarize.py, tools/bench/*_table.py) read instead of recomputing it.
#pragma once

#include <nlohmann/json.hpp>
#include <utility>
#include <vector>

namespace advbo::experiment {

/// Summary of `records` (one attack's, or a whole run's; each a record as runner.h writes it:
/// success, queries, budget, seconds, model_seconds, optionally quantized_success, epsilon,
/// epsilon_effective, loops): a JSON object with
///   instances, successes, asr (% of instances),
///   successes_8bit, asr_8bit (the saved 8-bit in-ball image re-queried; null unless every
///     record was re-checked),
///   max_queries, mean_queries, median_queries (over successes; null without one),
///   mean_queries_fail_at_budget (a failure counted at its budget),
///   seconds_per_instance, model_fraction (share of the wall time in the instances' own
///     forward passes, in [0, 1]), wait_fraction (share spent waiting for other lockstep lanes
///     or worker groups, in [0, 1]), bo_over_model (the attack's own computation -- bo_seconds,
///     or the wall time less model and waiting -- over the model time; null without model time),
///   epsilon, epsilon_effective (of the first record; null in records of old versions),
///   perturbation_loops, loops_stopped_early (only when the records carry BOS^2 loops),
///   bad_queries_mean, bad_query_share (only when records carry bad_queries: mean per
///     instance, and their share of all queries used, in [0, 1]),
///   distance_at (only when the records carry it, the min-distance goal): per
///     query checkpoint "100", "250", ... {"median", "mean", "found"} of the closest
///     adversarial query's distance within that many queries -- the median over all
///     instances (one without an adversarial query counts as +inf; null when that is the
///     median), the mean over the `found` instances that have one (null without one).
///   asr and asr_8bit are null, and asr_note says why, when min-distance records say the
///     radius was not the user's (epsilon_given false): a success there means "within a
///     default radius nobody asked for".
/// Throws std::invalid_argument for an empty set and nlohmann::json's errors for a record
/// without the required fields (ReadRecords checks them on reading).
nlohmann::json SummarizeRecords(const std::vector<const nlohmann::json*>& records);

/// The median of `v` (the mean of the middle two for an even count); +inf entries count.
/// Throws std::invalid_argument for an empty v.
double Median(std::vector<double> v);

/// The query checkpoints of the min-distance goal: the distance at 100, 250, 500,
/// 1,000, 2,500, 5,000 and 10,000 queries, those within the budget.
inline constexpr long kDistanceCheckpoints[] = {100, 250, 500, 1000, 2500, 5000, 10000};

/// The closest adversarial distance within the first q queries of a run's distance trace
/// ((query index, distance) at each improvement, Referee::distance_trace); +inf before one.
double DistanceWithin(const std::vector<std::pair<long, double>>& trace, long q);

/// The record field "distance_at" of a run with `budget` queries: {"100": d, "250": d, ...}
/// for every checkpoint <= budget (null where no adversarial query came within it).
nlohmann::json DistanceAtCheckpoints(const std::vector<std::pair<long, double>>& trace,
                                     long budget);

/// SummarizeRecords of every record of `records`.
nlohmann::json SummarizeRecords(const std::vector<nlohmann::json>& records);

}  // namespace advbo::experiment
