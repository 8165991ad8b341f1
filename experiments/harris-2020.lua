-- Top-k, DGC and QSGD on an LSTM language model (Harris 2020, "Gradient Compression in
-- Distributed Deep Learning", ../shared/papers/harris-2020-gradient-compression-topk-dgc-qsgd.md):
-- Table B.1 (test perplexity of each method and compression level, by model size and number of
-- workers) and Table B.2 (computation time), at laptop scale.
--
-- As in the paper: a 2-layer word-level LSTM with tied embeddings (embed = hidden), bptt 35,
-- vanilla SGD, a global batch split evenly among the workers, one seed (42), compression of each
-- parameter tensor on its own (scope "layer", as the thesis's optimizer compresses each
-- parameter's gradient). Methods and levels:
--   none                                   1x
--   topk, ratio 0.01 / 0.001 / 0.0001      50x / 500x / 5000x (index, value pairs), error feedback
--   dgc,  ratio 0.01 / 0.001 / 0.0001      the same, with momentum correction (m = 0.9) and masking
--   qsgd, levels 64 / 16 / 4               the thesis's "7 / 5 / 3 bits"; fixed-length coding (no
--                                          Elias coding) and no error feedback, as in the thesis.
--                                          laconic codes the 65 / 17 / 5 magnitudes and the sign
--                                          in 8 / 6 / 4 bits, plus one norm per 512 elements (the
--                                          thesis: one norm per tensor); levels 63 / 15 / 3 would
--                                          give its bit counts
-- The thesis tunes every (method, size, workers) cell separately by a 60-trial random search
-- (learning rate in [1, 50], dropout, DGC momentum). Here that tuning is a grid over the learning
-- rate per method: the compressor and optimizer sweeps share group "method", so each method runs
-- with its own learning rates (5 and 20; DGC 0.5 and 2, since its momentum correction with
-- m = 0.9 multiplies the step by about 10); read the best run of each method. `tune = { ... }`
-- (docs/dsl.md) would draw one learning-rate range for all methods, which DGC's 10x smaller
-- rates do not fit, so this file keeps a grid per method.
-- 10 methods x 2 learning rates x 2 model sizes x 2 worker counts x 1 seed = 80 runs
-- (`laconic check` lists them).
--
-- Changed to run on a 2-core laptop:
-- - Corpus: not Penn Treebank (not packaged for Debian) but gnuplot's help text,
--   /usr/share/gnuplot/gnuplot-nox.gih from the Debian package gnuplot-nox, which
--   scripts/laconic-setup.sh installs: 17,770 lines, split 80/10/10 by lines, about 112k
--   training and 14k test tokens. `laconic check` only checks that the file exists; it is read
--   when a run starts. For PTB, set `corpus` to the prefix ".../ptb" of ptb.train.txt,
--   ptb.valid.txt and ptb.test.txt and `vocab` to 10000.
-- - Vocabulary 2,000 instead of 10,000 (17% of training and 27% of test tokens become <unk>),
--   which divides the decoder's cost by 5.
-- - Model sizes: hidden 100 (the thesis's "small", here 363,600 parameters with the smaller
--   vocabulary) and hidden 50 (142,800), not 100 / 300 / 500: the medium model would take about
--   6x the small one's time. Add 300 and 500 to `hiddens` for the thesis's sizes.
-- - Workers 1 and 2 (the thesis: 1, 2, 4), global batch 64 windows instead of 256.
-- - One epoch cut to 20 steps (`max_steps`, 45k tokens, 40% of the training split) instead of up
--   to 50 epochs with early stopping (patience 10, on the validation split, which laconic does
--   not evaluate); dropout off (the thesis tunes it in [0, 0.8]); DGC's warm-up off (one
--   epoch) and no gradient clipping (sgd has none; dgc's clip_norm is left at 0 so that every
--   method runs unclipped).
-- Time: about 45 minutes on 2 cores, estimated from one measured run (hidden 100, 1 worker, no
-- compression, 50 steps: 2.0 s per step, 110 s in all, with a compiler busy on the other core)
-- and scaled by the models' multiply-adds for the others.
--
-- Reading the results:
--   laconic run experiments/harris-2020.lua
--   test perplexity per run, best first (Table B.1: take the best learning rate of each method):
--   sqlite3 laconic.db "SELECT r.name, r.status, s.last AS test_perplexity FROM runs r
--     JOIN experiments e ON e.id = r.experiment_id
--     LEFT JOIN run_summary s ON s.run_id = r.id AND s.key = 'test_perplexity'
--     WHERE e.name = 'harris-2020' ORDER BY s.last"
--   laconic report harris-2020     seconds per step of forward, backward, compression and
--     communication (Table B.2), bytes sent and compression ratio (runs on 2 workers; a single
--     worker sends nothing, its payload_bytes still give the compressed size)
--   Runs whose loss becomes NaN end DIVERGED (`laconic runs --status DIVERGED`).
local corpus  = "/usr/share/gnuplot/gnuplot-nox.gih"
local vocab   = 2000
local hiddens = { 50, 100 }

local methods = {   -- { compressor, learning rates }
  { none(),                                             { 5, 20 } },
  { topk { ratio = 0.01, scope = "layer" },             { 5, 20 } },
  { topk { ratio = 0.001, scope = "layer" },            { 5, 20 } },
  { topk { ratio = 0.0001, scope = "layer" },           { 5, 20 } },
  { dgc { ratio = 0.01, warmup = 0, scope = "layer" },   { 0.5, 2 } },
  { dgc { ratio = 0.001, warmup = 0, scope = "layer" },  { 0.5, 2 } },
  { dgc { ratio = 0.0001, warmup = 0, scope = "layer" }, { 0.5, 2 } },
  { qsgd { levels = 64, scope = "layer" },              { 5, 20 } },
  { qsgd { levels = 16, scope = "layer" },              { 5, 20 } },
  { qsgd { levels = 4, scope = "layer" },               { 5, 20 } },
}

local compressors, optimizers = { group = "method" }, { group = "method" }
for _, m in ipairs(methods) do
  for _, lr in ipairs(m[2]) do
    compressors[#compressors + 1] = m[1]
    optimizers[#optimizers + 1] = sgd { lr = lr }
  end
end

local models = {}
for i, h in ipairs(hiddens) do models[i] = lstm_lm { vocab = vocab, embed = h, hidden = h } end

experiment {
  name       = "harris-2020",
  data       = text { file = corpus, vocab = vocab, bptt = 35 },
  model      = sweep(models),
  workers    = sweep { 1, 2, group = "workers" },
  batch_size = sweep { 64, 32, group = "workers" },   -- 64 windows per step, split among workers
  optimizer  = sweep(optimizers),
  compressor = sweep(compressors),
  topology   = allreduce { algorithm = "ring" },
  schedule   = synchronous(),
  epochs     = 1,
  max_steps  = 20,
  seeds      = { 42 },
}
