-- Per experiment and configuration (the run name without its seed): runs, how many FINISHED,
-- the mean and spread over seeds of the final test accuracy (test perplexity for language
-- models), and the mean bytes each run sent. docs/experiments.md's "Findings" quotes these.
--   laconic query --db findings.db "$(cat scripts/findings.sql)"
SELECT e.name AS experiment,
       replace(r.name, ',seed=' || r.seed, '') AS configuration,
       count(*) AS runs,
       sum(r.status = 'FINISHED') AS finished,
       printf('%.4f', avg(coalesce(acc.last, ppl.last))) AS mean_metric,
       printf('%.4f', max(coalesce(acc.last, ppl.last)) - min(coalesce(acc.last, ppl.last))) AS spread,
       CASE WHEN acc.last IS NOT NULL THEN 'test_accuracy' ELSE 'test_perplexity' END AS metric,
       printf('%.3g', avg(sent.sum)) AS bytes_sent
FROM runs r
JOIN experiments e ON e.id = r.experiment_id
LEFT JOIN run_summary acc ON acc.run_id = r.id AND acc.key = 'test_accuracy'
LEFT JOIN run_summary ppl ON ppl.run_id = r.id AND ppl.key = 'test_perplexity'
LEFT JOIN run_summary sent ON sent.run_id = r.id AND sent.key = 'bytes_sent'
GROUP BY e.name, configuration
ORDER BY e.name, min(r.id);
