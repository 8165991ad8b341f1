// The relay between rank 0 and the other ranks of a launched sweep speaks typed messages
// (controller/relay_protocol.hpp): each reads back as written, whatever its text holds (tabs, newlines,
// backslashes in a run's name or a refusal), and a line that is not the message asked for, or is
// torn, reads as nothing rather than as a wrong order.
#include <catch2/catch.hpp>

#include "controller/relay_protocol.hpp"

using namespace laconic::controller;

TEST_CASE("every relay message reads back as written, its text escaped", "[cli][relay]") {
  const RankHello hello{3, 4, "ab\tcd", "plan\\1", "node\n2", "10.0.0.2", 16, 4242};
  const auto back = decode_hello(encode(hello));
  REQUIRE(back);
  CHECK(back->rank == 3);
  CHECK(back->world == 4);
  CHECK(back->file_hash == "ab\tcd");
  CHECK(back->plan == "plan\\1");
  CHECK(back->host == "node\n2");
  CHECK(back->cores == 16);
  CHECK(back->pid == 4242);
  CHECK(encode(hello).find('\n') == std::string::npos);  // one line, whatever the fields hold

  LaunchOrder run{7, "compressor=topk,ratio=0.01\tseed=1", "launch-1/run-7", {}};
  run.resolved.world_size = 4;
  run.resolved.placement = laconic::RankPlacement::Threads;
  const auto order = decode_order(encode(RankOrder{run}));
  REQUIRE(order);
  const auto* got = std::get_if<LaunchOrder>(&*order);
  REQUIRE(got);
  CHECK(*got == run);  // the same order a forked or exec'd rank 0 gets (launch_order_test)
  CHECK(std::get<SignalOrder>(*decode_order(encode(RankOrder{SignalOrder{15}}))).signal == 15);
  CHECK(std::holds_alternative<StillAlive>(*decode_order(encode(RankOrder{StillAlive{}}))));
  CHECK(std::get<SweepDone>(*decode_order(encode(RankOrder{SweepDone{2}}))).status == 2);
  CHECK(std::get<RelaunchOrder>(*decode_order(encode(RankOrder{RelaunchOrder{3}}))).incarnation == 3);

  CHECK(std::get<JoinAccepted>(*decode_join_answer(encode(JoinAnswer{JoinAccepted{"f00d"}}))).nonce == "f00d");
  const std::string why = "rank 2 (host b\tc) was started with a world of 3 ranks";
  CHECK(std::get<JoinRefused>(*decode_join_answer(encode(JoinAnswer{JoinRefused{why}}))).why == why);
  CHECK(decode_worker_exit(encode(WorkerExit{9}))->status == 9);
}

TEST_CASE("a relay line that is not the message asked for, or is torn, reads as nothing", "[cli][relay]") {
  CHECK_FALSE(decode_order("R\t7\tname\tkeys"));  // the fields of an older laconic's order
  CHECK_FALSE(decode_order("R\t{\"run_index\":7}"));  // torn: no resolved run
  CHECK_FALSE(decode_order("S\t9x"));
  CHECK_FALSE(decode_order("X\t0"));                 // a rank's report is not an order
  CHECK_FALSE(decode_order(""));
  CHECK_FALSE(decode_join_answer("L\t1\t2"));
  CHECK_FALSE(decode_hello("L\t1\t2\th\tp\thost\taddr\t16"));  // torn: a field short
  CHECK_FALSE(decode_worker_exit("X\t"));
  CHECK_FALSE(decode_worker_exit("M\tloss"));  // a worker's metric line
}
