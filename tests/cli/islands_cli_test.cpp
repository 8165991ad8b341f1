// network = cluster { } end to end: a 2 x 2 island run records its messages between islands (every
// ring phase, half of halving-doubling's), projects them onto the slow link and the rest onto
// the fast one, and records the same under process ranks as under thread ranks; islands that do
// not hold the run's ranks are refused before anything trains.
#include <catch2/catch.hpp>

#include <filesystem>
#include <map>

#include <nlohmann/json.hpp>

#include "cli_harness.hpp"
#include "engine/core/units.hpp"
#include "storage/database.hpp"
#include "storage/statement.hpp"

using namespace laconic;
using namespace laconic::testing;

namespace {

std::string cluster_experiment(const std::string& islands) {
  return "experiment {\n"
         "  name = \"islands\",\n"
         "  data = synthetic { shape = {1, 8, 8}, n = 512, test_n = 64 },\n"
         "  model = mlp { sizes = {64, 64, 10} },\n"
         "  optimizer = sgd { lr = 0.1 },\n"
         "  batch_size = 16, workers = 4, max_steps = 4, eval_limit = 64, timeout = 30,\n"
         "  network = cluster { islands = " +
         islands +
         ", inside = link { bandwidth = \"10Gbit\", latency = \"10us\" },\n"
         "                      between = link { bandwidth = \"100Mbit\", latency = \"1ms\" } },\n"
         "  topology = sweep { allreduce { algorithm = \"ring\" }, allreduce { algorithm = \"halving_doubling\" },\n"
         "                     allreduce { algorithm = \"hierarchical\" } },\n"
         "  placement = sweep { processes(), threads() },\n"
         "}\n";
}

struct StepRow {
  double messages = 0, link_bytes = 0, between_messages = 0, between_link_bytes = 0, between_shared_bytes = 0,
         projected = 0;
};

// run name -> worker 1's rows by step.
std::map<std::string, std::map<std::int64_t, StepRow>> rows(const std::string& path) {
  auto db = storage::Database::open_read_only(path);
  storage::Statement q(db->handle(),
                       "SELECT r.name, m.step, m.key, m.value FROM metrics m JOIN runs r ON r.id = m.run_id WHERE "
                       "m.worker = 1 AND m.key IN ('messages', 'link_bytes', 'between_messages', "
                       "'between_link_bytes', 'between_shared_bytes', 'projected_time_communicate')");
  std::map<std::string, std::map<std::int64_t, StepRow>> out;
  while (q.step()) {
    StepRow& row = out[q.column_text(0)][q.column_int64(1)];
    const std::string key = q.column_text(2);
    const double v = q.column_double(3);
    if (key == "messages") row.messages = v;
    if (key == "link_bytes") row.link_bytes = v;
    if (key == "between_messages") row.between_messages = v;
    if (key == "between_link_bytes") row.between_link_bytes = v;
    if (key == "between_shared_bytes") row.between_shared_bytes = v;
    if (key == "projected_time_communicate") row.projected = v;
  }
  return out;
}

}  // namespace

TEST_CASE("a 2 x 2 cluster projects each phase onto the link it crosses, under processes as under threads",
          "[cli][e2e][islands]") {
  const std::string dir = make_temp_dir();
  write_file(dir + "/islands.lua", cluster_experiment("{ 2, 2 }"));
  const auto run = run_laconic(dir, "run islands.lua --db i.db --quiet", 300);
  INFO(run.out << run.err);
  REQUIRE(run.status == 0);
  const auto by_run = rows(dir + "/i.db");
  REQUIRE(by_run.size() == 6);
  const LinkSpec inside = parse_link("10Gbit,10us"), between = parse_link("100Mbit,1ms");
  for (const auto& [name, steps] : by_run) {
    INFO(name);
    REQUIRE(steps.size() == 4);
    const bool ring = name.find("algorithm=ring") != std::string::npos;
    const bool hierarchical = name.find("hierarchical") != std::string::npos;
    for (const auto& [step, r] : steps) {
      REQUIRE(r.messages > 0);
      // The ring pays the slow link at every phase; halving-doubling at the half whose partners
      // sit in the other island; the hierarchical allreduce at the 2 of its 4 phases between
      // islands, each with a chunk of half the gradient.
      if (hierarchical) {
        CHECK(r.messages == 4);
        CHECK(r.between_messages == 2);
      } else {
        CHECK(r.between_messages == (ring ? r.messages : r.messages / 2));
      }
      CHECK(r.projected == Approx(inside.project(r.messages - r.between_messages, r.link_bytes - r.between_link_bytes) +
                                  between.project(r.between_messages, r.between_shared_bytes)));
      // Two ranks of an island cross at once in halving-doubling's and the hierarchical's phases.
      CHECK(r.between_shared_bytes == (ring ? 1 : 2) * r.between_link_bytes);
    }
    // Thread ranks record what process ranks record.
    if (name.find("placement=threads") == std::string::npos) continue;
    std::string processes = name;
    processes.replace(processes.find("placement=threads"), 17, "placement=processes");
    const auto& other = by_run.at(processes);
    for (const auto& [step, r] : steps) {
      CHECK(r.between_shared_bytes == other.at(step).between_shared_bytes);
      CHECK(r.projected == Approx(other.at(step).projected));
    }
  }
  const auto report = run_laconic(dir, "report islands --db i.db --allow-missing-figures --link 1Gbit,1ms", 120);
  INFO(report.out << report.err);
  REQUIRE(report.status == 0);
  const std::string md = read_file(dir + "/laconic-reports/islands/report.md");
  INFO(md);
  CHECK_THAT(md, Catch::Contains("## Bytes per link kind"));
  CHECK_THAT(md, Catch::Contains("| 100% |"));  // the ring's bytes all crossed the slow link
  // --link stands for the link between islands; inside, the runs' own.
  CHECK_THAT(md, Catch::Contains("each link here stands for the link between islands") &&
                     Catch::Contains("stay on the runs' own inside link (10Gbit at 10 us)"));
  std::filesystem::remove_all(dir);
}

TEST_CASE("islands that do not hold the run's ranks are refused before anything trains", "[cli][islands]") {
  const std::string dir = make_temp_dir();
  write_file(dir + "/islands.lua", cluster_experiment("{ 2, 3 }"));
  const auto run = run_laconic(dir, "run islands.lua --db i.db --quiet", 120);
  CHECK(run.status != 0);
  CHECK_THAT(run.out + run.err, Catch::Contains("network = cluster { islands } holds 5 ranks, the run has 4"));
  // The hierarchical allreduce: islands of one size, and a compressor that is summed.
  const auto refused = [&](const std::string& network, const std::string& compressor) {
    std::string file = cluster_experiment("{ 2, 2 }");
    file.replace(file.find("  network = "), file.find("  topology = ") - file.find("  network = "), network);
    file.replace(file.find("  topology = "), file.find("  placement = ") - file.find("  topology = "),
                 "  topology = allreduce { algorithm = \"hierarchical\" },\n  compressor = " + compressor + ",\n");
    write_file(dir + "/h.lua", file);
    const auto out = run_laconic(dir, "run h.lua --db h.db --quiet", 120);
    CHECK(out.status != 0);
    return out.out + out.err;
  };
  CHECK_THAT(refused("  network = link {},\n", "none()"),
             Catch::Contains("a hierarchical allreduce") || Catch::Contains("runs on islands of one size"));
  CHECK_THAT(refused("  network = cluster { islands = { 1, 3 } },\n", "none()"),
             Catch::Contains("runs on islands of one size"));
  CHECK_THAT(refused("  network = cluster { islands = { 2, 2 } },\n", "topk { ratio = 0.1 }"),
             Catch::Contains("payloads are gathered, not summed"));
  std::filesystem::remove_all(dir);
}

TEST_CASE("DiLoCo across islands: inner steps averaged inside each island, rounds across, as processes and threads",
          "[cli][e2e][islands]") {
  const std::string dir = make_temp_dir();
  std::string file = cluster_experiment("{ 2, 2 }");
  file.replace(file.find("  topology = "), file.find("  placement = ") - file.find("  topology = "),
               "  topology = allreduce { algorithm = \"hierarchical\" },\n"
               "  schedule = diloco { inner_steps = 2, islands = true, outer = sgd { lr = 1 } },\n");
  write_file(dir + "/d.lua", file);
  const auto run = run_laconic(dir, "run d.lua --db d.db --quiet", 300);
  INFO(run.out << run.err);
  REQUIRE(run.status == 0);
  const auto by_run = rows(dir + "/d.db");
  REQUIRE(by_run.size() == 2);
  for (const auto& [name, steps] : by_run) {
    INFO(name);
    REQUIRE(steps.size() == 4);
    for (const auto& [step, r] : steps) {
      const bool round_end = (step + 1) % 2 == 0;
      // Inner steps: the island's ring of two, inside; a round's end adds the hierarchical
      // average of the pseudo-gradients, 2 of whose 4 phases cross.
      CHECK(r.messages == (round_end ? 2 + 4 : 2));
      CHECK(r.between_messages == (round_end ? 2 : 0));
    }
  }
  const auto& threads = by_run.begin()->first.find("threads") != std::string::npos ? by_run.begin()->second
                                                                                     : by_run.rbegin()->second;
  const auto& processes = by_run.begin()->first.find("threads") != std::string::npos ? by_run.rbegin()->second
                                                                                       : by_run.begin()->second;
  for (const auto& [step, r] : threads) CHECK(r.projected == Approx(processes.at(step).projected));
  std::filesystem::remove_all(dir);
}

TEST_CASE("an overlapped exchange on islands records its buckets' messages between islands too",
          "[cli][e2e][islands]") {
  const std::string dir = make_temp_dir();
  std::string file = cluster_experiment("{ 2, 2 }");
  file.replace(file.find("  topology = "), file.find("  placement = ") - file.find("  topology = "),
               "  topology = allreduce { algorithm = \"ring\", overlap = true, bucket_mb = 0.005, "
               "first_bucket_mb = 0.002 },\n");
  file.replace(file.find("  placement = "), file.find("}\n", file.find("  placement = ")) - file.find("  placement = "),
               "  placement = processes(),\n");  // threads cannot overlap
  write_file(dir + "/o.lua", file);
  const auto run = run_laconic(dir, "run o.lua --db o.db --quiet", 300);
  INFO(run.out << run.err);
  REQUIRE(run.status == 0);
  const auto by_run = rows(dir + "/o.db");
  REQUIRE(by_run.size() == 1);
  for (const auto& [step, r] : by_run.begin()->second) {
    CHECK(r.messages > 6);  // more than one bucket's ring of 2(p-1) messages
    CHECK(r.between_messages == r.messages);
    CHECK(r.between_shared_bytes == r.link_bytes);
  }
  std::filesystem::remove_all(dir);
}

TEST_CASE("advise on islands: --link is the link between them, the inside one the file's; --set reaches nested fields",
          "[cli][e2e][islands][advise]") {
  const std::string dir = make_temp_dir();
  std::string file = cluster_experiment("{ 2, 2 }");
  file.replace(file.find("  topology = "), file.find("  placement = ") - file.find("  topology = "),
               "  topology = allreduce { algorithm = \"hierarchical\" },\n"
               "  compressor = sweep { none(), fp16() },\n");
  write_file(dir + "/a.lua", file);
  // --set a.b.c: the field of a nested component, and a list of ints.
  const auto check = run_laconic(dir, "check a.lua --json --set network.between.bandwidth=10Mbit --set network.islands={4} "
                                      "--set topology.algorithm=ring",
                                 120);
  INFO(check.out << check.err);
  REQUIRE(check.status == 0);
  const auto runs = nlohmann::json::parse(check.out);
  REQUIRE(runs.size() == 4);
  for (const auto& run : runs) {
    const auto& network = run.at("config").at("network");
    CHECK(network.at("islands") == nlohmann::json::array({4}));
    CHECK(network.at("between").at("bandwidth") == "10Mbit");
    CHECK(network.at("between").at("latency") == "1ms");  // the rest of the nested link as written
    CHECK(network.at("inside").at("bandwidth") == "10Gbit");
  }
  const auto advise =
      run_laconic(dir, "advise a.lua --workers 4 --link 100Mbit,2ms --seeds 1 --placement threads --db a.db", 300);
  INFO(advise.out << advise.err);
  REQUIRE(advise.status == 0);
  CHECK_THAT(advise.out, Catch::Contains("messages projected onto 100Mbit,2ms between islands (inside: 10Gbit at 10 us"));
  CHECK_THAT(advise.out, Catch::Contains("No layer plan on islands"));
  CHECK_THAT(advise.out, !Catch::Contains("Which layers to leave dense"));
  // The probes ran on the asked link between islands, the file's inside.
  auto db = storage::Database::open_read_only(dir + "/a.db");
  storage::Statement q(db->handle(), "SELECT config FROM runs");
  int probes = 0;
  while (q.step()) {
    ++probes;
    const std::string config = q.column_text(0);
    CHECK_THAT(config, Catch::Contains("\"between\":{\"bandwidth\":\"100Mbit\"") &&
                           Catch::Contains("\"inside\":{\"bandwidth\":\"10Gbit\""));
    CHECK_THAT(config, Catch::Contains("\"latency\":\"2ms\""));
  }
  CHECK(probes == 2);
  std::filesystem::remove_all(dir);
}
