// network = cluster { emulate = true } end to end, as root: a 2 x 2 cluster built for real (a
// network namespace per rank, a bridge per island, each island's link to the others shaped to
// 20 Mbit/s); the ring's and the hierarchical allreduce's exchanges measured there are close to
// the model's projection of the same messages, and the namespaces are gone after the run.
// Thread ranks cannot be placed on it.
#include <catch2/catch.hpp>

#include <algorithm>
#include <filesystem>
#include <map>

#include "cli_harness.hpp"
#include "controller/emulated_network.hpp"
#include "skip.hpp"
#include "storage/database.hpp"
#include "storage/queries.hpp"
#include "storage/run_facts.hpp"

using namespace laconic;
using namespace laconic::testing;

namespace {

std::string emulated_islands(const std::string& placement) {
  return tiny_experiment("emulated-islands",
                         "  workers = 4, max_steps = 12, batch_size = 64,\n"
                         "  network = cluster { islands = { 2, 2 }, emulate = true,\n"
                         "    inside = link { bandwidth = \"1Gbit\", latency = \"100us\" },\n"
                         "    between = link { bandwidth = \"20Mbit\", latency = \"1ms\" } },\n"
                         "  topology = sweep { allreduce { algorithm = \"ring\" }, allreduce { algorithm = "
                         "\"hierarchical\" } },\n"
                         "  placement = " +
                             placement + ",\n");
}

// Every rank's values of `key` in run `run` from step 3 (TCP's windows grow over the first steps), sorted.
std::vector<double> sorted_values(storage::Database& db, std::int64_t run, const std::string& key) {
  std::vector<double> out;
  for (const auto& m : storage::metrics_of(db, run, key))
    if (m.step >= 3) out.push_back(m.value);
  std::sort(out.begin(), out.end());
  REQUIRE(!out.empty());
  return out;
}

}  // namespace

TEST_CASE("a 2 x 2 cluster on emulated islands measures about what the model projects", "[cli][e2e][emulate][islands][needs-root]") {
  const std::string why = controller::why_no_emulation();
  if (!why.empty()) LACONIC_SKIP("emulated islands cannot be built here (" << why << ")");
  const std::string dir = make_temp_dir();
  write_file(dir + "/e.lua", emulated_islands("processes()"));
  const auto run = run_laconic(dir, "run e.lua --db e.db --quiet", 300);
  INFO(run.out << run.err);
  REQUIRE(run.status == 0);
  auto db = storage::Database::open_read_only(dir + "/e.db");
  for (std::int64_t id : {1, 2}) {
    const auto facts = storage::facts_of(*db, id);
    REQUIRE(facts.count("network_emulation") == 1);
    CHECK_THAT(facts.at("network_emulation"),
               Catch::Contains("a bridge per island (2 islands)") &&
                   Catch::Contains("each island's link to a core bridge shaped with tbf at 20000000 bit/s") &&
                   Catch::Contains("100 us inside an island, 1000 us between"));
    const auto measured = sorted_values(*db, id, "time_communicate");
    const auto projected = sorted_values(*db, id, "projected_time_communicate");
    const double median = measured[measured.size() / 2], model = projected[projected.size() / 2];
    INFO("run " << id << ": measured median " << median << " s, fastest " << measured.front() << " s, projected "
                << model << " s");
    // Here: the ring 0.156 s against 0.164 s projected, the hierarchical 0.118 s against 0.110 s
    // (bench/emulated_islands.py). The bounds leave room for a busy machine, which slows what is
    // measured; a link between shaped at the wrong rate, or a message crossing it twice, moves
    // the fastest step by 2x.
    CHECK(median > 0.8 * model);
    CHECK(measured.front() < 1.3 * model);
  }
  // Torn down with each run: no namespace of laconic's is left.
  std::error_code ignored;
  for (const auto& entry : std::filesystem::directory_iterator("/run/netns", ignored))
    CHECK(entry.path().filename().string().rfind(controller::kNamespacePrefix, 0) == std::string::npos);
  std::filesystem::remove_all(dir);
}

TEST_CASE("emulated islands refuse thread ranks and traces, with what to do instead", "[cli][islands]") {
  const std::string dir = make_temp_dir();
  write_file(dir + "/t.lua", emulated_islands("threads()"));
  const auto threads = run_laconic(dir, "check t.lua", 120);
  CHECK(threads.status != 0);
  CHECK_THAT(threads.out + threads.err, Catch::Contains("placement = threads() cannot run an emulated network") &&
                                            Catch::Contains("use placement = processes()"));
  write_file(dir + "/bw.csv", "10s,1Mbit\n");
  std::string traced = emulated_islands("processes()");
  traced.replace(traced.find("latency = \"1ms\""), 15, "latency = \"1ms\", trace = \"bw.csv\"");
  write_file(dir + "/tr.lua", traced);
  const auto trace = run_laconic(dir, "check tr.lua", 120);
  CHECK(trace.status != 0);
  CHECK_THAT(trace.out + trace.err, Catch::Contains("not yet on emulated islands"));
  std::filesystem::remove_all(dir);
}
