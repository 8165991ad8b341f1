-- Stale-synchronous and asynchronous SGD against a synchronous parameter server, with one
-- straggler: LeNet-5 / Fashion-MNIST, 3 workers, one epoch, SGD without momentum (asynchronous
-- updates are applied one by one, and momentum would amplify stale ones). The last worker
-- sleeps 20 ms per step. Reads: how much wall time the bound saves, and what staleness
-- (`staleness`, `update_lag` in the metrics) costs in accuracy.
experiment {
  name       = "stale-sync",
  data       = fashion_mnist(),
  model      = lenet5(),
  optimizer  = sgd { lr = 0.02 },
  batch_size = 64,
  epochs     = 1,
  workers    = 3,
  topology   = parameter_server { pull = "weights" },
  schedule   = sweep {
    synchronous { stragglers = 1, straggler_delay = 0.02 },
    stale_sync { staleness = 0, stragglers = 1, straggler_delay = 0.02 },
    stale_sync { staleness = 4, stragglers = 1, straggler_delay = 0.02 },
    async { stragglers = 1, straggler_delay = 0.02 },
  },
  seeds      = { 1 },
}
