#include <catch2/catch.hpp>

#include <unistd.h>

#include <cmath>
#include <sstream>
#include <string>
#include <thread>

#include "engine/core/worker_message.hpp"
#include "engine/core/metric_keys.hpp"

using laconic::decode_message;
using laconic::encode_message;

TEST_CASE("metric messages round-trip exactly, NaN and infinities included", "[core][message]") {
  for (double v : {0.1, -3.5e-300, 1e300, double(INFINITY), -double(INFINITY)}) {
    laconic::MetricRecord m{laconic::keys::kBytesSent, 41, 2, 1, 12.25, v};
    auto back = decode_message(encode_message(m));
    REQUIRE(back);
    auto& r = std::get<laconic::MetricRecord>(*back);
    CHECK(r.key == m.key);
    CHECK(r.step == 41);
    CHECK(r.epoch == 2);
    CHECK(r.worker == 1);
    CHECK(r.wall_time == 12.25);
    CHECK(r.value == v);
  }
  auto nan = decode_message(encode_message(laconic::MetricRecord{"x", 0, 0, 0, 0, NAN}));
  REQUIRE(nan);
  CHECK(std::isnan(std::get<laconic::MetricRecord>(*nan).value));
}

TEST_CASE("failure text with tabs and newlines survives the line framing", "[core][message]") {
  std::string text = "rank 0:\tpeer\nclosed \\ connection";
  auto line = encode_message(laconic::FailureMessage{text});
  CHECK(line.find('\n') == line.size() - 1);
  auto back = decode_message(line);
  REQUIRE(back);
  CHECK(std::get<laconic::FailureMessage>(*back).text == text);
}

TEST_CASE("malformed and torn lines are rejected", "[core][message]") {
  CHECK_FALSE(decode_message("M\tkey\t1\t2"));
  CHECK_FALSE(decode_message("M\tkey\tx\t0\t0\t0\t0"));
  CHECK_FALSE(decode_message("Z\thello"));
  CHECK_FALSE(decode_message(""));
}

TEST_CASE("checkpoint messages carry their step", "[core][message]") {
  const auto line = encode_message(laconic::CheckpointMessage{1234});
  CHECK(line == "C\t1234\n");
  auto back = decode_message(line);
  REQUIRE(back);
  CHECK(std::get<laconic::CheckpointMessage>(*back).step == 1234);
  CHECK_FALSE(decode_message("C\t12x"));
  CHECK_FALSE(decode_message("C\t1\t2"));
}

TEST_CASE("fact messages carry a key and a text value, tabs included", "[core][message]") {
  const auto line = encode_message(laconic::FactMessage{"blas_library", "/usr/lib/a\tb.so"});
  CHECK(line == "F\tblas_library\t/usr/lib/a\\tb.so\n");
  auto back = decode_message(line);
  REQUIRE(back);
  CHECK(std::get<laconic::FactMessage>(*back).key == "blas_library");
  CHECK(std::get<laconic::FactMessage>(*back).value == "/usr/lib/a\tb.so");
  CHECK_FALSE(decode_message("F\tonly-a-key"));
}

TEST_CASE("heartbeat messages carry the phase and the quiet time", "[core][message]") {
  const auto line = encode_message(laconic::HeartbeatMessage{"evaluating", 2.5});
  CHECK(line == "H\tevaluating\t2.5\n");
  auto back = decode_message(line);
  REQUIRE(back);
  CHECK(std::get<laconic::HeartbeatMessage>(*back).phase == "evaluating");
  CHECK(std::get<laconic::HeartbeatMessage>(*back).quiet == 2.5);
  CHECK_FALSE(decode_message("H\ttraining\tsoon"));
}

TEST_CASE("a message writer used from two threads never interleaves lines", "[core][message]") {
  int fds[2];
  REQUIRE(::pipe(fds) == 0);
  std::string received;
  std::thread reader([&] {
    char buffer[4096];
    ssize_t n;
    while ((n = ::read(fds[0], buffer, sizeof buffer)) > 0) received.append(buffer, static_cast<std::size_t>(n));
  });
  {
    laconic::MessageWriter writer(fds[1]);
    std::thread heartbeats([&] {
      for (int i = 0; i < 2000; ++i) {
        writer.send(laconic::HeartbeatMessage{"training", 0.001 * i});
        writer.flush();
      }
    });
    for (int i = 0; i < 20000; ++i)
      writer.send(laconic::MetricRecord{"train_loss_with_a_long_name", i, 0, 1, 0.5 * i, 1.0 / (i + 1)});
    heartbeats.join();
  }  // flushes the rest
  ::close(fds[1]);
  reader.join();
  ::close(fds[0]);
  std::istringstream lines(received);
  int metrics = 0, beats = 0, broken = 0;
  for (std::string line; std::getline(lines, line);) {
    const auto message = decode_message(line);
    if (!message)
      ++broken;
    else if (std::holds_alternative<laconic::MetricRecord>(*message))
      ++metrics;
    else if (std::holds_alternative<laconic::HeartbeatMessage>(*message))
      ++beats;
  }
  CHECK(broken == 0);
  CHECK(metrics == 20000);
  CHECK(beats == 2000);
}
