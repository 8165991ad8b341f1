-- Two islands of two ranks on emulated links (docs/network-model.md, "Emulated islands"), as
-- root: each rank in a network namespace of its own, a bridge per island, each rank's link shaped
-- to 1 Gbit/s and each island's link to the others to 20 or 100 Mbit/s. Every step records
-- the exchange measured on the shaped links (time_communicate) and the model's projection of
-- the same messages (projected_time_communicate); bench/emulated_islands.py prints the two
-- side by side. LeNet-5 / Fashion-MNIST, the ring and the hierarchical allreduce, 30 steps.
local function islands(between)
  return cluster {
    islands = { 2, 2 },
    emulate = true,
    inside  = link { bandwidth = "1Gbit", latency = "100us" },
    between = link { bandwidth = between, latency = "1ms" },
  }
end

experiment {
  name       = "islands-emulated",
  data       = fashion_mnist(),
  model      = lenet5(),
  optimizer  = sgd { lr = 0.05, momentum = 0.9 },
  batch_size = 64,
  max_steps  = 30,
  eval_limit = 500,
  workers    = 4,
  network    = sweep { islands("20Mbit"), islands("100Mbit") },
  topology   = sweep { allreduce { algorithm = "ring" }, allreduce { algorithm = "hierarchical" } },
  seeds      = { 1, 2 },
}
