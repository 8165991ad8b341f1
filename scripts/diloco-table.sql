-- experiments/diloco.lua's table (docs/experiments.md, "DiLoCo"): per run, validation perplexity
-- at steps 300 / 600 / 900 / 1200, bytes sent (all ranks), the most bytes worker 0 sent in one
-- step (the exchange's peak), and the run's wall time. sqlite3 -header -column laconic.db < scripts/diloco-table.sql
SELECT r.name,
  (SELECT printf('%.2f', value) FROM metrics WHERE run_id = r.run_id AND key = 'test_perplexity' AND step = 299) AS p300,
  (SELECT printf('%.2f', value) FROM metrics WHERE run_id = r.run_id AND key = 'test_perplexity' AND step = 599) AS p600,
  (SELECT printf('%.2f', value) FROM metrics WHERE run_id = r.run_id AND key = 'test_perplexity' AND step = 899) AS p900,
  printf('%.2f', r.test_perplexity) AS final,
  printf('%.1f MB', r.bytes_sent / 1e6) AS sent,
  (SELECT printf('%.2f MB', max(value) / 1e6) FROM metrics WHERE run_id = r.run_id AND key = 'bytes_sent' AND worker = 0) AS peak_step,
  printf('%.0f s', r.wall_time) AS wall
FROM run_results r WHERE r.experiment = 'diloco' ORDER BY r.run_id;
