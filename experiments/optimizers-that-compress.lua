-- Optimizers that compress at this machine's scale (issue 66; docs/experiments.md, "Optimizers
-- that compress"): the transformer and data of experiments/diloco.lua (a gpt of 0.44M parameters
-- on perldoc, 4 workers as thread ranks, 1200 steps of 8 windows of 64 bytes per worker, the same
-- tokens for every configuration), comparing
--   - AdamW with every step's gradient all-reduced (DDP), the baseline;
--   - DeMo (Peng et al. 2024) at its defaults (64 x 64 DCT chunks, 32 coefficients each, momentum
--     decay 0.999), its sign step at AdamW's rate and schedule, decoupled weight decay 0.1;
--   - 1-bit Adam (Tang et al. 2021) at AdamW's settings, dense for the first 15% of the steps
--     (180), then its variance frozen and its momentum sent in 1 bit an element;
--   - DiLoCo at H = 50 (OpenDiLoCo's outer Nesterov SGD), as in experiments/diloco.lua;
--   - SparseLoCo (Sarfi et al. 2025) at H = 50: the same inner AdamW, each round's pseudo-gradient
--     through sparseloco's defaults (64 of every 4096 elements, 2-bit levels, error decay 0.95),
--     and a plain outer step (sgd { lr = 1 }: the decayed error stands in for outer momentum);
--     and at 128 of every 4096 (3.1%, the top of the paper's 1-3%);
--   - DiLoCo and SparseLoCo (1.56%) at H = 15, the paper's shortest round: 80 rounds, not 24.
--
--   laconic run experiments/optimizers-that-compress.lua          (about 45 minutes on 2 cores)
--   laconic report optimizers-that-compress --link 100Mbit --link 10Gbit
local base = adamw { lr = 2e-3, betas = { 0.9, 0.95 }, weight_decay = 0.1 }
experiment {
  name        = "optimizers-that-compress",
  data        = perldoc { context = 64 },
  model       = gpt { layers = 2, embed = 128, heads = 4, context = 64 },
  optimizer   = sweep {
    base,
    demo { lr = 2e-3, weight_decay = 0.1 },
    onebit_adam { lr = 2e-3, betas = { 0.9, 0.95 }, weight_decay = 0.1, warmup_steps = 180 },
    base,
    base,
    base,
    base,
    base,
    group = "method" },
  schedule    = sweep { synchronous(), synchronous(), synchronous(),
                        diloco { inner_steps = 50, outer = sgd { lr = 0.7, momentum = 0.9, nesterov = true } },
                        diloco { inner_steps = 50, outer = sgd { lr = 1 } },
                        diloco { inner_steps = 50, outer = sgd { lr = 1 } },
                        diloco { inner_steps = 15, outer = sgd { lr = 0.7, momentum = 0.9, nesterov = true } },
                        diloco { inner_steps = 15, outer = sgd { lr = 1 } },
                        group = "method" },
  compressor  = sweep { none(), none(), none(), none(), sparseloco(), sparseloco { topk = 128 }, none(), sparseloco(),
                        group = "method" },
  lr_schedule = cosine { final = 0.1, warmup_steps = 50 },
  clip_norm   = 1.0,
  batch_size  = 8,
  epochs      = 1,
  max_steps   = 1200,
  eval_every  = 100,
  eval_limit  = 256,
  workers     = 4,
  placement   = threads(),
  topology    = allreduce(),   -- DDP's ring; DeMo's, 1-bit Adam's and SparseLoCo's payloads, not summable, are gathered in it
  seeds       = { 1 },
}
