// Which launcher started `laconic run`, read from its variables (or the explicit flags), and
// what is refused: pure functions of an environment map, so every launcher is tested here even
// where it is not installed (Slurm's srun is not a Debian package of this machine).
#include <catch2/catch.hpp>

#include "controller/launch_environment.hpp"
#include "engine/core/error.hpp"

using namespace laconic;
using namespace laconic::controller;

namespace {

const Environment kMaster = {{"MASTER_ADDR", "10.0.0.1"}, {"MASTER_PORT", "29500"}};

Environment with(Environment env, const Environment& more) {
  for (const auto& [k, v] : more) env[k] = v;
  return env;
}

}  // namespace

TEST_CASE("no launcher's variables and no flags: laconic forks its own workers", "[cli][launch]") {
  CHECK_FALSE(detect_launch({{"HOME", "/root"}}, {}));
  CHECK_FALSE(detect_launch(kMaster, {}));
}

TEST_CASE("torchrun's variables make a rank that meets the others at the agent's TCP store", "[cli][launch]") {
  const auto env = with(kMaster, {{"RANK", "3"},
                                  {"WORLD_SIZE", "4"},
                                  {"LOCAL_RANK", "1"},
                                  {"TORCHELASTIC_RUN_ID", "none"},
                                  {"TORCHELASTIC_USE_AGENT_STORE", "True"}});
  const auto launched = detect_launch(env, {});
  REQUIRE(launched);
  CHECK(launched->launcher == "torchrun");
  CHECK(launched->rank == 3);
  CHECK(launched->world == 4);
  CHECK(launched->store.text() == "tcp://10.0.0.1:29500");
  CHECK(launched->store_served_by_launcher);
  CHECK(launched->route_to == "10.0.0.1");
  // RANK and WORLD_SIZE by hand (PyTorch's env:// style): rank 0 serves the store.
  const auto by_hand = detect_launch(with(kMaster, {{"RANK", "0"}, {"WORLD_SIZE", "2"}}), {});
  REQUIRE(by_hand);
  CHECK(by_hand->launcher == "env");
  CHECK_FALSE(by_hand->store_served_by_launcher);
}

TEST_CASE("Open MPI's and Slurm's variables, with MASTER_ADDR and MASTER_PORT, make a rank", "[cli][launch]") {
  const auto mpi = detect_launch(with(kMaster, {{"OMPI_COMM_WORLD_RANK", "1"}, {"OMPI_COMM_WORLD_SIZE", "2"}}), {});
  REQUIRE(mpi);
  CHECK(mpi->launcher == "openmpi");
  CHECK(mpi->rank == 1);
  CHECK_FALSE(mpi->store_served_by_launcher);
  const auto slurm =
      detect_launch(with(kMaster, {{"SLURM_PROCID", "5"}, {"SLURM_NTASKS", "8"}, {"SLURM_STEP_ID", "0"}}), {});
  REQUIRE(slurm);
  CHECK(slurm->launcher == "slurm");
  CHECK(slurm->rank == 5);
  CHECK(slurm->world == 8);
  // mpirun inside a Slurm allocation: Open MPI's numbering is the one its ranks have.
  const auto both = detect_launch(
      with(
          kMaster,
          {{"OMPI_COMM_WORLD_RANK", "1"}, {"OMPI_COMM_WORLD_SIZE", "2"}, {"SLURM_PROCID", "0"}, {"SLURM_NTASKS", "1"}}),
      {});
  REQUIRE(both);
  CHECK(both->launcher == "openmpi");
  CHECK(both->rank == 1);
}

TEST_CASE("a launcher of one rank, or an sbatch script outside srun, leaves laconic to fork its workers",
          "[cli][launch]") {
  CHECK_FALSE(detect_launch({{"SLURM_PROCID", "0"}, {"SLURM_NTASKS", "1"}, {"SLURM_STEP_ID", "0"}}, {}));
  // The batch script of `sbatch --ntasks=4` has these too, but it is not a task of srun.
  CHECK_FALSE(detect_launch(with(kMaster, {{"SLURM_PROCID", "0"}, {"SLURM_NTASKS", "4"}}), {}));
  CHECK_FALSE(detect_launch(with(kMaster, {{"RANK", "0"}, {"WORLD_SIZE", "1"}}), {}));
}

TEST_CASE("the explicit flags come first and go together", "[cli][launch]") {
  const auto env = with(kMaster, {{"RANK", "3"}, {"WORLD_SIZE", "4"}});
  const auto launched = detect_launch(env, {1, 2, "redis://store:6379"});
  REQUIRE(launched);
  CHECK(launched->launcher == "flags");
  CHECK(launched->rank == 1);
  CHECK(launched->store.kind == comm::StoreAddress::Kind::Redis);
  CHECK(launched->route_to == "10.0.0.1");  // MASTER_ADDR when set, else the store's host
  CHECK(detect_launch({}, {1, 2, "tcp://node01:29500"})->route_to == "node01");
  CHECK_THROWS_WITH(detect_launch({}, {1, -1, ""}), Catch::Contains("--rank, --world and --store go together"));
}

TEST_CASE("what a launcher left out or got wrong is named", "[cli][launch]") {
  CHECK_THROWS_WITH(
      detect_launch({{"SLURM_PROCID", "0"}, {"SLURM_NTASKS", "4"}, {"SLURM_STEP_ID", "3"}}, {}),
      Catch::Contains("started by srun") && Catch::Contains("MASTER_ADDR and MASTER_PORT are not both set"));
  CHECK_THROWS_WITH(detect_launch(with(kMaster, {{"RANK", "x"}, {"WORLD_SIZE", "4"}}), {}),
                    Catch::Contains("RANK=\"x\", which is not a non-negative integer"));
  CHECK_THROWS_WITH(detect_launch(with(kMaster, {{"RANK", "4"}, {"WORLD_SIZE", "4"}}), {}),
                    Catch::Contains("rank 4 is not below the world size 4"));
  CHECK_THROWS_WITH(detect_launch(with(kMaster, {{"MASTER_PORT", "99999"}, {"RANK", "0"}, {"WORLD_SIZE", "2"}}), {}),
                    Catch::Contains("MASTER_PORT=\"99999\""));
}

TEST_CASE("a rank's address is the one its route to the store's host leaves from", "[cli][launch]") {
  CHECK(local_address("", "127.0.0.1") == "127.0.0.1");
  CHECK(local_address("lo", "") == "127.0.0.1");
  CHECK_THROWS_WITH(local_address("no-such-if0", ""), Catch::Contains("GLOO_SOCKET_IFNAME=no-such-if0"));
}

TEST_CASE("a launch is told from others in a shared store by its id: the flag, ours, or the launcher's job",
          "[cli][launch]") {
  const Environment two = with(kMaster, {{"RANK", "1"}, {"WORLD_SIZE", "2"}});
  CHECK(detect_launch(two, {})->launch_id.empty());
  CHECK(detect_launch(with(two, {{"TORCHELASTIC_RUN_ID", "none"}}), {})->launch_id.empty());  // torchrun's default
  CHECK(detect_launch(with(two, {{"TORCHELASTIC_RUN_ID", "job42"}}), {})->launch_id == "job42");
  CHECK(detect_launch(with(two, {{"TORCHELASTIC_RUN_ID", "job42"}, {"LACONIC_LAUNCH_ID", "mine"}}), {})->launch_id ==
        "mine");
  const auto slurm = detect_launch(
      with(kMaster, {{"SLURM_PROCID", "1"}, {"SLURM_NTASKS", "2"}, {"SLURM_STEP_ID", "3"}, {"SLURM_JOB_ID", "777"}}),
      {});
  CHECK(slurm->launch_id == "777.3");
  LaunchFlags flags;
  flags.rank = 0;
  flags.world = 2;
  flags.store = "redis://127.0.0.1:6379";
  flags.launch_id = "x";
  CHECK(detect_launch(with(two, {{"LACONIC_LAUNCH_ID", "mine"}}), flags)->launch_id == "x");
}
