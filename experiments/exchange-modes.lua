-- What is exchanged, gradients or updates (docs/compressors.md, "What is exchanged"), on the
-- methods of Eghlidi & Jaggi 2020, Table 1 ("Sparse Communication for Training Deep Networks",
-- ../shared/papers/eghlidi-jaggi-2020-sparse-communication.md), at laptop scale.
--
-- Every method runs twice: exchange = "gradient" (workers compress gradients, error feedback on
-- the gradient; the optimizer's momentum and learning rate act on the average) and
-- exchange = "update" (each worker applies momentum and learning rate first and compresses
-- p = lr * m + e, error feedback on the update, as EF-SGD with momentum does; the average is
-- applied as it is). The paper's Algorithm 1 compresses p = lr * g + e; its code (MLBench's
-- sparsified SGD) has no momentum at all.
--
-- As in the paper: k = 1% for every sparsifier, error feedback on, layer-wise scope (and Top-k
-- once over the whole gradient), random-k and block-random-k with indices shared by all workers
-- (summed by allreduce), Top-k gathered, SGD with momentum 0.9. Changed to run on a 2-core
-- laptop: LeNet-5 on Fashion-MNIST instead of ResNet-18 on CIFAR-10, 2 epochs instead of 300,
-- batch 64, learning rate 0.01 (the setting of issue 19's table, which found random-k at chance
-- and block-random-k diverged), 2 and 4 workers, 2 seeds.
--
-- 5 methods x 2 exchanges x 2 worker counts x 2 seeds = 40 runs, about 25 minutes here.
--   laconic run experiments/exchange-modes.lua --db findings.db
--   laconic best --db findings.db --experiment exchange-modes --metric test_accuracy --by configuration
local k = 0.01
experiment {
  name       = "exchange-modes",
  data       = fashion_mnist(),
  model      = lenet5(),
  optimizer  = sgd { lr = 0.01, momentum = 0.9 },
  compressor = sweep {
    none(),
    topk { ratio = k, scope = "layer" },
    topk { ratio = k, scope = "global" },
    randomk { ratio = k, shared_seed = true, scope = "layer" },
    block_randomk { ratio = k, scope = "layer" },
    group = "method",
  },
  topology   = sweep { allreduce { algorithm = "ring" }, allgather(), allgather(), allreduce { algorithm = "ring" }, allreduce { algorithm = "ring" }, group = "method" },
  exchange   = sweep { "gradient", "update" },
  batch_size = 64,
  epochs     = 2,
  workers    = sweep { 2, 4 },
  seeds      = { 1, 2 },
}
