-- Summary views. Durations in the rocpd-style *_summary views are ns;
-- top_kernels and top report µs as rocprofv3's databases do.

CREATE VIEW IF NOT EXISTS `top_kernels` AS
SELECT ks.display_name AS name, COUNT(k.kernel_id) AS total_calls,
       SUM(k.end - k.start) / 1000.0 AS total_duration,
       (SUM(k.end - k.start) / COUNT(k.kernel_id)) / 1000.0 AS average,
       SUM(k.end - k.start) * 100.0 / (SELECT SUM(a.end - a.start) FROM `rocpd_kernel_dispatch` a) AS percentage
  FROM `rocpd_kernel_dispatch` k
  JOIN `rocpd_info_kernel_symbol` ks ON ks.id = k.kernel_id AND ks.guid = k.guid
 GROUP BY name
 ORDER BY total_duration DESC;

-- Device busy time: kernels on their agent, copies on their destination.
CREATE VIEW IF NOT EXISTS `busy` AS
SELECT g.agent_id, ag.type, g.GpuTime, w.WallTime, g.GpuTime * 1.0 / w.WallTime AS Busy
  FROM (SELECT agent_id, guid, SUM(end - start) AS GpuTime
          FROM (SELECT agent_id, guid, start, end FROM `rocpd_kernel_dispatch`
                UNION ALL
                SELECT dst_agent_id AS agent_id, guid, start, end FROM `rocpd_memory_copy`)
         GROUP BY agent_id, guid) g
  JOIN (SELECT MAX(end) - MIN(start) AS WallTime
          FROM (SELECT start, end FROM `rocpd_kernel_dispatch`
                UNION ALL
                SELECT start, end FROM `rocpd_memory_copy`)) w ON 1 = 1
  JOIN `rocpd_info_agent` ag ON ag.id = g.agent_id AND ag.guid = g.guid;

CREATE VIEW IF NOT EXISTS `top` AS
SELECT name, COUNT(*) AS total_calls, SUM(duration) / 1000.0 AS total_duration,
       (SUM(duration) / COUNT(*)) / 1000.0 AS average,
       SUM(duration) * 100.0 / total_time AS percentage
  FROM (SELECT ks.display_name AS name, (k.end - k.start) AS duration
          FROM `rocpd_kernel_dispatch` k
          JOIN `rocpd_info_kernel_symbol` ks ON ks.id = k.kernel_id AND ks.guid = k.guid
        UNION ALL
        SELECT s.string AS name, (m.end - m.start) AS duration
          FROM `rocpd_memory_copy` m
          JOIN `rocpd_string` s ON s.id = m.name_id AND s.guid = m.guid
        UNION ALL
        SELECT s.string AS name, (r.end - r.start) AS duration
          FROM `rocpd_region` r
          JOIN `rocpd_string` s ON s.id = r.name_id AND s.guid = r.guid)
 CROSS JOIN (SELECT SUM(end - start) AS total_time
               FROM (SELECT start, end FROM `rocpd_kernel_dispatch`
                     UNION ALL SELECT start, end FROM `rocpd_memory_copy`
                     UNION ALL SELECT start, end FROM `rocpd_region`))
 GROUP BY name
 ORDER BY total_duration DESC;

-- The tables `rocpd summary` prints, stored so any SQLite client can read
-- them: one row per name, sample standard deviation (n - 1).
CREATE VIEW IF NOT EXISTS `kernel_summary` AS
SELECT name AS "Name", COUNT(*) AS "Calls", SUM(duration) AS "DURATION (nsec)",
       AVG(duration) AS "AVERAGE (nsec)",
       SUM(duration) * 100.0 / (SELECT SUM(duration) FROM `kernels`) AS "PERCENT (INC)",
       MIN(duration) AS "MIN (nsec)", MAX(duration) AS "MAX (nsec)",
       CASE WHEN COUNT(*) > 1 THEN sqrt(MAX(0.0, (SUM(duration * duration) - SUM(duration) * 1.0
            * SUM(duration) / COUNT(*)) / (COUNT(*) - 1))) ELSE 0.0 END AS "STD_DEV"
  FROM `kernels`
 GROUP BY name
 ORDER BY "DURATION (nsec)" DESC;

-- Kernels grouped by the ROCTx range they were renamed to (kernel_rename),
-- falling back to the kernel name.
CREATE VIEW IF NOT EXISTS `kernel_summary_region` AS
SELECT COALESCE(NULLIF(region, ''), name) AS "Name", COUNT(*) AS "Calls",
       SUM(duration) AS "DURATION (nsec)", AVG(duration) AS "AVERAGE (nsec)",
       SUM(duration) * 100.0 / (SELECT SUM(duration) FROM `kernels`) AS "PERCENT (INC)",
       MIN(duration) AS "MIN (nsec)", MAX(duration) AS "MAX (nsec)",
       CASE WHEN COUNT(*) > 1 THEN sqrt(MAX(0.0, (SUM(duration * duration) - SUM(duration) * 1.0
            * SUM(duration) / COUNT(*)) / (COUNT(*) - 1))) ELSE 0.0 END AS "STD_DEV"
  FROM `kernels`
 GROUP BY 1
 ORDER BY "DURATION (nsec)" DESC;

CREATE VIEW IF NOT EXISTS `memory_copy_summary` AS
SELECT name AS "Name", COUNT(*) AS "Calls", SUM(duration) AS "DURATION (nsec)",
       AVG(duration) AS "AVERAGE (nsec)",
       SUM(duration) * 100.0 / (SELECT SUM(duration) FROM `memory_copies`) AS "PERCENT (INC)",
       MIN(duration) AS "MIN (nsec)", MAX(duration) AS "MAX (nsec)",
       CASE WHEN COUNT(*) > 1 THEN sqrt(MAX(0.0, (SUM(duration * duration) - SUM(duration) * 1.0
            * SUM(duration) / COUNT(*)) / (COUNT(*) - 1))) ELSE 0.0 END AS "STD_DEV",
       SUM(size) AS "BYTES"
  FROM `memory_copies`
 GROUP BY name
 ORDER BY "DURATION (nsec)" DESC;

CREATE VIEW IF NOT EXISTS `memory_allocation_summary` AS
SELECT type AS "Name", level AS "Level", COUNT(*) AS "Calls", SUM(duration) AS "DURATION (nsec)",
       AVG(duration) AS "AVERAGE (nsec)",
       SUM(duration) * 100.0 / (SELECT SUM(duration) FROM `memory_allocations`) AS "PERCENT (INC)",
       MIN(duration) AS "MIN (nsec)", MAX(duration) AS "MAX (nsec)",
       CASE WHEN COUNT(*) > 1 THEN sqrt(MAX(0.0, (SUM(duration * duration) - SUM(duration) * 1.0
            * SUM(duration) / COUNT(*)) / (COUNT(*) - 1))) ELSE 0.0 END AS "STD_DEV",
       SUM(size) AS "BYTES"
  FROM `memory_allocations`
 GROUP BY type, level
 ORDER BY "DURATION (nsec)" DESC;
