#include "attacks/attack.h"

#include <chrono>
#include <stdexcept>

namespace advbo::attacks {

double NowSeconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

void FinishResult(const oracle::QueryOracle& oracle, double start_seconds, AttackResult* r) {
  r->success = oracle.succeeded();
  r->queries = r->success ? oracle.first_success_query() : oracle.queries();
  r->best_objective = oracle.best_objective();
  r->adversarial = r->success ? oracle.success_image() : oracle.best_image();
  if (r->adversarial.empty()) r->adversarial = oracle.clean();
  r->seconds = NowSeconds() - start_seconds;
  r->model_seconds = oracle.model_seconds();
  r->bo_seconds = r->seconds - r->model_seconds;
}

}  // namespace advbo::attacks
