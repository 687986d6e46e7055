// The one summary of a set of attack records (issue #57): what `advbo attack`, `bench` and
// `evaluate` write into their summary.json and print, and what the Python table scripts
// (tools/summarize.py, tools/bench/*_table.py) read instead of recomputing it.
#pragma once

#include <nlohmann/json.hpp>
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
///   seconds_per_instance, model_fraction (share of the wall time inside the model, in [0, 1]),
///   epsilon, epsilon_effective (of the first record; null in records of old versions),
///   perturbation_loops, loops_stopped_early (only when the records carry BOS^2 loops).
/// Throws std::invalid_argument for an empty set and nlohmann::json's errors for a record
/// without the required fields (ReadRecords checks them on reading).
nlohmann::json SummarizeRecords(const std::vector<const nlohmann::json*>& records);

/// SummarizeRecords of every record of `records`.
nlohmann::json SummarizeRecords(const std::vector<nlohmann::json>& records);

}  // namespace advbo::experiment
