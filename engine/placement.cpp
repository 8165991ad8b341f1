#include "engine/placement.hpp"

namespace laconic::engine {

Registry<Placement> builtin_placements() {
  Registry<Placement> r("placement");
  r.add<ProcessesPlacement, ProcessesOptions>("processes",
                                             "a process per rank, each on a core of its own, exchanging through Gloo "
                                             "(wall-clock times)");
  r.add<ThreadsPlacement, ThreadsOptions>(
      "threads",
      "every rank a thread of one process, exchanging through memory: as many ranks as a cluster has on one host; "
      "compute timed as each thread's CPU time, waiting derived, communication projected onto the link");
  return r;
}

}  // namespace laconic::engine
