-- Candidates for `laconic advise` (docs/advise.md): LeNet-5 on Fashion-MNIST, synchronous SGD,
-- the baseline first and then seven compressors, each under the topology that carries it.
--   laconic advise experiments/advise-lenet.lua --workers 16 --link 1Gbit
-- advise trains each as a short probe at the asked workers (as threads of one process) and
-- ranks them by predicted time to the target on the asked link.
experiment {
  name       = "advise-lenet",
  data       = fashion_mnist(),
  model      = lenet5(),
  optimizer  = sgd { lr = 0.05, momentum = 0.9 },
  batch_size = 32,
  epochs     = 2,
  workers    = 2,
  topology   = allreduce { algorithm = "ring" },
  schedule   = synchronous(),
  compressor = sweep {
    none(),
    fp16(),
    topk { ratio = 0.01, error_feedback = true },
    topk { ratio = 0.1, error_feedback = true },
    powersgd { rank = 2 },
    qsgd { levels = 16 },
    ef_signsgd(),
    randomk { ratio = 0.1, shared_seed = true, error_feedback = true },
  },
  seeds      = { 1 },
}
