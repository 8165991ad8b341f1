-- signSGD and Signum with majority vote (Bernstein et al. 2018) on LeNet-5 / Fashion-MNIST with
-- 2 workers. Every coordinate moves by lr per step, so the step is far smaller than for the
-- methods that keep magnitudes (experiments/compressors.lua); the momentum lives in `signum`.
experiment {
  name       = "sign-compressors",
  data       = fashion_mnist(),
  model      = lenet5(),
  optimizer  = sgd { lr = 0.0005 },
  batch_size = 64,
  epochs     = 1,
  workers    = 2,
  compressor = sweep { signsgd(), signum { momentum = 0.9 } },
  seeds      = { 1 },
}
