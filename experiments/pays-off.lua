-- Does compressing gradients pay off, and on which network? Three models, 2 workers, one epoch
-- each, dense against four compressors, on two links emulated for real (veth pairs shaped with
-- tc: needs root, docs/network-model.md). The report projects every run onto the other links
-- too: its section "Does it pay off?" draws time to target from 10 Mbit/s to 100 Gbit/s and
-- names the bandwidth below which each compressor beats dense.
--
--   laconic run experiments/pays-off.lua
--   laconic report pays-off --link 10Mbit --link 10Gbit
experiment {
  name       = "pays-off",
  data       = sweep { fashion_mnist(), fashion_mnist(),
                       synthetic { shape = {3, 32, 32}, n = 2560, test_n = 256 }, group = "model" },
  model      = sweep { lenet5(), mlp(), resnet { depth = 20 }, group = "model" },
  optimizer  = sgd { lr = 0.05, momentum = 0.9 },
  batch_size = 64,
  epochs     = 1,
  workers    = 2,
  topology   = allreduce { algorithm = "ring" },
  schedule   = synchronous(),
  compressor = sweep {
    none(),
    fp16(),
    topk { ratio = 0.01 },              -- with error feedback (the default)
    powersgd { rank = 2 },
    qsgd { levels = 7 },                -- 4 bits per element: sign + 3 bits of level
  },
  network    = sweep {
    link { bandwidth = "1Gbit", latency = "50us", emulate = true },
    link { bandwidth = "100Mbit", latency = "50us", emulate = true },
  },
  seeds      = { 1 },
}
