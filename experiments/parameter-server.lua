-- The six parameter-server methods of Kothari et al. 2021, "Communication Cost in Distributed
-- Deep Learning" (../shared/papers/kothari-2021-communication-cost-parameter-server-methods.md):
--   1 vanilla PS: push gradients, pull weights (dense both ways)
--   2 QSGD-compressed push, pull weights
--   3 push and pull gradients only (dense)
--   4 QSGD both ways (push and pull gradients)
--   5 Top-k, then QSGD on the kept values, both ways
--   6 method 5 with a reduced push/pull rate: local steps, an exchange every 20 steps
-- As in the paper: 2 workers and 1 server, batch 64, SGD with momentum 0.9, compression layer
-- by layer. Changed to run on a laptop: LeNet-5 on Fashion-MNIST (they used MNIST; VGG-11 on
-- CIFAR-10 comes with issue 7), 3 epochs instead of 20, 2 seeds, learning rate 0.05. Method 6
-- averages the workers' models every 20 steps (local SGD) instead of keeping the most accurate
-- worker's.
-- The three sweeps share group "method": run i takes alternative i of each (paired, not a
-- product).
experiment {
  name       = "parameter-server",
  data       = fashion_mnist(),
  model      = lenet5(),
  optimizer  = sgd { lr = 0.05, momentum = 0.9 },
  batch_size = 64,
  epochs     = 3,
  workers    = 2,
  topology   = sweep {
    parameter_server { pull = "weights", compress_push = false },
    parameter_server { pull = "weights", compress_push = true },
    parameter_server { pull = "gradients", compress_push = false },
    parameter_server { pull = "gradients", compress_push = true, compress_pull = true },
    parameter_server { pull = "gradients", compress_push = true, compress_pull = true },
    parameter_server { pull = "gradients", compress_push = true, compress_pull = true },
    group = "method",
  },
  compressor = sweep {
    none(),
    qsgd { levels = 16, scope = "layer" },
    none(),
    qsgd { levels = 16, scope = "layer" },
    chain { first = topk { ratio = 0.1 }, second = qsgd { levels = 16 }, scope = "layer" },
    chain { first = topk { ratio = 0.1 }, second = qsgd { levels = 16 }, scope = "layer" },
    group = "method",
  },
  schedule   = sweep {
    synchronous(), synchronous(), synchronous(), synchronous(), synchronous(),
    local_sgd { period = 20 },
    group = "method",
  },
  network    = link { bandwidth = "1Gbit", latency = "50us" },
  seeds      = { 1, 2 },
}
