-- Fixed N-bit quantization against entropy-adaptive quantization with Huffman coding (Øland &
-- Raj 2015, "Reducing Communication Overhead in Distributed Learning by an Order of Magnitude
-- (Almost)", ../shared/papers/oland-raj-2015-quantization-huffman.md): Fig. 1 (accuracy against
-- the bits of fixed quantization), Fig. 4 (accuracy and convergence of the adaptive scheme with
-- probe size M = 4 and floor c = 5 or 6) and Fig. 5 (bits per parameter over training, raw and
-- Huffman-coded).
--
-- As in the paper: the 784-392-50-10 tanh network, plain SGD (no momentum) with an exponential
-- learning-rate decay, synchronous exchange once per "epoch" after which every worker holds the
-- average model. Compressors:
--   none()                                    32-bit baseline
--   uniform { bits = 2 ... 10 }               fixed N-bit min-max quantization to bin centres
--                                             over all weights at once (scope "global", Sec. 3.1)
--   adaptive { probe_bits = M, floor_bits = c, huffman }  Algorithm 1 per layer (scope "layer"),
--                                             entropy from a 3% sample (F = 0.03):
--     M = 4, c = 5, packed     the paper's ~6.8 bits per parameter
--     M = 4, c = 5, Huffman    its "sweet spot", ~3.55 bits per parameter
--     M = 4, c = 6, Huffman    its best setting (more accurate than the baseline), ~3.78 bits
-- 9 compressors x 3 seeds = 27 runs (`laconic check` lists them). The paper ran ~50 seeds per
-- point (about 1,500 trainings); 3 seeds give a spread, not its box plots.
--
-- Changed to run on a 2-core laptop: Fashion-MNIST instead of MNIST (MNIST is not packaged for
-- Debian; `data = mnist { root = "..." }` runs it once its four idx files are downloaded);
-- 2 workers instead of the paper's 5 GPUs; 10 "epochs" of 100 steps of 64 examples per worker
-- (`max_steps`) instead of 100 full epochs, with local SGD averaging the models after exactly
-- those 100 steps (`period` = `max_steps`), so there is one exchange per epoch as in the paper;
-- learning rate 0.1 x 0.9 per epoch; no l1 regularization (sgd has only an L2 weight decay).
-- laconic compresses the change of each worker's model since the last average, not the
-- weights themselves, so the entropy and bit counts are those of the update. About 25 minutes
-- on 2 cores (estimated from the MLP's measured 31 ms per step in docs/benchmarks.md, not
-- measured for this file).
--
-- Reading the results:
--   laconic run experiments/oland-raj-2015.lua
--   laconic runs --experiment oland-raj-2015     final test accuracy per run (Fig. 1, 4a/b)
--   laconic report oland-raj-2015                accuracy per epoch (convergence, Fig. 4c/d),
--     bytes sent and compression ratio
--   bits per parameter of each exchange (Fig. 5): 8 x payload_bytes / 327,880 parameters at the
--   exchanging steps, e.g.
--   sqlite3 laconic.db "SELECT r.name, m.epoch, 8.0 * m.value / 327880 AS bits
--     FROM metrics m JOIN runs r ON r.id = m.run_id JOIN experiments e ON e.id = r.experiment_id
--     WHERE e.name = 'oland-raj-2015' AND m.key = 'payload_bytes' AND m.worker = 0
--       AND m.value > 0 ORDER BY r.id, m.epoch"
local steps = 100    -- steps per worker per epoch, and the local SGD period
local F = 0.03       -- fraction of each layer sampled for the entropy estimate

experiment {
  name        = "oland-raj-2015",
  data        = fashion_mnist(),
  model       = mlp { sizes = { 784, 392, 50, 10 }, activation = "tanh" },
  optimizer   = sgd { lr = 0.1 },
  lr_schedule = step_decay { every = 1, factor = 0.9 },
  batch_size  = 64,
  epochs      = 10,
  max_steps   = steps,
  workers     = 2,
  topology    = allreduce { algorithm = "ring" },
  schedule    = local_sgd { period = steps },
  compressor  = sweep {
    none(),
    uniform { bits = 2 },
    uniform { bits = 4 },
    uniform { bits = 6 },
    uniform { bits = 8 },
    uniform { bits = 10 },
    adaptive { sample_fraction = F, probe_bits = 4, floor_bits = 5, huffman = false,
               scope = "layer" },
    adaptive { sample_fraction = F, probe_bits = 4, floor_bits = 5, huffman = true,
               scope = "layer" },
    adaptive { sample_fraction = F, probe_bits = 4, floor_bits = 6, huffman = true,
               scope = "layer" },
  },
  seeds       = { 1, 2, 3 },
}
