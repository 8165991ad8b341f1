-- The quickstart: LeNet-5 on Fashion-MNIST with 2 workers and ring allreduce, one epoch of
-- synchronous SGD with momentum, without compression and with Top-k 1% plus error feedback.
-- Run it with `laconic run experiments/quickstart.lua`, then `laconic report quickstart`.
experiment {
  name       = "quickstart",
  data       = fashion_mnist(),
  model      = lenet5(),
  optimizer  = sgd { lr = 0.05, momentum = 0.9 },
  batch_size = 64,
  epochs     = 1,
  workers    = 2,
  topology   = allreduce { algorithm = "ring" },
  schedule   = synchronous(),
  compressor = sweep { none(), topk { ratio = 0.01, error_feedback = true } },
  seeds      = { 1 },
}
