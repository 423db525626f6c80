package rocpdtest

import (
	"database/sql"
	"fmt"
)

// WriteSynthetic creates a large single-process database for benchmarks:
// records rows split evenly between kernel dispatches (16 kernels) and HIP
// API regions, each with its event row, generated inside SQLite so building
// ten million rows takes seconds, not minutes.
func WriteSynthetic(path, guid string, records int) error {
	p := Process{GUID: guid, PID: 4242, PPID: 1, Hostname: "bench", Command: "./bench", Start: 0, End: 1 << 40}
	for k := 0; k < 16; k++ {
		p.Dispatches = append(p.Dispatches, Dispatch{Kernel: fmt.Sprintf("kernel_%02d(float*)", k), TID: 4242, Queue: 1,
			Start: int64(k) * 10, End: int64(k)*10 + 5, Grid: [3]int64{64, 1, 1}, Workgroup: [3]int64{64, 1, 1}})
	}
	p.APICalls = []APICall{{Category: "HIP_RUNTIME_API_EXT", Name: "hipLaunchKernel", TID: 4242, Start: 1, End: 2}}
	if err := Write(path, p); err != nil {
		return err
	}
	db, err := sql.Open("sqlite3", "file:"+path+"?_journal_mode=OFF&_synchronous=OFF")
	if err != nil {
		return err
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	t := func(b string) string { return b + Suffix(guid) }
	half := records / 2
	stmts := []string{
		// events: ids above the fixture's, category of the matching record.
		fmt.Sprintf(`WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM n WHERE i < %d)
INSERT INTO %s (id, category_id, stack_id, parent_stack_id, correlation_id)
SELECT 100+i, (SELECT category_id FROM %s WHERE id = CASE WHEN i %% 2 = 0 THEN 2 ELSE 1 END), 100+i, 0, 0 FROM n`,
			2*half, t("rocpd_event"), t("rocpd_event")),
		fmt.Sprintf(`WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM n WHERE i < %d)
INSERT INTO %s (id, nid, pid, tid, agent_id, kernel_id, dispatch_id, queue_id, stream_id, start, end,
 private_segment_size, group_segment_size, workgroup_size_x, workgroup_size_y, workgroup_size_z,
 grid_size_x, grid_size_y, grid_size_z, region_name_id, event_id)
SELECT 100+i, 1, 4242, 4242, 1, 1 + i %% 16, 100+i, 1, 0, i*1000, i*1000 + 500 + (i*7919) %% 400,
 0, 0, 64, 1, 1, 4096, 1, 1, 1, 100+2*i FROM n`, half, t("rocpd_kernel_dispatch")),
		fmt.Sprintf(`WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM n WHERE i < %d)
INSERT INTO %s (id, nid, pid, tid, start, end, name_id, event_id)
SELECT 100+i, 1, 4242, 4242, i*1000, i*1000 + 100 + (i*31) %% 50,
 (SELECT name_id FROM %s WHERE id = 1), 99+2*i FROM n`, half, t("rocpd_region"), t("rocpd_region")),
	}
	for _, s := range stmts {
		if _, err := db.Exec(s); err != nil {
			return fmt.Errorf("synthesize %s: %w", path, err)
		}
	}
	return nil
}
