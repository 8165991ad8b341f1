-- Every compressor of the library on LeNet-5 / Fashion-MNIST with 2 workers and ring
-- allreduce (payloads that cannot be summed compressed are gathered), one epoch of SGD with
-- momentum at the quickstart's learning rate. One seed; per-method tuning comes with `tune`.
-- The pure sign methods (signsgd, signum) need a much smaller step: experiments/sign-compressors.lua;
-- DGC brings its own momentum: experiments/dgc.lua.
experiment {
  name       = "compressors",
  data       = fashion_mnist(),
  model      = lenet5(),
  optimizer  = sgd { lr = 0.05, momentum = 0.9 },
  batch_size = 64,
  epochs     = 1,
  workers    = 2,
  topology   = allreduce { algorithm = "ring" },
  schedule   = synchronous(),
  compressor = sweep {
    none(),
    fp16(),
    bf16(),
    uniform { bits = 8 },
    adaptive(),
    qsgd { levels = 16 },
    qsgd { levels = 16, coding = "elias" },
    terngrad(),
    ef_signsgd(),
    onebit(),
    topk { ratio = 0.01 },
    randomk { ratio = 0.01 },
    block_randomk { ratio = 0.01 },
    threshold { tau = 0.001 },
    powersgd { rank = 2 },
    chain { first = topk { ratio = 0.01 }, second = qsgd { levels = 16 } },
  },
  seeds      = { 1 },
}
