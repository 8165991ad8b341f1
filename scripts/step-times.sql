-- Mean per-step times of worker 0 for every run of a database, measured and projected:
--   sqlite3 laconic.db < scripts/step-times.sql
.mode column
.headers on
SELECT r.id,
       substr(r.name, 1, 58) AS run,
       printf('%.4f', acc.last) AS test_acc,
       printf('%.1f', 1000 * avg(CASE WHEN m.key = 'time_step' THEN m.value END)) AS step_ms,
       printf('%.1f', 1000 * avg(CASE WHEN m.key = 'time_communicate' THEN m.value END)) AS comm_ms,
       printf('%.2f', 1000 * avg(CASE WHEN m.key = 'projected_time_communicate' THEN m.value END)) AS proj_comm_ms,
       printf('%.1f', 1000 * avg(CASE WHEN m.key = 'projected_time_step' THEN m.value END)) AS proj_step_ms
FROM runs r
JOIN metrics m ON m.run_id = r.id AND m.worker = 0
LEFT JOIN run_summary acc ON acc.run_id = r.id AND acc.key = 'test_accuracy'
GROUP BY r.id ORDER BY r.id;
