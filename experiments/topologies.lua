-- Topologies and schedules side by side: LeNet-5 / Fashion-MNIST, 4 workers, one epoch, no
-- compression. Ring and halving-doubling allreduce, allgather (every worker gathers every gradient), gossip
-- (decentralized SGD, each worker mixing with its ring neighbours), and a parameter server
-- (one more process), each bulk-synchronous and with local SGD (an average every 4 steps).
-- Communication is projected onto 1 Gbit/s, 50 us (see docs/network-model.md).
experiment {
  name       = "topologies",
  data       = fashion_mnist(),
  model      = lenet5(),
  optimizer  = sgd { lr = 0.05, momentum = 0.9 },
  batch_size = 64,
  epochs     = 1,
  workers    = 4,
  topology   = sweep {
    allreduce(),
    allreduce { algorithm = "halving_doubling" },
    allgather(),
    gossip { peers = "ring", neighbours = 2 },
    parameter_server { pull = "gradients" },
  },
  schedule   = sweep { synchronous(), local_sgd { period = 4 } },
  network    = link { bandwidth = "1Gbit", latency = "50us" },
  seeds      = { 1 },
}
