-- Staleness of the updates a parameter server applied under stale_sync / async, per run:
--   sqlite3 laconic.db < scripts/staleness.sql
.mode column
.headers on
SELECT r.id,
       substr(r.name, 1, 50) AS run,
       count(CASE WHEN m.key = 'staleness' THEN 1 END) AS updates,
       max(CASE WHEN m.key = 'staleness' THEN m.value END) AS max_staleness,
       printf('%.2f', avg(CASE WHEN m.key = 'staleness' THEN m.value END)) AS mean_staleness,
       max(CASE WHEN m.key = 'update_lag' THEN m.value END) AS max_lag,
       printf('%.2f', avg(CASE WHEN m.key = 'update_lag' THEN m.value END)) AS mean_lag
FROM runs r
JOIN metrics m ON m.run_id = r.id AND m.key IN ('staleness', 'update_lag')
GROUP BY r.id ORDER BY r.id;
