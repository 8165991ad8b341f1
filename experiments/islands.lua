-- Two islands of four ranks joined by a slow link (docs/network-model.md, "Islands"):
-- LeNet-5 / Fashion-MNIST, 8 workers as threads, one epoch (235 steps). The flat ring pays the 100 Mbit/s link
-- between the islands at every one of its 14 phases; halving-doubling at the two steps whose
-- partners sit in the other island, with all four ranks of an island on its link at once; the
-- hierarchical allreduce sends each island's sum between once, spread over its ranks, and with
-- quantized_allreduce does so in 8 bits (fp32 inside), rounding stochastically (the default) or
-- to the nearest level. Communication is projected.
experiment {
  name       = "islands",
  data       = fashion_mnist(),
  model      = lenet5(),
  optimizer  = sgd { lr = 0.05, momentum = 0.9 },
  batch_size = 32,
  epochs     = 1,
  workers    = 8,
  placement  = threads(),
  network    = cluster {
    islands = { 4, 4 },
    inside  = link { bandwidth = "10Gbit", latency = "10us" },
    between = link { bandwidth = "100Mbit", latency = "1ms" },
  },
  topology   = sweep {
    allreduce { algorithm = "ring" },
    allreduce { algorithm = "halving_doubling" },
    allreduce { algorithm = "hierarchical" },
    allreduce { algorithm = "hierarchical" },
    allreduce { algorithm = "hierarchical" },
    allreduce { algorithm = "ring" },
    group = "method",
  },
  compressor = sweep { none(), none(), none(), quantized_allreduce(), quantized_allreduce { rounding = "nearest" },
                       quantized_allreduce(), group = "method" },
  seeds      = { 1 },
}
