-- The sparsifiers of Eghlidi & Jaggi 2020 as their Algorithm 1 and its code (MLBench's sparsified
-- SGD) run them: error feedback, no momentum (docs/experiments.md, "Findings"). Without momentum
-- exchange = "gradient" and "update" are one method, so only the default runs. Top-k, random-k and
-- block-random-k at k = 1%, layer-wise, random-k and block-random-k with shared indices summed by
-- allreduce; LeNet-5 / Fashion-MNIST, 2 epochs, batch 64, SGD lr 0.1 (the rate at which random-k
-- trained best in experiments/randomk-momentum.lua), 2 and 4 workers, 2 seeds.
--
-- 3 methods x 2 worker counts x 2 seeds = 12 runs, about 6 minutes here.
--   laconic run experiments/sparse-no-momentum.lua --db findings.db
local k = 0.01
experiment {
  name       = "sparse-no-momentum",
  data       = fashion_mnist(),
  model      = lenet5(),
  optimizer  = sgd { lr = 0.1 },
  compressor = sweep {
    topk { ratio = k, scope = "layer" },
    randomk { ratio = k, shared_seed = true, scope = "layer" },
    block_randomk { ratio = k, scope = "layer" },
    group = "method",
  },
  topology   = sweep { allgather(), allreduce { algorithm = "ring" }, allreduce { algorithm = "ring" }, group = "method" },
  batch_size = 64,
  epochs     = 2,
  workers    = sweep { 2, 4 },
  seeds      = { 1, 2 },
}
