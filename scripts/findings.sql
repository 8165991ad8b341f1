-- Per experiment and configuration (the run name without its seed): runs, how many FINISHED and
-- DIVERGED, the mean over the runs that recorded it of the final test perplexity (language
-- models) or test accuracy and its range over seeds, and the mean bytes each run sent.
-- docs/experiments.md's "Findings" quotes these.
--   laconic query --db findings.db "$(cat scripts/findings.sql)"
SELECT e.name AS experiment,
       replace(r.name, ',seed=' || r.seed, '') AS configuration,
       count(*) AS runs,
       sum(r.status = 'FINISHED') AS finished,
       sum(r.status = 'DIVERGED') AS diverged,
       CASE WHEN count(ppl.last) > 0 THEN 'test_perplexity' WHEN count(acc.last) > 0 THEN 'test_accuracy' ELSE '-' END
         AS metric,
       printf('%.4f', avg(coalesce(ppl.last, acc.last))) AS mean,
       printf('%.4f', min(coalesce(ppl.last, acc.last))) AS low,
       printf('%.4f', max(coalesce(ppl.last, acc.last))) AS high,
       printf('%.3g', avg(sent.sum)) AS bytes_sent
FROM runs r
JOIN experiments e ON e.id = r.experiment_id
LEFT JOIN run_summary acc ON acc.run_id = r.id AND acc.key = 'test_accuracy'
LEFT JOIN run_summary ppl ON ppl.run_id = r.id AND ppl.key = 'test_perplexity'
LEFT JOIN run_summary sent ON sent.run_id = r.id AND sent.key = 'bytes_sent'
GROUP BY e.name, configuration
ORDER BY e.name, min(r.id);
