-- Random-k with error feedback and momentum 0.9 at a learning rate it tolerates (issue 19's
-- done-when; docs/experiments.md, "Where momentum sits"). At lr 0.01, the setting of
-- exchange-modes.lua, random-k 1% stays at or near chance under either exchange: error feedback
-- sends each coordinate about once every 100 steps, that delay acts like momentum already, and
-- 0.9 on top of it is unstable. A rate 10x lower is stable but slow, so these runs train 10
-- epochs instead of 2, each sparsifier of Eghlidi & Jaggi 2020's Table 1 at k = 1% (layer-wise,
-- error feedback on the update: p = lr * m + e, EF-SGD with momentum), Top-k as the reference,
-- on 2, 4 and 8 workers (the paper's Table 1 has block-random-k with allreduce losing accuracy
-- as workers grow: 92.50 / 90.80 / 90.63 at 2 / 4 / 8). Batch 64 per worker, so the global
-- batch grows with the workers and the 10 epochs hold fewer steps, as in the paper.
--
-- 3 methods x 3 worker counts x 2 seeds = 18 runs, 10 epochs each, about 20 minutes here.
--   laconic run experiments/randomk-low-lr.lua --db findings.db
--   laconic query --db findings.db "$(cat scripts/findings.sql)"
local k = 0.01
experiment {
  name       = "randomk-low-lr",
  data       = fashion_mnist(),
  model      = lenet5(),
  optimizer  = sgd { lr = 0.001, momentum = 0.9 },
  compressor = sweep {
    topk { ratio = k, scope = "layer" },
    randomk { ratio = k, shared_seed = true, scope = "layer" },
    block_randomk { ratio = k, scope = "layer" },
    group = "method",
  },
  topology   = sweep { allgather(), allreduce { algorithm = "ring" }, allreduce { algorithm = "ring" }, group = "method" },
  exchange   = "update",
  batch_size = 64,
  epochs     = 10,
  workers    = sweep { 2, 4, 8 },
  seeds      = { 1, 2 },
}
