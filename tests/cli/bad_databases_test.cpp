// A user's bad night, continued (faults_test.cpp has the rest): an export on a full disk, a UI
// client that never finishes its request, damaged, foreign and archived databases, and two
// controllers on one database. Each ends with a message that names the cause and the next step.
#include <catch2/catch.hpp>

#include <signal.h>
#include <sqlite3.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <thread>

#include "faults_harness.hpp"
#include "storage/database.hpp"
#include "storage/queries.hpp"
#include "storage/recorder.hpp"
#include "storage/statement.hpp"
#include "skip.hpp"

using namespace laconic;
using namespace laconic::testing;
using namespace laconic::testing::faults;
using namespace std::chrono_literals;

TEST_CASE("an export that fails for a full disk leaves no partial file, and recover --db of a missing file creates "
          "none", "[cli][faults][disk][needs-root]") {
  if (!is_root()) {
    LACONIC_SKIP("not root: no tmpfs to fill; the full-disk export test needs CAP_SYS_ADMIN");
  }
  const auto dir = make_temp_dir();
  write_file(dir + "/x.lua", tiny_experiment("x", "  max_steps = 20,\n"));
  REQUIRE(run_laconic(dir, "run x.lua --db x.db --quiet").status == 0);
  Tmpfs disk(dir + "/small", "16k");
  if (!disk.mounted()) {
    LACONIC_SKIP("cannot mount a tmpfs here; the full-disk export test is skipped");
  }
  auto r = run_laconic(dir, "export --db x.db --what metrics --format csv --out small/m.csv", 60);
  INFO(r.out << r.err);
  CHECK(r.status != 0);
  CHECK(std::filesystem::is_empty(dir + "/small"));  // neither m.csv nor its partial
  disk.unmount();
  // A journal replayed into a --db that does not exist: refused, and nothing created.
  write_file(dir + "/j.journal", "not a journal");
  r = run_laconic(dir, "recover j.journal --db typo.db", 60);
  CHECK(r.status != 0);
  CHECK_FALSE(std::filesystem::exists(dir + "/typo.db"));
  std::filesystem::remove_all(dir);
}

TEST_CASE("laconic ui stops within seconds of Ctrl-C while a client keeps sending header bytes", "[cli][faults][ui]") {
  const auto dir = make_temp_dir();
  storage::Database::open(dir + "/u.db");  // an empty laconic database
  const pid_t ui = start_laconic(dir, {"ui", "--db", "u.db", "--port", "0"});
  REQUIRE(ui > 0);
  int port = 0;
  REQUIRE(eventually(
      [&] {
        const std::string out = read_file(dir + "/.stdout");
        const std::size_t at = out.find("http://127.0.0.1:");
        if (at != std::string::npos) port = std::atoi(out.c_str() + at + 17);
        return port > 0;
      },
      30));
  // A client that sends one header byte every 2 s, inside the server's 5 s read timeout, for 60 s.
  const int client = ::socket(AF_INET, SOCK_STREAM, 0);
  REQUIRE(client >= 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(static_cast<std::uint16_t>(port));
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  REQUIRE(::connect(client, reinterpret_cast<sockaddr*>(&address), sizeof address) == 0);
  std::atomic<bool> done{false};
  std::thread slow([&] {
    const std::string request = "GET / HTTP/1.1\r\nX-Slow: ";
    for (int i = 0; i < 30 && !done; ++i) {
      if (::send(client, request.data() + std::min<std::size_t>(i, request.size() - 1), 1, MSG_NOSIGNAL) < 0) break;
      for (int t = 0; t < 20 && !done; ++t) std::this_thread::sleep_for(100ms);
    }
  });
  std::this_thread::sleep_for(3s);
  const auto signalled = Clock::now();
  ::kill(ui, SIGINT);
  const auto exited = wait_for_exit(ui, 60);
  const double seconds = std::chrono::duration<double>(Clock::now() - signalled).count();
  done = true;
  slow.join();
  ::close(client);
  REQUIRE(exited);
  INFO(read_file(dir + "/.stdout") << read_file(dir + "/.stderr") << "stopped after " << seconds << " s");
  CHECK(seconds < 12);  // the 5 s grace and a little; it was as long as the client kept sending
  CHECK_THAT(read_file(dir + "/.stdout"), Catch::Contains("laconic ui: stopped"));
  std::filesystem::remove_all(dir);
}

TEST_CASE("damaged, foreign and archived databases are named with what to do", "[cli][faults][bad]") {
  const auto dir = make_temp_dir();
  write_file(dir + "/b.lua", tiny_experiment("b", "  max_steps = 4,\n"));
  REQUIRE(run_laconic(dir, "run b.lua --db b.db --quiet").status == 0);
  // check --db marks the run the database holds FINISHED with the same configuration.
  {
    const auto checked = run_laconic(dir, "check b.lua --db b.db", 60);
    CHECK(checked.status == 0);
    CHECK_THAT(checked.out, Catch::Contains("b.db holds 1 of them FINISHED") && Catch::Contains("FINISHED in b.db"));
    const auto changed = run_laconic(dir, "check b.lua --db b.db --set max_steps=5", 60);
    CHECK_THAT(changed.out, Catch::Contains("b.db holds 0 of them FINISHED"));
  }

  // Not a database at all.
  write_file(dir + "/notes.txt", std::string(8192, 'n'));
  auto r = run_laconic(dir, "runs --db notes.txt", 60);
  CHECK(r.status == 1);
  CHECK_THAT(r.err, Catch::Contains("notes.txt is not an SQLite database"));
  CHECK(r.err.find("while running") == std::string::npos);

  // A laconic database whose header page was zeroed: may be damaged, and recover is named.
  {
    std::string bytes = read_file(dir + "/b.db");
    REQUIRE(bytes.size() > 4096);
    std::fill(bytes.begin(), bytes.begin() + 4096, '\0');
    write_file(dir + "/zeroed.db", bytes);
  }
  r = run_laconic(dir, "runs --db zeroed.db", 60);
  CHECK(r.status == 1);
  CHECK_THAT(r.err, Catch::Contains("zeroed.db is not an SQLite database, or its header is damaged") &&
                        Catch::Contains("laconic recover --from-damaged zeroed.db recovered.db"));

  // A directory.
  r = run_laconic(dir, "runs --db .", 60);
  CHECK(r.status == 2);
  CHECK_THAT(r.err, Catch::Contains("--db . is a directory"));

  // A user query that loads code.
  r = run_laconic(dir, "query \"SELECT load_extension('x')\" --db b.db", 60);
  CHECK(r.status == 2);
  CHECK_THAT(r.err, Catch::Contains("the function load_extension() is refused"));

  // A damaged file: refused before anything trains.
  std::filesystem::copy_file(dir + "/b.db", dir + "/damaged.db");
  {
    auto db = storage::Database::open(dir + "/damaged.db");
    storage::exec(db->handle(), "PRAGMA wal_checkpoint(TRUNCATE)");
  }
  {
    std::fstream f(dir + "/damaged.db", std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(static_cast<std::streamoff>(std::filesystem::file_size(dir + "/damaged.db") / 2));
    const std::string junk(8192, '\x5a');
    f.write(junk.data(), static_cast<std::streamsize>(junk.size()));
  }
  const auto before = std::filesystem::file_size(dir + "/damaged.db");
  r = run_laconic(dir, "run b.lua --db damaged.db", 120);
  INFO(r.out << r.err);
  CHECK(r.status == 1);
  CHECK_THAT(r.err, Catch::Contains("database damaged.db is damaged") &&
                        Catch::Contains("`laconic recover --from-damaged damaged.db recovered.db`"));
  CHECK(r.out.find("started") == std::string::npos);  // nothing trained
  CHECK(std::filesystem::file_size(dir + "/damaged.db") == before);
  // The advice works: what can be read is copied into a new file, the damaged one only read.
  r = run_laconic(dir, "recover --from-damaged damaged.db recovered.db", 120);
  INFO(r.out << r.err);
  REQUIRE(r.status == 0);
  CHECK_THAT(r.out, Catch::Contains("recovered what could be read of damaged.db into recovered.db:"));
  CHECK(std::filesystem::file_size(dir + "/damaged.db") == before);
  r = run_laconic(dir, "runs --db recovered.db", 60);
  CHECK(r.status == 0);
  CHECK_THAT(r.out, Catch::Contains("FINISHED"));
  CHECK(run_laconic(dir, "recover --from-damaged damaged.db recovered.db", 60).status == 2);  // never overwritten
  std::filesystem::remove_all(dir);
}

TEST_CASE("an archived database on a read-only medium is read by runs and show", "[cli][faults][bad][needs-root]") {
  if (!is_root()) LACONIC_SKIP("not root: no read-only medium to mount; the archive case is skipped");
  const auto dir = make_temp_dir();
  write_file(dir + "/b.lua", tiny_experiment("b", "  max_steps = 4,\n"));
  REQUIRE(run_laconic(dir, "run b.lua --db b.db --quiet").status == 0);
  {
    Tmpfs archive(dir + "/archive", "16m");
    if (!archive.mounted()) LACONIC_SKIP("cannot mount a tmpfs here; the archive case is skipped");
    std::filesystem::copy_file(dir + "/b.db", dir + "/archive/b.db");
    REQUIRE(archive.remount_read_only());
    auto r = run_laconic(dir, "runs --db archive/b.db", 60);
    INFO(r.err);
    CHECK(r.status == 0);
    CHECK_THAT(r.out, Catch::Contains("FINISHED"));
    r = run_laconic(dir, "show 1 --db archive/b.db", 60);
    CHECK(r.status == 0);
  }
  std::filesystem::remove_all(dir);
}

TEST_CASE("two controllers on one database train every run once: --resume shares the plan, a plain run is refused",
          "[cli][faults][concurrent]") {
  const auto dir = make_temp_dir();
  write_file(dir + "/c.lua", tiny_experiment("c", "  max_steps = 30,\n  compressor = sweep { none(), fp16() },\n"));
  // Two --resume controllers started together on a database that does not exist yet.
  const pid_t a = start_laconic(dir, {"run", "c.lua", "--db", "c.db", "--resume", "--quiet"});
  std::filesystem::create_directories(dir + "/b");  // its own output files
  {
    const auto b = run_laconic(dir + "/b", "run ../c.lua --db ../c.db --resume --quiet", 300);
    INFO(b.out << b.err);
    CHECK(b.status == 0);
  }
  const auto exited = wait_for_exit(a, 300);
  REQUIRE(exited);
  {
    INFO("the first controller's stderr: " << read_file(dir + "/.stderr"));
    CHECK(WEXITSTATUS(*exited) == 0);
  }
  const auto runs = runs_of(dir + "/c.db");
  REQUIRE(runs.size() == 2);  // one plan, shared
  for (const auto& run : runs) {
    CHECK(run.status == storage::RunStatus::Finished);
    CHECK(run.attempts == 1);  // trained once
  }
  // Every (key, step, worker) once: 30 steps x 2 workers of train_loss per run.
  auto db = storage::Database::open_read_only(dir + "/c.db");
  for (const auto& run : runs) CHECK(storage::metrics_of(*db, run.id, "train_loss").size() == 60);
  db.reset();

  // A plain run while another controller has the same runs planned: refused, nothing recorded.
  write_file(dir + "/slow.lua", tiny_experiment("slow", "  max_steps = 400,\n"));
  const pid_t first = start_laconic(dir, {"run", "slow.lua", "--db", "s.db", "--quiet"});
  REQUIRE(eventually([&] { return find_worker(first, 0) > 0; }, 60));
  const auto second = run_laconic(dir + "/b", "run ../slow.lua --db ../s.db --quiet", 120);
  INFO(second.out << second.err);
  CHECK(second.status == 2);
  CHECK_THAT(second.err, Catch::Contains("is already planned by the controller ") &&
                             Catch::Contains("add --resume to share its plan"));
  REQUIRE(wait_for_exit(first, 300));
  CHECK(runs_of(dir + "/s.db").size() == 1);
  std::filesystem::remove_all(dir);
}
