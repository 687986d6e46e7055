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

void CheckGroups(int groups) {
  if (groups < 1 || groups > kMaxLockstepGroups)
    throw std::invalid_argument("lockstep worker groups must be in 1.." +
                                std::to_string(kMaxLockstepGroups) + ", got " +
                                std::to_string(groups));
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

Lockstep::Lockstep(int lanes, int groups) : lanes_(lanes), groups_(groups) {
  CheckLanes(lanes);
  CheckGroups(groups);
}

void Lockstep::set_lanes(int lanes) {
  CheckLanes(lanes);
  std::lock_guard<std::mutex> lock(mu_);
  if (running_) throw std::logic_error("Lockstep::set_lanes during a run");
  lanes_ = lanes;
}

void Lockstep::set_groups(int groups) {
  CheckGroups(groups);
  std::lock_guard<std::mutex> lock(mu_);
  if (running_) throw std::logic_error("Lockstep::set_groups during a run");
  groups_ = groups;
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
  int lanes = 0;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (running_) throw std::logic_error("Lockstep::Run is not reentrant");
    // Group g takes jobs g, g + W, ...: n / W of them, one more for the first n % W groups.
    const size_t w = static_cast<size_t>(groups_);
    group_.assign(groups_, Group{});
    lane_.clear();
    for (int g = 0; g < groups_; ++g) {
      Group& gr = group_[g];
      gr.n_jobs = n / w + (static_cast<size_t>(g) < n % w ? 1 : 0);
      gr.live = static_cast<int>(std::min<size_t>(lanes_, gr.n_jobs));
      for (int l = 0; l < gr.live; ++l) {
        Lane lane;
        lane.state = LaneState::kRunning;
        lane.group = g;
        lane_.push_back(lane);
      }
    }
    lanes = static_cast<int>(lane_.size());
    if (lanes == 0) return;
    running_ = true;
    wake_ = std::vector<std::condition_variable>(lanes);
    lane_of_.clear();
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
      ++group_[lane_[lane].group].waiting;
      MaybeRunRound(lock, lane_[lane].group);
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
  const auto t_ask = std::chrono::steady_clock::now();
  Lane& me = lane_[lane];
  me.inner = &inner;
  me.images = images;
  me.n = n;
  me.c = c;
  me.h = h;
  me.w = w;
  me.error = nullptr;
  me.state = LaneState::kWantScore;
  ++group_[me.group].waiting;
  MaybeRunRound(lock, me.group);
  wake_[lane].wait(lock, [&] { return me.state == LaneState::kRunning; });
  if (context && context->timing) {
    // The lane's own model time is its images' share of the round's forward passes; the
    // rest of its wall time in this call was waiting.
    const double wall =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t_ask).count();
    context->timing->wait_seconds += std::max(0.0, wall - me.forward_share);
  }
  if (me.error) std::rethrow_exception(me.error);
  return std::move(me.scores);
}

void Lockstep::MaybeRunRound(std::unique_lock<std::mutex>& lock, int g) {
  Group& gr = group_[g];
  if (gr.waiting < gr.live) return;
  gr.waiting = 0;
  std::vector<int> asking;
  for (int l = 0; l < static_cast<int>(lane_.size()); ++l) {
    Lane& lane = lane_[l];
    if (lane.group != g) continue;
    if (lane.state == LaneState::kWantJob) {
      if (!abort_ && gr.next_job < gr.n_jobs) {
        lane.job = static_cast<size_t>(g) + gr.next_job++ * static_cast<size_t>(groups_);
        lane.state = LaneState::kRunning;
      } else {
        lane.state = LaneState::kDone;
        --gr.live;
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

Eigen::MatrixXd Lockstep::ScoreInChunks(const std::vector<int>& asking, long rows,
                                        long* forwards) const {
  const Lane& first = lane_[asking.front()];
  const int c = first.c, h = first.h, w = first.w, b = lanes_;
  const size_t d = static_cast<size_t>(c) * h * w;
  if (b == 1) {
    // One lane per group (worker groups without batching): its call goes to the model as it
    // is, bit for bit a call outside lockstep.
    *forwards = 1;
    Eigen::MatrixXd s = first.inner->Scores(first.images, first.n, c, h, w, nullptr);
    if (s.rows() != first.n)
      throw OutputError(first.inner->name() + ": output must have one row per image (" +
                        std::to_string(first.n) + "), got " + std::to_string(s.rows()));
    return s;
  }
  *forwards = (rows + b - 1) / b;
  std::vector<float> batch(static_cast<size_t>(*forwards) * b * d, 0.0f);
  size_t at = 0;
  for (int l : asking) {
    std::memcpy(batch.data() + at * d, lane_[l].images, lane_[l].n * d * sizeof(float));
    at += lane_[l].n;
  }
  Eigen::MatrixXd all;
  for (long f = 0; f < *forwards; ++f) {
    Eigen::MatrixXd s = first.inner->Scores(batch.data() + f * b * d, b, c, h, w, nullptr);
    if (s.rows() != b)
      throw OutputError(first.inner->name() + ": output must have one row per image (" +
                        std::to_string(b) + "), got " + std::to_string(s.rows()));
    if (f == 0) all.resize(*forwards * b, s.cols());
    if (s.cols() != all.cols())
      throw OutputError(first.inner->name() + ": the class count changed between batches");
    all.middleRows(f * b, b) = s;
  }
  return all;
}

void Lockstep::ForwardRound(const std::vector<int>& asking) {
  const Lane& first = lane_[asking.front()];
  long rows = 0, forwards = 0;
  std::exception_ptr error;
  Eigen::MatrixXd all;
  auto t0 = std::chrono::steady_clock::now();
  try {
    for (int l : asking) {
      const Lane& lane = lane_[l];
      if (lane.inner != first.inner || lane.c != first.c || lane.h != first.h || lane.w != first.w)
        throw std::logic_error("lockstep lanes ask different models or image shapes");
      rows += lane.n;
    }
    // Groups' rounds run at once; a back end that is not thread-safe takes one at a time.
    std::unique_lock<std::mutex> serial(forward_mu_, std::defer_lock);
    if (!first.inner->thread_safe()) serial.lock();
    t0 = std::chrono::steady_clock::now();  // waiting for another group's forward is not scoring
    all = ScoreInChunks(asking, rows, &forwards);
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
    lane.forward_share = rows > 0 ? seconds * lane.n / static_cast<double>(rows) : 0.0;
    at += lane.n;
  }
  std::lock_guard<std::mutex> lock(mu_);
  ++stats_.rounds;
  stats_.forwards += forwards;
  stats_.rows += rows;
  stats_.padded_rows += lanes_ == 1 ? 0 : forwards * lanes_ - rows;
  stats_.forward_seconds += seconds;
}

std::unique_ptr<ScoreBackend> MakeLockstepBackend(std::unique_ptr<ScoreBackend> inner,
                                                  std::shared_ptr<Lockstep> lockstep) {
  if (!inner || !lockstep) throw std::invalid_argument("MakeLockstepBackend: null argument");
  return std::make_unique<LockstepBackend>(std::move(inner), std::move(lockstep));
}

}  // namespace advbo::oracle
