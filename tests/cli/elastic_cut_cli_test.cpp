// elastic = true (issue 68) when a worker's host drops off while its process lives: its link
// goes down (an emulated link, as root), it is left out, and it comes back once the link is up.
#include <catch2/catch.hpp>

#include <sys/wait.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <thread>

#include "cli_harness.hpp"
#include "controller/emulated_network.hpp"
#include "elastic_harness.hpp"
#include "engine/core/error.hpp"
#include "skip.hpp"
#include "storage/database.hpp"
#include "storage/queries.hpp"
#include "storage/run_facts.hpp"

using namespace laconic;
using namespace laconic::testing;
using namespace std::chrono_literals;

namespace {

// The network namespace of worker `rank` of the emulated link controller `pid` built, or "".
std::string rank_namespace(pid_t pid, int rank) {
  const std::string prefix = str_cat(controller::kNamespacePrefix, pid, "-");
  const std::string suffix = str_cat("-r", rank);
  std::error_code ignored;
  for (const auto& entry : std::filesystem::directory_iterator("/run/netns", ignored)) {
    const std::string name = entry.path().filename().string();
    if (name.rfind(prefix, 0) == 0 && name.size() > suffix.size() &&
        name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0)
      return name;
  }
  return "";
}

// The step of run 1's first member_change row for `worker` with `value`, -1 while there is none.
std::int64_t change_step(const std::string& db_path, int worker, double value) {
  try {
    auto db = storage::Database::open_read_only(db_path);
    for (const auto& m : storage::metrics_of(*db, 1, "member_change"))
      if (m.worker == worker && m.value == value) return m.step;
  } catch (const std::exception&) {  // busy: ask again
  }
  return -1;
}

// Polls `ready` every 50 ms for up to `seconds`; whether it became true.
template <class Ready>
bool within(double seconds, Ready ready) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  while (!ready()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(50ms);
  }
  return true;
}

}  // namespace

TEST_CASE("an elastic run leaves out a worker whose link went down and takes it back once the link is up",
          "[cli][e2e][elastic][emulate][slow][needs-root]") {
  if (!controller::why_no_emulation().empty())
    LACONIC_SKIP("emulated links cannot be built here (" << controller::why_no_emulation() << ")");
  // Worker 2's process lives on, and still reaches the run's store (a directory): only its link
  // to the others is down. It cannot reach worker 0 and says so; the others go on without it.
  const auto dir = make_temp_dir();
  write_file(dir + "/f.lua",
             elastic_experiment("  network = link { bandwidth = \"1Gbit\", emulate = true },\n", "true", 80, 6));
  const std::string db_path = dir + "/f.db";
  const pid_t controller = start_laconic(dir, {"run", "f.lua", "--db", "f.db", "--quiet"});
  REQUIRE(controller > 0);
  const bool training = within(120, [&] { return recorded_steps(db_path, 1) > 300; });
  const std::string ns = rank_namespace(controller, 2);
  INFO("worker 2's namespace: " << ns);
  REQUIRE(training);
  REQUIRE(!ns.empty());
  REQUIRE(std::system(("ip -n " + ns + " link set eth0 down").c_str()) == 0);
  // The others' transfer with it ends at the run's timeout (6 s); worker 2 is left out then.
  const bool left = within(60, [&] { return change_step(db_path, 2, -1.0) >= 0; });
  // (Should the run have failed meanwhile, its namespaces are gone and this fails: the checks below say why.)
  std::system(("ip -n " + ns + " link set eth0 up 2>/dev/null").c_str());
  const auto exited = wait_for_exit(controller, 240);
  if (!exited) FAIL("the controller hung after a worker of an elastic run was cut off");
  INFO(read_file(dir + "/.stdout") << read_file(dir + "/.stderr"));
  CHECK(left);
  REQUIRE(WIFEXITED(*exited));
  REQUIRE(WEXITSTATUS(*exited) == 0);

  auto db = storage::Database::open_read_only(db_path);
  REQUIRE(storage::list_runs(*db).size() == 1);
  CHECK(storage::list_runs(*db).front().status == storage::RunStatus::Finished);
  const storage::RunFacts facts = storage::run_facts_of(*db, 1);
  const std::string relaunches =
      facts.text.count(storage::fact::kElasticRelaunches) ? facts.text.at(storage::fact::kElasticRelaunches) : "";
  CHECK_THAT(relaunches, Catch::StartsWith("worker 2 exited with status 1: elastic run: worker 2 cannot reach worker 0 "
                                           "(connect to 10."));
  CHECK_THAT(relaunches, Catch::EndsWith("): left out of generation 1 (relaunched)"));
  // Left once, back once, after the link came up; the others' wait on it was the timeout.
  const std::int64_t gone = change_step(db_path, 2, -1.0), back = change_step(db_path, 2, 1.0);
  INFO("left at step " << gone << ", back at " << back);
  CHECK(storage::metrics_of(*db, 1, "member_change").size() == 2);
  CHECK(back > gone);
  const auto detect = storage::metrics_of(*db, 1, "detect_seconds");
  REQUIRE(detect.size() == 1);
  CHECK(detect[0].value > 5.5);
  // Nothing twice, and nothing of worker 2's while it was out.
  for (const auto& [at, values] : loss_rows(*db, 1)) {
    CHECK(values.size() == 1);
    if (at.first == 2) CHECK((at.second <= gone || at.second >= back));
  }
}
