-- Eghlidi & Jaggi 2020's sparsifiers at a cluster's worker counts (issue 32): Top-k (allgather),
-- random-k with a shared seed and block-random-k (allreduce), each at k = 1% of every layer with
-- error feedback on the update, and dense SGD as the reference, on 2, 8, 32 and 64 workers.
-- Every rank is a thread of one process (placement = threads()), so 64 workers train on a 2-core
-- host; losses, accuracies and bytes are those of a process per rank (docs/topologies.md).
--
-- The global batch is fixed at 256 (128, 32, 8 and 4 examples per worker), so every worker
-- count takes the same steps over the same examples per epoch: what differs is only how the
-- gradient is split among workers and compressed by each. (With a batch of 64 per worker, as
-- in randomk-low-lr.lua, 64 workers would take 15 steps an epoch to 2 workers' 469.) The rate
-- is randomk-low-lr's, scaled with the global batch (0.001 at 128, 0.002 at 256), at which
-- random-k's error feedback stays stable with momentum 0.9.
--
-- 4 methods x 4 worker counts x 2 seeds = 32 runs of 5 epochs, about 25 minutes here.
--   laconic run experiments/workers-scale.lua --db findings.db
--   laconic query --db findings.db "$(cat scripts/findings.sql)"
local k = 0.01
experiment {
  name       = "workers-scale",
  data       = fashion_mnist(),
  model      = lenet5(),
  optimizer  = sgd { lr = 0.002, momentum = 0.9 },
  compressor = sweep {
    none(),
    topk { ratio = k, scope = "layer" },
    randomk { ratio = k, shared_seed = true, scope = "layer" },
    block_randomk { ratio = k, scope = "layer" },
    group = "method",
  },
  topology   = sweep { allreduce { algorithm = "ring" }, allgather(), allreduce { algorithm = "ring" }, allreduce { algorithm = "ring" }, group = "method" },
  exchange   = "update",
  workers    = sweep { 2, 8, 32, 64, group = "scale" },
  batch_size = sweep { 128, 32, 8, 4, group = "scale" },
  placement  = threads(),
  epochs     = 5,
  seeds      = { 1, 2 },
}
