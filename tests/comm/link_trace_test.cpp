// Links that change (link { trace = "bw.csv" }): the trace file's format and its errors, the
// projection of traffic that starts before, inside or across a change checked against the bytes
// carried at each rate in turn, and a link model whose clock the worker sets.
#include <catch2/catch.hpp>

#include <unistd.h>

#include <fstream>

#include "engine/comm/link_trace.hpp"
#include "engine/comm/network.hpp"
#include "engine/core/error.hpp"

using namespace laconic;
using namespace laconic::comm;

namespace {

std::string write_trace(const std::string& name, const std::string& text) {
  const std::string path = "/tmp/laconic_trace_" + std::to_string(::getpid()) + "_" + name + ".csv";
  std::ofstream(path) << text;
  return path;
}

LinkSpec gigabit_dropping_to_a_tenth() {
  LinkSpec link = parse_link("1Gbit,100us");
  link.payload_fraction = 1;
  link.trace = {{10, 1e8, std::nullopt}, {70, 1e9, 1e-3}};
  return link;
}

}  // namespace

TEST_CASE("a trace reads TIME,BANDWIDTH[,LATENCY] lines, a header, comments and bare seconds", "[comm][network][trace]") {
  const auto trace = read_link_trace(write_trace(
      "good", "time,bandwidth,latency\n# the link drops to a tenth for a minute\n10,100Mbit\n\n70s,1Gbit,1ms  # back\n"));
  REQUIRE(trace.size() == 2);
  CHECK(trace[0] == LinkChange{10, 1e8, std::nullopt});
  CHECK(trace[1].at_seconds == 70);
  CHECK(trace[1].bits_per_second == 1e9);
  CHECK(trace[1].latency_seconds == Approx(1e-3));
  CHECK(describe_trace(trace) == "2 changes from 10 s to 70 s, 100 to 1000 Mbit/s");
  CHECK(read_link_trace(write_trace("minutes", "1min,10Mbit\n"))[0].at_seconds == 60);
}

TEST_CASE("a trace's mistakes are named with the file and line", "[comm][network][trace]") {
  const std::string falling = write_trace("falling", "10,1Gbit\n5,1Gbit\n");
  CHECK_THROWS_WITH(read_link_trace(falling), Catch::StartsWith(falling + ":2: times must rise"));
  const std::string one_field = write_trace("short", "10\n");
  CHECK_THROWS_WITH(read_link_trace(one_field), Catch::StartsWith(one_field + ":1: a change is TIME,BANDWIDTH"));
  const std::string bad_rate = write_trace("rate", "10,fast\n");
  CHECK_THROWS_WITH(read_link_trace(bad_rate), Catch::StartsWith(bad_rate + ":1 bandwidth must be a positive rate"));
  CHECK_THROWS_WITH(read_link_trace(write_trace("empty", "time,bandwidth\n")), Catch::Contains("has no change"));
  CHECK_THROWS_AS(read_link_trace("/nonexistent/bw.csv"), ConfigError);
}

TEST_CASE("traffic is projected at the rate and latency of the moment it crosses", "[comm][network][trace]") {
  const LinkSpec link = gigabit_dropping_to_a_tenth();
  // 1.25 MB is 10 Mbit: 10 ms at 1 Gbit/s, 100 ms at 100 Mbit/s; two messages of 100 us latency.
  const double bytes = 1.25e6;
  CHECK(link.project_at(0, 2, bytes) == Approx(2e-4 + 0.01));
  CHECK(link.project_at(5, 2, bytes) == Approx(link.project(2, bytes)));
  CHECK(link.project_at(10, 2, bytes) == Approx(2e-4 + 0.1));
  CHECK(link.project_at(69, 2, bytes) == Approx(2e-4 + 0.1));
  CHECK(link.project_at(70, 2, bytes) == Approx(2e-3 + 0.01));  // the latency changes too
  // Starting 5 ms before the drop (less the latency): 5 Mbit at 1 Gbit/s, the other 5 at a tenth.
  CHECK(link.project_at(10 - 0.005 - 2e-4, 2, bytes) == Approx(2e-4 + 0.005 + 0.05));
  // Across the whole minute at a tenth and back: 6 Gbit in 60 s, then 1 Gbit/s.
  CHECK(link.project_at(10, 0, 1e9) == Approx(60 + 2));
  CHECK(link.at(30).bits_per_second == 1e8);
  CHECK(link.at(30).latency_seconds == Approx(1e-4));  // a change without a latency keeps the link's
  CHECK(link.at(70).latency_seconds == Approx(1e-3));
  CHECK(link.at(30).trace.empty());
}

TEST_CASE("a link { trace } projects each step at the clock the worker sets", "[comm][network][trace]") {
  const std::string path = write_trace("model", "1s,10Mbit\n2s,1Gbit\n");
  const auto model = builtin_networks().create(
      ComponentSpec{"network", "link", {{"bandwidth", Value{std::string("1Gbit")}}, {"trace", Value{path}}}});
  ByteCounters step;
  step.messages = 2;
  step.link_bytes = 250000;
  const double before = model->project(step);
  model->set_clock(1.5);
  const double during = model->project(step);
  model->set_clock(2.5);
  CHECK(model->project(step) == Approx(before));
  CHECK(during > 50 * before);
  REQUIRE(model->link());
  CHECK(model->link()->trace.size() == 2);
  CHECK(during == Approx(model->link()->project_at(1.5, 2, 250000)));
}
