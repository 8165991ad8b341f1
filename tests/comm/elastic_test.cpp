// An elastic run's membership (engine/comm/elastic.hpp): the generations worker 0 posts after a
// failure and for a relaunched worker's admission, and Gloo communicators that lose a peer,
// regroup without it and take its relaunch back in.
#include <catch2/catch.hpp>

#include <atomic>
#include <filesystem>
#include <future>
#include <thread>

#include "engine/comm/elastic.hpp"
#include "engine/comm/gloo_communicator.hpp"
#include "engine/core/error.hpp"
#include "unanswered.hpp"

using namespace laconic;
using namespace std::chrono_literals;

namespace {

struct ElasticDir {
  std::string path = (std::filesystem::temp_directory_path() / "laconic-elastic-XXXXXX").string();
  ElasticDir() { REQUIRE(::mkdtemp(path.data()) != nullptr); }
  ~ElasticDir() { std::filesystem::remove_all(path); }
  std::shared_ptr<comm::KeyValueStore> store() const { return comm::open_file_store(path); }
};

std::shared_ptr<comm::ElasticMembership> member(const ElasticDir& dir, int rank, int incarnation = 0,
                                                std::chrono::milliseconds timeout = 10s, int world = 3) {
  return std::make_shared<comm::ElasticMembership>(dir.store(), rank, world, incarnation, timeout);
}

// The run's store as a member on a host cut off from worker 0 sees it: worker 0's beacon answers
// at a port where nothing listens (port 1), while `cut` is true; the store itself is reached.
class CutOffStore : public comm::KeyValueStore {
 public:
  explicit CutOffStore(std::shared_ptr<comm::KeyValueStore> run, std::string beacon = "127.0.0.1 1")
      : run_(std::move(run)), beacon_(std::move(beacon)) {}
  std::atomic<bool> cut{true};
  void set(const std::string& key, const std::vector<char>& value) override { run_->set(key, value); }
  std::vector<char> get(const std::string& key, std::chrono::milliseconds timeout) override {
    if (cut && key == comm::elastic_beacon_key()) return {beacon_.begin(), beacon_.end()};
    return run_->get(key, timeout);
  }
  void wait(const std::vector<std::string>& keys, std::chrono::milliseconds timeout) override {
    run_->wait(keys, timeout);
  }
  bool check(const std::string& key) override { return run_->check(key); }

 private:
  std::shared_ptr<comm::KeyValueStore> run_;
  std::string beacon_;
};

// What `member`'s after_failure(completed) throws, from a thread of its own (it waits for worker 0).
std::future<std::string> left_out_reason(comm::ElasticMembership& member, std::int64_t completed) {
  return std::async(std::launch::async, [&member, completed]() -> std::string {
    try {
      member.after_failure(completed);
    } catch (const CommError& e) {
      return e.what();
    }
    return "in the next generation";
  });
}

// Rank `rank` of an elastic run of `world` Gloo ranks meeting in `dir` (20 s timeouts); a
// relaunch (`incarnation` > 0) is admitted first.
std::unique_ptr<comm::GlooCommunicator> elastic_gloo(const ElasticDir& dir, int rank, int world, int incarnation = 0) {
  comm::GlooOptions options;
  options.rank = rank;
  options.size = world;
  options.store = dir.store();
  options.timeout = 20s;
  options.elastic = member(dir, rank, incarnation, 20s, world);
  if (incarnation > 0) REQUIRE(options.elastic->await_admission());
  return std::make_unique<comm::GlooCommunicator>(options);
}

}  // namespace

TEST_CASE("after a failure worker 0 posts the members that reported, from the most advanced one's step",
          "[comm][elastic]") {
  ElasticDir dir;
  auto zero = member(dir, 0), one = member(dir, 1);
  dir.store()->set(comm::elastic_gone_key(2, 0), {});  // the controller reaped worker 2
  auto reported = std::async(std::launch::async, [&] { return one->after_failure(7); });
  const comm::Generation g = zero->after_failure(6);
  const comm::Generation seen = reported.get();
  CHECK(seen.to_text() == g.to_text());
  CHECK(g.number == 1);
  CHECK(g.members == std::vector<int>{0, 1});
  CHECK(g.leavers == std::vector<int>{2});
  CHECK(g.step == 7);
  CHECK(g.source == 1);  // worker 1 completed a step more than worker 0
  CHECK(g.receives(0));
  CHECK_FALSE(g.receives(1));
  CHECK(comm::Generation::parse(g.to_text()).to_text() == g.to_text());
}

TEST_CASE("worker 0 waits for a member that neither reported nor was posted gone, then gives up", "[comm][elastic]") {
  ElasticDir dir;
  auto zero = member(dir, 0, 0, 300ms);
  dir.store()->set(comm::elastic_gone_key(2, 0), {});
  CHECK_THROWS_AS(zero->after_failure(3), CommError);  // worker 1 never reports
}

TEST_CASE("a relaunched worker is admitted from the step after the one worker 0 saw it at", "[comm][elastic]") {
  ElasticDir dir;
  auto zero = member(dir, 0), one = member(dir, 1);
  dir.store()->set(comm::elastic_gone_key(2, 0), {});
  auto reported = std::async(std::launch::async, [&] { return one->after_failure(4); });
  zero->after_failure(4);
  reported.get();
  CHECK_FALSE(zero->due(5));  // nobody waits to join
  auto relaunched = member(dir, 2, 1);
  auto admitted = std::async(std::launch::async, [&] { return relaunched->await_admission(); });
  // Worker 0 looks at every step's start; the request it sees at step s admits at s + 1.
  std::optional<comm::Generation> at_zero;
  std::int64_t step = 5;
  for (; step < 5000 && !at_zero; ++step) {
    at_zero = zero->due(step);
    if (!at_zero) std::this_thread::sleep_for(2ms);
  }
  REQUIRE(at_zero);
  CHECK(at_zero->step == step - 1);
  CHECK(at_zero->step > 6);
  CHECK_FALSE(one->due(at_zero->step - 1));  // worker 1 reads it, and waits for its step
  const auto at_one = one->due(at_zero->step);
  REQUIRE(at_one);
  const auto joined = admitted.get();
  REQUIRE(joined);
  for (const comm::Generation* g : std::initializer_list<const comm::Generation*>{&*at_zero, &*at_one, &*joined}) {
    CHECK(g->number == 2);
    CHECK(g->members == std::vector<int>{0, 1, 2});
    CHECK(g->joiners == std::vector<int>{2});
    CHECK(g->incarnations == std::vector<int>{0, 0, 1});
    CHECK(g->receives(2));
    CHECK_FALSE(g->receives(1));
  }
}

TEST_CASE("a member that cannot reach worker 0 says so, is left out, and ends with the reason", "[comm][elastic]") {
  // A host dropped off while its process lives: the member still reaches the store (a file here,
  // another host's server across hosts), and would be put in a generation nobody can connect.
  ElasticDir dir;
  auto zero = member(dir, 0), one = member(dir, 1);
  auto cut_off = std::make_shared<CutOffStore>(dir.store());
  auto two = std::make_shared<comm::ElasticMembership>(cut_off, 2, 3, 0, 10s);
  auto reported = std::async(std::launch::async, [&] { return one->after_failure(7); });
  auto left_out = left_out_reason(*two, 8);
  const comm::Generation g = zero->after_failure(7);
  CHECK(reported.get().to_text() == g.to_text());
  CHECK(g.members == std::vector<int>{0, 1});
  CHECK(g.leavers == std::vector<int>{2});
  CHECK(g.step == 7);  // worker 2's eighth step is not the group's: its state cannot be had
  CHECK(left_out.get() ==
        "elastic run: worker 2 cannot reach worker 0 (connect to 127.0.0.1 port 1: Connection refused): left out of "
        "generation 1");
}

TEST_CASE("worker 0 hears a member whose try to reach it took the whole timeout", "[comm][elastic]") {
  // Its handshakes go unanswered for the run's timeout (400 ms) before it reports; worker 0 waits
  // twice that for the reports, so it is heard and left out, not taken for silent.
  ElasticDir dir;
  const testing::Unanswered nowhere;
  REQUIRE_THAT(nowhere.last_try(), Catch::EndsWith("no answer within 300 ms"));
  auto zero = member(dir, 0, 0, 400ms);
  auto cut_off = std::make_shared<CutOffStore>(dir.store(), "127.0.0.1 " + std::to_string(nowhere.port()));
  auto one = std::make_shared<comm::ElasticMembership>(cut_off, 1, 3, 0, 400ms);
  dir.store()->set(comm::elastic_gone_key(2, 0), {});
  auto left_out = left_out_reason(*one, 5);
  const comm::Generation g = zero->after_failure(5);
  CHECK(g.members == std::vector<int>{0});
  CHECK(g.leavers == std::vector<int>{1, 2});
  CHECK_THAT(left_out.get(), Catch::Contains("port " + std::to_string(nowhere.port()) + ": no answer within 400 ms"));
}

TEST_CASE("a relaunch that cannot reach worker 0 waits before it asks to join, then joins", "[comm][elastic]") {
  ElasticDir dir;
  auto zero = member(dir, 0, 0, 10s, 2);
  auto cut_off = std::make_shared<CutOffStore>(dir.store());
  auto relaunched = std::make_shared<comm::ElasticMembership>(cut_off, 1, 2, 1, 10s);
  dir.store()->set(comm::elastic_gone_key(1, 0), {});
  CHECK(zero->after_failure(3).members == std::vector<int>{0});
  std::vector<std::string> reasons;
  auto admitted = std::async(std::launch::async, [&] {
    return relaunched->await_admission([&](const std::string& why) {
      reasons.push_back(why);
      if (reasons.size() == 2) cut_off->cut = false;  // the link is back
    });
  });
  std::optional<comm::Generation> at_zero;
  for (std::int64_t step = 3; step < 20000 && !at_zero; ++step) {
    at_zero = zero->due(step);
    // Not asked to join while cut off: nothing to admit.
    if (!at_zero) std::this_thread::sleep_for(2ms);
  }
  if (!at_zero) zero->close();  // the waiting relaunch goes home: the failure below, not a hang
  REQUIRE(at_zero);
  const auto joined = admitted.get();
  REQUIRE(joined);
  CHECK(joined->to_text() == at_zero->to_text());
  CHECK(joined->joiners == std::vector<int>{1});
  REQUIRE(reasons.size() == 2);  // each try told, until the link came back
  CHECK(reasons[0] == "connect to 127.0.0.1 port 1: Connection refused");
}

TEST_CASE("a relaunched worker waiting when the run ends goes home", "[comm][elastic]") {
  ElasticDir dir;
  auto relaunched = member(dir, 2, 1);
  auto admitted = std::async(std::launch::async, [&] { return relaunched->await_admission(); });
  std::this_thread::sleep_for(20ms);
  member(dir, 0)->close();
  CHECK_FALSE(admitted.get().has_value());
}

TEST_CASE("Gloo ranks that lose a peer regroup without it, then take its relaunch back", "[comm][elastic][gloo]") {
  ElasticDir dir;
  const auto communicator = [&](int rank, int incarnation) { return elastic_gloo(dir, rank, 3, incarnation); };
  // Each survivor: an allreduce that fails once worker 2 is gone, its report, the next generation.
  const auto survive = [&](int rank, std::promise<void>& connected) {
    auto c = communicator(rank, 0);
    connected.set_value();
    std::vector<float> v{1.0f};
    CHECK_THROWS_AS(c->allreduce_sum(v), CommError);
    c->abandon();
    const comm::Generation g = c->membership().after_failure(10);
    c->regroup(g);
    std::vector<float> two{static_cast<float>(rank + 1)};
    c->allreduce_sum(two);
    CHECK(two[0] == 3.0f);  // 1 + 2: worker 2's part is gone
    // Steps, each with its exchange, until worker 2's relaunch is admitted.
    std::optional<comm::Generation> next;
    for (std::int64_t step = 10; !next && step < 5000; ++step) {
      next = c->membership().due(step);
      std::vector<float> beat{1.0f};
      if (!next) c->allreduce_sum(beat);
      std::this_thread::sleep_for(2ms);
    }
    REQUIRE(next);
    c->membership().adopt(*next);
    c->regroup(*next);
    std::vector<float> three{static_cast<float>(rank + 1)};
    c->allreduce_sum(three);
    return three[0];
  };
  std::promise<void> zero_up, one_up;
  auto zero = std::async(std::launch::async, [&] { return survive(0, zero_up); });
  auto one = std::async(std::launch::async, [&] { return survive(1, one_up); });
  float relaunched_sum = 0;
  {
    auto lost = communicator(2, 0);
    zero_up.get_future().wait();
    one_up.get_future().wait();
    lost->abandon();  // as a process killed: its connections close
  }
  dir.store()->set(comm::elastic_gone_key(2, 0), {});  // what the controller posts once it reaped it
  auto back = communicator(2, 1);
  std::vector<float> three{3.0f};
  back->allreduce_sum(three);
  relaunched_sum = three[0];
  CHECK(zero.get() == 6.0f);
  CHECK(one.get() == 6.0f);
  CHECK(relaunched_sum == 6.0f);
}

TEST_CASE("a Gloo rank waiting on a member that posted a failure stops waiting", "[comm][elastic][gloo]") {
  // Worker 1 waits for a message from worker 0 alone; worker 0 posts that it lost a connection
  // (as it does before it closes its own) but keeps them open: worker 1's wait ends with the
  // reason, well before its timeout.
  ElasticDir dir;
  const auto communicator = [&](int rank) { return elastic_gloo(dir, rank, 2); };
  std::promise<void> up;
  auto waiting = std::async(std::launch::async, [&] {
    auto one = communicator(1);
    up.set_value();
    std::uint8_t byte = 0;
    try {
      one->send_recv(0, {}, 0, {&byte, 1});
    } catch (const CommError& e) {
      return std::string(e.what());
    }
    return std::string("received");
  });
  auto zero = communicator(0);
  up.get_future().wait();
  std::this_thread::sleep_for(100ms);
  zero->membership().post_failure(0);
  CHECK_THAT(waiting.get(), Catch::Contains("receive from rank 0 ended: a member of the elastic run failed"));
}

TEST_CASE("members connecting a generation stop waiting once one of its members is posted gone",
          "[comm][elastic][gloo]") {
  // Workers 0 and 1 form a generation with worker 2's relaunch, which died before it connected:
  // the controller posted it gone, and their connecting ends with the reason, not at the timeout.
  ElasticDir dir;
  const auto communicator = [&](int rank) { return elastic_gloo(dir, rank, 3); };
  comm::Generation g;
  g.number = 1;
  g.members = {0, 1, 2};
  g.incarnations = {0, 0, 1};
  g.joiners = {2};
  g.step = 5;
  g.completed = {5, 5, -1};
  std::promise<void> zero_up, one_up;
  const auto regroup = [&](int rank, std::promise<void>& up) {
    auto c = communicator(rank);
    up.set_value();
    try {
      c->regroup(g);
    } catch (const CommError& e) {
      return std::string(e.what());
    }
    return std::string("connected");
  };
  auto zero = std::async(std::launch::async, [&] { return regroup(0, zero_up); });
  auto one = std::async(std::launch::async, [&] { return regroup(1, one_up); });
  {
    auto first = communicator(2);  // the first launch, for generation 0's connections
    zero_up.get_future().wait();
    one_up.get_future().wait();
  }
  std::this_thread::sleep_for(100ms);
  dir.store()->set(comm::elastic_gone_key(2, 1), {});  // its relaunch died before connecting
  CHECK_THAT(zero.get(), Catch::Contains("worker 2 of generation 1 was posted gone before it connected"));
  CHECK_THAT(one.get(), Catch::Contains("worker 2 of generation 1 was posted gone before it connected"));
}
