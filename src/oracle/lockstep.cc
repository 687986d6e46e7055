#include "oracle/lockstep.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <stdexcept>
#include <string>

namespace advbo::oracle {
namespace {

void CheckLanes(int lanes) {
  if (lanes < 1 || lanes > kMaxLockstepLanes)
    throw std::invalid_argument("lockstep lanes must be in 1.." +
                                std::to_string(kMaxLockstepLanes) + ", got " +
                                std::to_string(lanes));
}

class LockstepBackend : public ScoreBackend {
 public:
  LockstepBackend(std::unique_ptr<ScoreBackend> inner, std::shared_ptr<Lockstep> lockstep)
      : inner_(std::move(inner)), lockstep_(std::move(lockstep)) {}
  Eigen::MatrixXd Scores(const float* images, int n, int c, int h, int w,
                         const QueryContext* context) const override {
    return lockstep_->Score(*inner_, images, n, c, h, w, context);
  }
  std::string name() const override { return inner_->name(); }
  bool thread_safe() const override { return inner_->thread_safe(); }
  std::string graph() const override { return inner_->graph(); }
  std::string graph_note() const override { return inner_->graph_note(); }

 private:
  std::unique_ptr<ScoreBackend> inner_;
  std::shared_ptr<Lockstep> lockstep_;
};

}  // namespace

Lockstep::Lockstep(int lanes) : lanes_(lanes) { CheckLanes(lanes); }

void Lockstep::set_lanes(int lanes) {
  CheckLanes(lanes);
  std::lock_guard<std::mutex> lock(mu_);
  if (running_) throw std::logic_error("Lockstep::set_lanes during a run");
  lanes_ = lanes;
}

LockstepStats Lockstep::stats() const {
  std::lock_guard<std::mutex> lock(mu_);
  return stats_;
}

bool Lockstep::InLane() const {
  std::lock_guard<std::mutex> lock(mu_);
  return running_ && LaneOfThisThread() >= 0;
}

int Lockstep::LaneOfThisThread() const {
  const auto it = lane_of_.find(std::this_thread::get_id());
  return it == lane_of_.end() ? -1 : it->second;
}

void Lockstep::Run(size_t n, const std::function<Commit(size_t)>& job) {
  const int lanes = static_cast<int>(std::min<size_t>(lanes_, n));
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (running_) throw std::logic_error("Lockstep::Run is not reentrant");
    if (lanes == 0) return;
    running_ = true;
    lane_.assign(lanes, Lane{});
    wake_ = std::vector<std::condition_variable>(lanes);
    for (auto& l : lane_) l.state = LaneState::kRunning;
    lane_of_.clear();
    live_ = lanes;
    waiting_ = 0;
    next_job_ = 0;
    n_jobs_ = n;
    abort_ = false;
  }
  {
    std::lock_guard<std::mutex> lock(commit_mu_);
    pending_.clear();
    next_commit_ = 0;
    error_ = nullptr;
  }
  std::vector<std::thread> threads;
  threads.reserve(lanes);
  for (int l = 0; l < lanes; ++l) threads.emplace_back([this, l, &job] { LaneMain(l, job); });
  for (auto& t : threads) t.join();
  std::exception_ptr error;
  {
    std::lock_guard<std::mutex> lock(mu_);
    running_ = false;
    lane_of_.clear();
  }
  {
    std::lock_guard<std::mutex> lock(commit_mu_);
    error = error_;
  }
  if (error) std::rethrow_exception(error);
}

void Lockstep::LaneMain(int lane, const std::function<Commit(size_t)>& job) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    lane_of_[std::this_thread::get_id()] = lane;
  }
  for (;;) {
    size_t k = 0;
    {
      std::unique_lock<std::mutex> lock(mu_);
      lane_[lane].state = LaneState::kWantJob;
      ++waiting_;
      MaybeRunRound(lock);
      wake_[lane].wait(lock, [&] { return lane_[lane].state != LaneState::kWantJob; });
      if (lane_[lane].state == LaneState::kDone) return;
      k = lane_[lane].job;
    }
    Commit commit;
    std::exception_ptr error;
    try {
      commit = job(k);
    } catch (...) {
      error = std::current_exception();
    }
    Deliver(k, std::move(commit), error);
  }
}

void Lockstep::Deliver(size_t k, Commit commit, std::exception_ptr error) {
  std::lock_guard<std::mutex> lock(commit_mu_);
  if (error && (!error_ || k < error_job_)) {
    error_ = error;
    error_job_ = k;
  }
  pending_[k] = error ? Commit() : std::move(commit);
  while (!pending_.empty() && pending_.begin()->first == next_commit_) {
    Commit c = std::move(pending_.begin()->second);
    pending_.erase(pending_.begin());
    const size_t done = next_commit_++;
    if (!c) continue;
    try {
      c();
    } catch (...) {
      if (!error_ || done < error_job_) {
        error_ = std::current_exception();
        error_job_ = done;
      }
    }
  }
  if (error_) {
    std::lock_guard<std::mutex> state(mu_);
    abort_ = true;
  }
}

Eigen::MatrixXd Lockstep::Score(const ScoreBackend& inner, const float* images, int n, int c, int h,
                                int w, const QueryContext* context) {
  std::unique_lock<std::mutex> lock(mu_);
  const int lane = running_ ? LaneOfThisThread() : -1;
  if (lane < 0) {
    lock.unlock();
    return inner.Scores(images, n, c, h, w, context);
  }
  Lane& me = lane_[lane];
  me.inner = &inner;
  me.images = images;
  me.n = n;
  me.c = c;
  me.h = h;
  me.w = w;
  me.error = nullptr;
  me.state = LaneState::kWantScore;
  ++waiting_;
  MaybeRunRound(lock);
  wake_[lane].wait(lock, [&] { return me.state == LaneState::kRunning; });
  if (me.error) std::rethrow_exception(me.error);
  return std::move(me.scores);
}

void Lockstep::MaybeRunRound(std::unique_lock<std::mutex>& lock) {
  if (waiting_ < live_) return;
  waiting_ = 0;
  std::vector<int> asking;
  for (int l = 0; l < static_cast<int>(lane_.size()); ++l) {
    Lane& lane = lane_[l];
    if (lane.state == LaneState::kWantJob) {
      if (!abort_ && next_job_ < n_jobs_) {
        lane.job = next_job_++;
        lane.state = LaneState::kRunning;
      } else {
        lane.state = LaneState::kDone;
        --live_;
      }
      wake_[l].notify_one();  // a new job (or none left): it goes on during the forward passes
    } else if (lane.state == LaneState::kWantScore) {
      lane.state = LaneState::kInFlight;
      asking.push_back(l);
    }
  }
  if (asking.empty()) return;
  lock.unlock();
  ForwardRound(asking);
  lock.lock();
  for (int l : asking) {
    lane_[l].state = LaneState::kRunning;
    wake_[l].notify_one();
  }
}

void Lockstep::ForwardRound(const std::vector<int>& asking) {
  const Lane& first = lane_[asking.front()];
  const int c = first.c, h = first.h, w = first.w, b = lanes_;
  const size_t d = static_cast<size_t>(c) * h * w;
  long rows = 0, forwards = 0;
  std::exception_ptr error;
  Eigen::MatrixXd all;
  const auto t0 = std::chrono::steady_clock::now();
  try {
    for (int l : asking) {
      const Lane& lane = lane_[l];
      if (lane.inner != first.inner || lane.c != c || lane.h != h || lane.w != w)
        throw std::logic_error("lockstep lanes ask different models or image shapes");
      rows += lane.n;
    }
    forwards = (rows + b - 1) / b;
    std::vector<float> batch(static_cast<size_t>(forwards) * b * d, 0.0f);
    size_t at = 0;
    for (int l : asking) {
      std::memcpy(batch.data() + at * d, lane_[l].images, lane_[l].n * d * sizeof(float));
      at += lane_[l].n;
    }
    for (long f = 0; f < forwards; ++f) {
      Eigen::MatrixXd s = first.inner->Scores(batch.data() + f * b * d, b, c, h, w, nullptr);
      if (s.rows() != b)
        throw OutputError(first.inner->name() + ": output must have one row per image (" +
                          std::to_string(b) + "), got " + std::to_string(s.rows()));
      if (f == 0) all.resize(forwards * b, s.cols());
      if (s.cols() != all.cols())
        throw OutputError(first.inner->name() + ": the class count changed between batches");
      all.middleRows(f * b, b) = s;
    }
  } catch (...) {
    error = std::current_exception();
  }
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  long at = 0;
  for (int l : asking) {
    Lane& lane = lane_[l];
    if (error)
      lane.error = error;
    else
      lane.scores = all.middleRows(at, lane.n);
    at += lane.n;
  }
  std::lock_guard<std::mutex> lock(mu_);
  ++stats_.rounds;
  stats_.forwards += forwards;
  stats_.rows += rows;
  stats_.padded_rows += forwards * b - rows;
  stats_.forward_seconds += seconds;
}

std::unique_ptr<ScoreBackend> MakeLockstepBackend(std::unique_ptr<ScoreBackend> inner,
                                                  std::shared_ptr<Lockstep> lockstep) {
  if (!inner || !lockstep) throw std::invalid_argument("MakeLockstepBackend: null argument");
  return std::make_unique<LockstepBackend>(std::move(inner), std::move(lockstep));
}

}  // namespace advbo::oracle
