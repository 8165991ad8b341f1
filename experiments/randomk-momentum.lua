-- Random-k with error feedback meets momentum: the learning rate and momentum at which random-k
-- 1% (layer-wise, indices shared, error feedback) trains LeNet-5, under exchange = "gradient"
-- and "update" (docs/experiments.md, "Findings"). Error feedback sends each coordinate about once
-- every 1/k = 100 steps, so what is applied is 100 steps late; momentum on top of that delay
-- (Mitliagkas et al. 2016: staleness acts like momentum already) is what makes the quickstart's
-- rate fail. Without momentum the two exchanges are one method (the learning rate factors out of
-- a linear exchange), so those runs check each other.
--
-- 6 optimizer settings x 2 exchanges = 12 runs, 2 workers, 2 epochs, about 5 minutes here.
--   laconic run experiments/randomk-momentum.lua --db findings.db
experiment {
  name       = "randomk-momentum",
  data       = fashion_mnist(),
  model      = lenet5(),
  optimizer  = sweep {
    sgd { lr = 0.001, momentum = 0.9 }, sgd { lr = 0.003, momentum = 0.9 }, sgd { lr = 0.01, momentum = 0.9 },
    sgd { lr = 0.01, momentum = 0 },    sgd { lr = 0.03, momentum = 0 },    sgd { lr = 0.1, momentum = 0 },
  },
  compressor = randomk { ratio = 0.01, shared_seed = true, scope = "layer" },
  topology   = allreduce { algorithm = "ring" },
  exchange   = sweep { "gradient", "update" },
  batch_size = 64,
  epochs     = 2,
  workers    = 2,
  seeds      = { 1 },
}
