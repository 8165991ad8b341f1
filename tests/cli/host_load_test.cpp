// How busy the host was during a run (controller/host_load.hpp): /proc/stat read as the kernel writes
// it, and the other processes' cores told from the run's own; and the progress line of a run
// whose loss diverged.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdio>
#include <limits>

#include "controller/host_load.hpp"
#include "controller/progress.hpp"

using namespace laconic::controller;

TEST_CASE("the aggregate cpu line of /proc/stat gives busy and stolen seconds", "[cli][host]") {
  const std::string text =
      "cpu  81281 7 19022 17939 612 5 312 40 0 0\n"
      "cpu0 40006 0 8192 11143 83 0 83 0 0 0\n"
      "intr 123\n";
  const auto sample = parse_proc_stat(text, 100);
  REQUIRE(sample);
  CHECK(sample->busy == Approx((81281 + 7 + 19022 + 5 + 312) / 100.0));  // user nice system irq softirq
  CHECK(sample->steal == Approx(0.4));
  CHECK_FALSE(parse_proc_stat("intr 1\n", 100));
  CHECK_FALSE(parse_proc_stat("cpu 1 2\n", 100));
}

TEST_CASE("the other processes' cores are the host's busy time less the run's own", "[cli][host]") {
  CpuSample start{100, 1, 10, 1000}, end{100 + 30, 1 + 2, 10 + 20, 1010};  // 10 s of wall time
  // 30 s busy, 20 of them ours: 1 core of others; 2 s stolen: 0.2 cores.
  const HostLoad load = host_load_between(start, end, 2, 2);
  REQUIRE(load.known);
  CHECK(load.other_cores == Approx(1.0));
  CHECK(load.steal_cores == Approx(0.2));
  CHECK(load.demand == Approx(3.2));
  CHECK(load.busy);
  const HostLoad calm = host_load_between(start, {100 + 20.5, 1, 10 + 20, 1010}, 2, 2);
  CHECK(calm.demand == Approx(2.05));
  CHECK_FALSE(calm.busy);  // within 10% of its cores
  CHECK_FALSE(host_load_between({-1, -1, 0, 0}, end, 2, 2).known);
}

TEST_CASE("a sample of this machine reads its clock and CPU time", "[cli][host]") {
  const CpuSample a = sample_cpu();
  volatile double x = 0;
  for (int i = 0; i < 30'000'000; ++i) x = x + i;  // tens of ms of CPU time
  const CpuSample b = sample_cpu();
  CHECK(a.busy >= 0);
  CHECK(b.busy >= a.busy);
  CHECK(b.own > a.own);
  CHECK(b.wall > a.wall);
}

TEST_CASE("a diverged loss shows as nan or inf in the progress line, never printf's -nan", "[cli][progress]") {
  std::FILE* out = std::tmpfile();
  REQUIRE(out != nullptr);
  Progress progress(ProgressMode::Log, out, 0);  // a line at every update
  progress.begin("[1/1] x", 1);
  progress.update({0, 3, 10, -std::nan(""), 5});
  progress.update({0, 4, 10, std::numeric_limits<double>::infinity(), 5});
  progress.update({0, 5, 10, 0.51234, 5});
  std::rewind(out);
  std::string text(4096, '\0');
  text.resize(std::fread(text.data(), 1, text.size(), out));
  std::fclose(out);
  CHECK_THAT(text, Catch::Contains("loss nan ") && Catch::Contains("loss inf ") && Catch::Contains("loss 0.5123 "));
  CHECK_THAT(text, !Catch::Contains("-nan"));
}
