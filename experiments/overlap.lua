-- The DDP-grade baseline: the gradient exchanged after backward against PyTorch DDP's scheme,
-- buckets (25 MiB, the first 1 MiB) exchanged on a communication thread while backward runs.
-- ResNet-20 on synthetic CIFAR-shaped data, 2 workers, dense and with the two compressors DDP
-- has hooks for. The report's time-per-step table shows what each step waited for and, in its
-- own column, what was hidden behind backward (docs/topologies.md, "Overlapping communication
-- with backward"). Communication is also projected onto 1 Gbit/s, 50 us.
experiment {
  name       = "overlap",
  data       = synthetic { shape = {3, 32, 32}, n = 2560, test_n = 256 },
  model      = resnet { depth = 20 },
  optimizer  = sgd { lr = 0.05, momentum = 0.9 },
  batch_size = 64,
  epochs     = 1,
  workers    = 2,
  topology   = sweep { allreduce { algorithm = "ring", overlap = false }, allreduce { algorithm = "ring", overlap = true } },
  schedule   = synchronous(),
  compressor = sweep { none(), fp16(), powersgd { rank = 2 } },
  network    = link { bandwidth = "1Gbit", latency = "50us" },
  seeds      = { 1, 2 },
}
