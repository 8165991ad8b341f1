#include "engine/comm/elastic.hpp"

#include <algorithm>
#include <nlohmann/json.hpp>
#include <thread>
#include <utility>

#include "engine/core/error.hpp"

namespace laconic::comm {
namespace {

using Clock = std::chrono::steady_clock;

// The store's keys of an elastic run, written once.
std::string join_key(int rank, int incarnation) { return str_cat("elastic/join/", rank, "/", incarnation); }
std::string admit_key(int rank, int incarnation) { return str_cat("elastic/admit/", rank, "/", incarnation); }
std::string admission_key(int number) { return str_cat("elastic/gen/", number); }
std::string alive_key(int number, int rank) { return str_cat("elastic/alive/", number, "/", rank); }
std::string recovery_key(int number) { return str_cat("elastic/recovery/", number); }
std::string stop_key(std::int64_t epoch) { return str_cat("elastic/stop/", epoch); }
std::string failed_key(int number) { return str_cat("elastic/failed/", number); }
const char* const kClosedKey = "elastic/closed";
// What a member that cannot reach worker 0 reports instead of its completed steps.
const char* const kUnreachable = "unreachable";

std::vector<char> store_bytes_of(const std::string& text) { return {text.begin(), text.end()}; }
std::string store_text_of(const std::vector<char>& bytes) { return {bytes.begin(), bytes.end()}; }

std::size_t index_in(const std::vector<int>& ranks, int rank) {
  const auto it = std::lower_bound(ranks.begin(), ranks.end(), rank);
  LACONIC_ENFORCE(it != ranks.end() && *it == rank, "rank ", rank, " is not a member");
  return static_cast<std::size_t>(it - ranks.begin());
}

// Polls `ready` every 2 ms until it is true; CommError saying `what` after `timeout`.
template <class Ready>
void poll_until(Ready ready, std::chrono::milliseconds timeout, const std::string& what) {
  const auto deadline = Clock::now() + timeout;
  while (!ready()) {
    if (Clock::now() > deadline) throw CommError(str_cat("elastic run: ", what, " within ", timeout.count(), " ms"));
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
}

}  // namespace

std::string elastic_gone_key(int rank, int incarnation) { return str_cat("elastic/gone/", rank, "/", incarnation); }

std::string elastic_beacon_key() { return "elastic/beacon"; }

namespace {

// Where a generation's members meet: the run's store under the generation's prefix. A wait ends
// with CommError as soon as one of its members is posted gone (a relaunch that died before it
// connected), not at the timeout.
class GenerationStore : public KeyValueStore {
 public:
  GenerationStore(std::shared_ptr<KeyValueStore> run, const Generation& g)
      : run_(std::move(run)), prefix_(str_cat("elastic/g", g.number, "/")), number_(g.number) {
    for (std::size_t i = 0; i < g.members.size(); ++i)
      members_.emplace_back(g.members[i], elastic_gone_key(g.members[i], g.incarnations[i]));
  }
  void set(const std::string& key, const std::vector<char>& value) override { run_->set(prefix_ + key, value); }
  std::vector<char> get(const std::string& key, std::chrono::milliseconds timeout) override {
    wait({key}, timeout);
    return run_->get(prefix_ + key, timeout);
  }
  bool check(const std::string& key) override { return run_->check(prefix_ + key); }
  void wait(const std::vector<std::string>& keys, std::chrono::milliseconds timeout) override {
    poll_until(
        [&] {
          for (const auto& [rank, gone] : members_)
            if (run_->check(gone))
              throw CommError(str_cat("elastic run: worker ", rank, " of generation ", number_,
                                      " was posted gone before it connected"));
          for (const auto& key : keys)
            if (!run_->check(prefix_ + key)) return false;
          return true;
        },
        timeout, str_cat("the members of generation ", number_, " did not all connect"));
  }

 private:
  std::shared_ptr<KeyValueStore> run_;
  std::string prefix_;
  int number_;
  std::vector<std::pair<int, std::string>> members_;  // each member and its gone key
};

}  // namespace

bool Generation::has(int rank) const { return std::binary_search(members.begin(), members.end(), rank); }

bool Generation::receives(int rank) const {
  if (!has(rank)) return false;
  const std::int64_t done = completed[index_in(members, rank)];
  return done < 0 || done < step;
}

std::string Generation::to_text() const {
  return nlohmann::json{{"number", number},   {"members", members},     {"incarnations", incarnations},
                        {"joiners", joiners}, {"leavers", leavers},     {"step", step},
                        {"source", source},   {"completed", completed}, {"quorum_seconds", quorum_seconds}}
      .dump();
}

Generation Generation::parse(const std::string& text) {
  const auto json = nlohmann::json::parse(text);
  Generation g;
  json.at("number").get_to(g.number);
  json.at("members").get_to(g.members);
  json.at("incarnations").get_to(g.incarnations);
  json.at("joiners").get_to(g.joiners);
  json.at("leavers").get_to(g.leavers);
  json.at("step").get_to(g.step);
  json.at("source").get_to(g.source);
  json.at("completed").get_to(g.completed);
  json.at("quorum_seconds").get_to(g.quorum_seconds);
  return g;
}

ElasticMembership::ElasticMembership(std::shared_ptr<KeyValueStore> store, int rank, int world, int incarnation,
                                     std::chrono::milliseconds timeout, const ListenAddress& where)
    : store_(std::move(store)),
      rank_(rank),
      world_(world),
      incarnation_(incarnation),
      timeout_(timeout),
      incarnation_of_(static_cast<std::size_t>(world), 0) {
  for (int r = 0; r < world; ++r) current_.members.push_back(r);
  current_.incarnations.assign(static_cast<std::size_t>(world), 0);
  current_.completed.assign(static_cast<std::size_t>(world), 0);
  if (rank_ == 0) {
    beacon_ = std::make_unique<Beacon>(where);
    store_->set(elastic_beacon_key(), store_bytes_of(beacon_->address()));
  }
}

ElasticMembership::~ElasticMembership() = default;

std::string ElasticMembership::beacon_address() { return store_text_of(store_->get(elastic_beacon_key(), timeout_)); }

std::optional<Generation> ElasticMembership::await_admission(const std::function<void(const std::string&)>& waiting) {
  // A relaunch on a host still cut off waits for its link: asking sooner would have worker 0
  // admit a member nobody can connect. The run's end (or the controller) ends the wait.
  for (std::string why; !reaches(beacon_address(), timeout_, &why);) {
    if (store_->check(kClosedKey)) return std::nullopt;
    if (waiting) waiting(why);
    std::this_thread::sleep_for(std::chrono::seconds(1));
  }
  store_->set(join_key(rank_, incarnation_), {});
  const std::string admit = admit_key(rank_, incarnation_);
  bool closed = false;
  poll_until([&] { return store_->check(admit) || (closed = store_->check(kClosedKey)); }, timeout_,
             str_cat("worker ", rank_, " was not admitted back"));
  if (closed && !store_->check(admit)) return std::nullopt;
  const int number = std::stoi(store_text_of(store_->get(admit, timeout_)));
  Generation g = Generation::parse(store_text_of(store_->get(admission_key(number), timeout_)));
  adopt(g);
  return g;
}

std::vector<int> ElasticMembership::waiting_joiners() {
  std::vector<int> joiners;
  for (int r = 1; r < world_; ++r) {
    if (current_.has(r)) continue;
    int& next = incarnation_of_[static_cast<std::size_t>(r)];
    while (store_->check(elastic_gone_key(r, next))) ++next;  // relaunched again before it was admitted
    if (store_->check(join_key(r, next))) joiners.push_back(r);
  }
  return joiners;
}

std::optional<Generation> ElasticMembership::due(std::int64_t step, bool admit) {
  if (!pending_ && rank_ == 0 && admit) {
    const std::vector<int> joiners = waiting_joiners();
    if (!joiners.empty()) {
      Generation g;
      g.number = current_.number + 1;
      g.step = step + 1;
      g.joiners = joiners;
      std::merge(current_.members.begin(), current_.members.end(), joiners.begin(), joiners.end(),
                 std::back_inserter(g.members));
      for (int r : g.members) {
        const bool joins = std::binary_search(joiners.begin(), joiners.end(), r);
        g.incarnations.push_back(incarnation_of_[static_cast<std::size_t>(r)]);
        g.completed.push_back(joins ? -1 : g.step);
      }
      store_->set(admission_key(g.number), store_bytes_of(g.to_text()));
      for (int r : joiners)
        store_->set(admit_key(r, incarnation_of_[static_cast<std::size_t>(r)]), store_bytes_of(str_cat(g.number)));
      pending_ = g;
    }
  } else if (!pending_ && rank_ != 0 && store_->check(admission_key(current_.number + 1))) {
    pending_ = Generation::parse(store_text_of(store_->get(admission_key(current_.number + 1), timeout_)));
  }
  if (!pending_ || pending_->step != step) return std::nullopt;
  return pending_;
}

Generation ElasticMembership::posted_after_failure(std::int64_t completed) {
  const auto start = Clock::now();
  Generation g;
  // After an admission posted but not formed, its number is taken: its joiners wait on it.
  g.number = current_.number + (pending_ ? 2 : 1);
  std::vector<std::int64_t> done(current_.members.size(), -1);
  std::vector<bool> gone(current_.members.size(), false);  // posted gone, or cannot reach worker 0
  poll_until(
      [&] {
        for (std::size_t i = 0; i < current_.members.size(); ++i) {
          const int r = current_.members[i];
          if (r == rank_) done[i] = completed;
          if (done[i] >= 0 || gone[i]) continue;
          if (store_->check(alive_key(current_.number, r))) {
            const std::string report = store_text_of(store_->get(alive_key(current_.number, r), timeout_));
            if (report == kUnreachable)
              gone[i] = true;
            else
              done[i] = std::stoll(report);
          } else {
            gone[i] = store_->check(elastic_gone_key(r, current_.incarnations[i]));
          }
        }
        for (std::size_t i = 0; i < done.size(); ++i)
          if (done[i] < 0 && !gone[i]) return false;
        return true;
      },
      2 * timeout_, "a member neither reported after the failure nor was posted gone");
  for (std::size_t i = 0; i < current_.members.size(); ++i) {
    const int r = current_.members[i];
    if (gone[i]) {
      g.leavers.push_back(r);
      incarnation_of_[static_cast<std::size_t>(r)] = current_.incarnations[i] + 1;
      continue;
    }
    g.members.push_back(r);
    g.incarnations.push_back(current_.incarnations[i]);
    g.completed.push_back(done[i]);
    if (done[i] > g.step) {
      g.step = done[i];
      g.source = r;
    }
  }
  // An admission that never formed: its joiners give up on it and come back relaunched.
  if (pending_)
    for (int r : pending_->joiners) incarnation_of_[static_cast<std::size_t>(r)] += 1;
  g.quorum_seconds = std::chrono::duration<double>(Clock::now() - start).count();
  store_->set(recovery_key(current_.number), store_bytes_of(g.to_text()));
  return g;
}

Generation ElasticMembership::after_failure(std::int64_t completed) {
  Generation g;
  if (rank_ == 0) {
    g = posted_after_failure(completed);
  } else {
    std::string why;
    const bool reached = reaches(beacon_address(), timeout_, &why);
    store_->set(alive_key(current_.number, rank_), store_bytes_of(reached ? str_cat(completed) : kUnreachable));
    g = Generation::parse(store_text_of(store_->get(recovery_key(current_.number), 2 * timeout_)));
    if (!reached)
      throw CommError(str_cat("elastic run: worker ", rank_, " cannot reach worker 0 (", why,
                              "): left out of generation ", g.number));
  }
  LACONIC_ENFORCE(g.has(rank_), "worker ", rank_, " reported after the failure but is not in the next group");
  adopt(g);
  return g;
}

void ElasticMembership::post_failure(int number) { store_->set(failed_key(number), {}); }

bool ElasticMembership::failure_posted(int number) const { return store_->check(failed_key(number)); }

void ElasticMembership::post_stop(std::int64_t epoch, bool stop) { store_->set(stop_key(epoch), {stop ? '1' : '0'}); }

bool ElasticMembership::stop_posted(std::int64_t epoch) {
  return store_text_of(store_->get(stop_key(epoch), timeout_)) == "1";
}

void ElasticMembership::close() { store_->set(kClosedKey, {}); }

std::shared_ptr<KeyValueStore> ElasticMembership::rendezvous_store(const Generation& g) const {
  return std::make_shared<GenerationStore>(store_, g);
}

void ElasticMembership::adopt(const Generation& g) {
  current_ = g;
  pending_.reset();
}

}  // namespace laconic::comm
