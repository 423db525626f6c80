-- Analysis views over the un-suffixed table views. Every join matches guid
-- as well as id, so the same views work over several merged databases.

CREATE VIEW IF NOT EXISTS `code_objects` AS
SELECT co.id, co.guid, co.nid, p.pid, ag.absolute_index AS agent_abs_index, co.uri,
       co.load_base, co.load_size, co.load_delta, co.storage_type AS storage_type_str,
       json_extract(co.extdata, '$.size') AS code_object_size,
       json_extract(co.extdata, '$.storage_type') AS storage_type,
       json_extract(co.extdata, '$.memory_base') AS memory_base,
       json_extract(co.extdata, '$.memory_size') AS memory_size
  FROM `rocpd_info_code_object` co
  JOIN `rocpd_info_agent` ag ON ag.id = co.agent_id AND ag.guid = co.guid
  JOIN `rocpd_info_process` p ON p.id = co.pid AND p.guid = co.guid;

CREATE VIEW IF NOT EXISTS `kernel_symbols` AS
SELECT ks.id, ks.guid, ks.nid, p.pid, ks.code_object_id, ks.kernel_name, ks.display_name,
       ks.kernel_object, ks.kernarg_segment_size, ks.kernarg_segment_alignment,
       ks.group_segment_size, ks.private_segment_size, ks.sgpr_count, ks.arch_vgpr_count,
       ks.accum_vgpr_count,
       json_extract(ks.extdata, '$.size') AS kernel_symbol_size,
       json_extract(ks.extdata, '$.kernel_id') AS kernel_id,
       json_extract(ks.extdata, '$.kernel_code_entry_byte_offset') AS kernel_code_entry_byte_offset,
       json_extract(ks.extdata, '$.formatted_kernel_name') AS formatted_kernel_name,
       json_extract(ks.extdata, '$.demangled_kernel_name') AS demangled_kernel_name,
       json_extract(ks.extdata, '$.truncated_kernel_name') AS truncated_kernel_name,
       json_extract(ks.extdata, '$.kernel_address.handle') AS kernel_address
  FROM `rocpd_info_kernel_symbol` ks
  JOIN `rocpd_info_process` p ON p.id = ks.pid AND p.guid = ks.guid;

CREATE VIEW IF NOT EXISTS `processes` AS
SELECT n.id AS nid, n.machine_id, n.system_name, n.hostname, n.release AS system_release,
       n.version AS system_version, p.guid, p.ppid, p.pid, p.init, p.start, p.end, p.fini, p.command
  FROM `rocpd_info_process` p
  JOIN `rocpd_info_node` n ON n.id = p.nid AND n.guid = p.guid;

CREATE VIEW IF NOT EXISTS `threads` AS
SELECT n.id AS nid, n.machine_id, n.system_name, n.hostname, n.release AS system_release,
       n.version AS system_version, p.guid, p.ppid, p.pid, t.tid, t.start, t.end, t.name
  FROM `rocpd_info_thread` t
  JOIN `rocpd_info_process` p ON p.id = t.pid AND p.guid = t.guid
  JOIN `rocpd_info_node` n ON n.id = t.nid AND n.guid = t.guid;

CREATE VIEW IF NOT EXISTS `regions` AS
SELECT r.id, r.guid,
       (SELECT c.string FROM `rocpd_string` c WHERE c.id = e.category_id AND c.guid = e.guid) AS category,
       s.string AS name, r.nid, p.pid, t.tid, r.start, r.end, (r.end - r.start) AS duration,
       r.event_id, e.stack_id, e.parent_stack_id, e.correlation_id AS corr_id,
       e.extdata, e.call_stack, e.line_info
  FROM `rocpd_region` r
  JOIN `rocpd_event` e ON e.id = r.event_id AND e.guid = r.guid
  JOIN `rocpd_string` s ON s.id = r.name_id AND s.guid = r.guid
  JOIN `rocpd_info_process` p ON p.id = r.pid AND p.guid = r.guid
  JOIN `rocpd_info_thread` t ON t.id = r.tid AND t.guid = r.guid;

CREATE VIEW IF NOT EXISTS `region_args` AS
SELECT r.id, r.guid, r.nid, p.pid, a.type, a.name, a.value
  FROM `rocpd_region` r
  JOIN `rocpd_event` e ON e.id = r.event_id AND e.guid = r.guid
  JOIN `rocpd_arg` a ON a.event_id = e.id AND a.guid = r.guid
  JOIN `rocpd_info_process` p ON p.id = r.pid AND p.guid = r.guid;

CREATE VIEW IF NOT EXISTS `samples` AS
SELECT sm.id, sm.guid,
       (SELECT c.string FROM `rocpd_string` c WHERE c.id = e.category_id AND c.guid = e.guid) AS category,
       (SELECT c.string FROM `rocpd_string` c WHERE c.id = tr.name_id AND c.guid = tr.guid) AS name,
       tr.nid, p.pid, th.tid, sm.timestamp, sm.event_id, e.stack_id, e.parent_stack_id,
       e.correlation_id AS corr_id, e.extdata, e.call_stack, e.line_info
  FROM `rocpd_sample` sm
  JOIN `rocpd_track` tr ON tr.id = sm.track_id AND tr.guid = sm.guid
  JOIN `rocpd_event` e ON e.id = sm.event_id AND e.guid = sm.guid
  JOIN `rocpd_info_process` p ON p.id = tr.pid AND p.guid = tr.guid
  JOIN `rocpd_info_thread` th ON th.id = tr.tid AND th.guid = tr.guid;

CREATE VIEW IF NOT EXISTS `sample_regions` AS
SELECT id, guid, category, name, nid, pid, tid, timestamp AS start, timestamp AS end,
       0 AS duration, event_id, stack_id, parent_stack_id, corr_id, extdata, call_stack, line_info
  FROM `samples`;

CREATE VIEW IF NOT EXISTS `regions_and_samples` AS
SELECT * FROM `regions` UNION ALL SELECT * FROM `sample_regions`;

CREATE VIEW IF NOT EXISTS `kernels` AS
SELECT k.id, k.guid, t.tid,
       (SELECT c.string FROM `rocpd_string` c WHERE c.id = e.category_id AND c.guid = e.guid) AS category,
       rn.string AS region, ks.display_name AS name, k.nid, p.pid,
       ag.absolute_index AS agent_abs_index, ag.logical_index AS agent_log_index,
       ag.type_index AS agent_type_index, ag.type AS agent_type,
       ks.code_object_id, k.kernel_id, k.dispatch_id, k.stream_id, k.queue_id,
       q.name AS queue, st.name AS stream, k.start, k.end, (k.end - k.start) AS duration,
       k.grid_size_x AS grid_x, k.grid_size_y AS grid_y, k.grid_size_z AS grid_z,
       k.workgroup_size_x AS workgroup_x, k.workgroup_size_y AS workgroup_y,
       k.workgroup_size_z AS workgroup_z,
       k.group_segment_size AS lds_size, k.private_segment_size AS scratch_size,
       ks.arch_vgpr_count AS vgpr_count, ks.accum_vgpr_count, ks.sgpr_count,
       ks.group_segment_size AS static_lds_size, ks.private_segment_size AS static_scratch_size,
       e.stack_id, e.parent_stack_id, e.correlation_id AS corr_id
  FROM `rocpd_kernel_dispatch` k
  JOIN `rocpd_info_agent` ag ON ag.id = k.agent_id AND ag.guid = k.guid
  JOIN `rocpd_event` e ON e.id = k.event_id AND e.guid = k.guid
  JOIN `rocpd_string` rn ON rn.id = k.region_name_id AND rn.guid = k.guid
  JOIN `rocpd_info_kernel_symbol` ks ON ks.id = k.kernel_id AND ks.guid = k.guid
  LEFT JOIN `rocpd_info_stream` st ON st.id = k.stream_id AND st.guid = k.guid
  LEFT JOIN `rocpd_info_queue` q ON q.id = k.queue_id AND q.guid = k.guid
  JOIN `rocpd_info_process` p ON p.id = q.pid AND p.guid = q.guid
  JOIN `rocpd_info_thread` t ON t.id = k.tid AND t.guid = k.guid;

CREATE VIEW IF NOT EXISTS `pmc_info` AS
SELECT pi.id, pi.guid, pi.nid, p.pid, ag.absolute_index AS agent_abs_index, pi.is_constant,
       pi.is_derived, pi.name, pi.description, pi.block, pi.expression
  FROM `rocpd_info_pmc` pi
  JOIN `rocpd_info_agent` ag ON ag.id = pi.agent_id AND ag.guid = pi.guid
  JOIN `rocpd_info_process` p ON p.id = pi.pid AND p.guid = pi.guid;

CREATE VIEW IF NOT EXISTS `pmc_events` AS
SELECT pe.id, pe.guid, pe.pmc_id, e.id AS event_id,
       (SELECT c.string FROM `rocpd_string` c WHERE c.id = e.category_id AND c.guid = e.guid) AS category,
       (SELECT ks.display_name FROM `rocpd_info_kernel_symbol` ks
         WHERE ks.id = k.kernel_id AND ks.guid = k.guid) AS name,
       k.nid, p.pid, k.dispatch_id, k.start, k.end, (k.end - k.start) AS duration,
       pi.name AS counter_name, pe.value AS counter_value
  FROM `rocpd_pmc_event` pe
  JOIN `rocpd_info_pmc` pi ON pi.id = pe.pmc_id AND pi.guid = pe.guid
  JOIN `rocpd_event` e ON e.id = pe.event_id AND e.guid = pe.guid
  JOIN `rocpd_kernel_dispatch` k ON k.event_id = pe.event_id AND k.guid = pe.guid
  JOIN `rocpd_info_process` p ON p.id = k.pid AND p.guid = k.guid;

CREATE VIEW IF NOT EXISTS `events_args` AS
SELECT e.id AS event_id,
       (SELECT c.string FROM `rocpd_string` c WHERE c.id = e.category_id AND c.guid = e.guid) AS category,
       e.stack_id, e.parent_stack_id, e.correlation_id, a.position AS arg_position,
       a.type AS arg_type, a.name AS arg_name, a.value AS arg_value, e.call_stack, e.line_info,
       a.extdata
  FROM `rocpd_event` e
  JOIN `rocpd_arg` a ON a.event_id = e.id AND a.guid = e.guid;

CREATE VIEW IF NOT EXISTS `stream_args` AS
SELECT a.id AS argument_id, a.event_id, a.position AS arg_position, a.type AS arg_type,
       a.value AS arg_value, json_extract(a.extdata, '$.stream_id') AS stream_id, st.nid, p.pid,
       st.name AS stream_name, st.extdata
  FROM `rocpd_arg` a
  JOIN `rocpd_info_stream` st ON st.id = json_extract(a.extdata, '$.stream_id') AND st.guid = a.guid
  JOIN `rocpd_info_process` p ON p.id = st.pid AND p.guid = st.guid
 WHERE a.name = 'stream';

CREATE VIEW IF NOT EXISTS `memory_copies` AS
SELECT m.id, m.guid,
       (SELECT c.string FROM `rocpd_string` c WHERE c.id = e.category_id AND c.guid = e.guid) AS category,
       m.nid, p.pid, t.tid, m.start, m.end, (m.end - m.start) AS duration,
       s.string AS name, rn.string AS region_name, m.stream_id, m.queue_id,
       st.name AS stream_name, q.name AS queue_name, m.size,
       dst.name AS dst_device, dst.absolute_index AS dst_agent_abs_index,
       dst.logical_index AS dst_agent_log_index, dst.type_index AS dst_agent_type_index,
       dst.type AS dst_agent_type, m.dst_address,
       src.name AS src_device, src.absolute_index AS src_agent_abs_index,
       src.logical_index AS src_agent_log_index, src.type_index AS src_agent_type_index,
       src.type AS src_agent_type, m.src_address,
       e.stack_id, e.parent_stack_id, e.correlation_id AS corr_id
  FROM `rocpd_memory_copy` m
  JOIN `rocpd_string` s ON s.id = m.name_id AND s.guid = m.guid
  LEFT JOIN `rocpd_string` rn ON rn.id = m.region_name_id AND rn.guid = m.guid
  JOIN `rocpd_info_agent` dst ON dst.id = m.dst_agent_id AND dst.guid = m.guid
  JOIN `rocpd_info_agent` src ON src.id = m.src_agent_id AND src.guid = m.guid
  LEFT JOIN `rocpd_info_queue` q ON q.id = m.queue_id AND q.guid = m.guid
  LEFT JOIN `rocpd_info_stream` st ON st.id = m.stream_id AND st.guid = m.guid
  JOIN `rocpd_event` e ON e.id = m.event_id AND e.guid = m.guid
  JOIN `rocpd_info_process` p ON p.id = m.pid AND p.guid = m.guid
  JOIN `rocpd_info_thread` t ON t.id = m.tid AND t.guid = m.guid;

CREATE VIEW IF NOT EXISTS `memory_allocations` AS
SELECT m.id, m.guid,
       (SELECT c.string FROM `rocpd_string` c WHERE c.id = e.category_id AND c.guid = e.guid) AS category,
       m.nid, p.pid, t.tid, m.start, m.end, (m.end - m.start) AS duration, m.type, m.level,
       ag.name AS agent_name, ag.absolute_index AS agent_abs_index,
       ag.logical_index AS agent_log_index, ag.type_index AS agent_type_index,
       ag.type AS agent_type, m.address, m.size, m.queue_id, q.name AS queue_name,
       m.stream_id, st.name AS stream_name, e.stack_id, e.parent_stack_id,
       e.correlation_id AS corr_id
  FROM `rocpd_memory_allocate` m
  LEFT JOIN `rocpd_info_agent` ag ON ag.id = m.agent_id AND ag.guid = m.guid
  LEFT JOIN `rocpd_info_queue` q ON q.id = m.queue_id AND q.guid = m.guid
  LEFT JOIN `rocpd_info_stream` st ON st.id = m.stream_id AND st.guid = m.guid
  JOIN `rocpd_event` e ON e.id = m.event_id AND e.guid = m.guid
  JOIN `rocpd_info_process` p ON p.id = m.pid AND p.guid = m.guid
  JOIN `rocpd_info_thread` t ON t.id = m.tid AND t.guid = m.guid;

CREATE VIEW IF NOT EXISTS `scratch_memory` AS
SELECT m.id, m.guid, m.nid, p.pid, m.type AS operation, ag.name AS agent_name,
       ag.absolute_index AS agent_abs_index, ag.logical_index AS agent_log_index,
       ag.type_index AS agent_type_index, ag.type AS agent_type, m.queue_id, t.tid,
       json_extract(m.extdata, '$.flags') AS alloc_flags, m.start, m.end,
       (m.end - m.start) AS duration, m.size, m.address, e.correlation_id, e.stack_id,
       e.parent_stack_id, e.correlation_id AS corr_id,
       (SELECT c.string FROM `rocpd_string` c WHERE c.id = e.category_id AND c.guid = e.guid) AS category,
       e.extdata AS event_extdata
  FROM `rocpd_memory_allocate` m
  LEFT JOIN `rocpd_info_agent` ag ON ag.id = m.agent_id AND ag.guid = m.guid
  LEFT JOIN `rocpd_info_queue` q ON q.id = m.queue_id AND q.guid = m.guid
  JOIN `rocpd_event` e ON e.id = m.event_id AND e.guid = m.guid
  JOIN `rocpd_info_process` p ON p.id = m.pid AND p.guid = m.guid
  JOIN `rocpd_info_thread` t ON t.id = m.tid AND t.guid = m.guid
 WHERE m.level = 'SCRATCH'
 ORDER BY m.start;

CREATE VIEW IF NOT EXISTS `counters_collection` AS
SELECT MIN(pe.id) AS id, pe.guid, k.dispatch_id, k.kernel_id, e.id AS event_id,
       e.correlation_id, e.stack_id, e.parent_stack_id, p.pid, t.tid, k.agent_id,
       ag.absolute_index AS agent_abs_index, ag.logical_index AS agent_log_index,
       ag.type_index AS agent_type_index, ag.type AS agent_type, k.queue_id,
       k.grid_size_x, k.grid_size_y, k.grid_size_z,
       (k.grid_size_x * k.grid_size_y * k.grid_size_z) AS grid_size,
       ks.display_name AS kernel_name,
       (SELECT c.string FROM `rocpd_string` c WHERE c.id = k.region_name_id AND c.guid = k.guid) AS kernel_region,
       k.workgroup_size_x, k.workgroup_size_y, k.workgroup_size_z,
       (k.workgroup_size_x * k.workgroup_size_y * k.workgroup_size_z) AS workgroup_size,
       k.group_segment_size AS lds_block_size, k.private_segment_size AS scratch_size,
       ks.arch_vgpr_count AS vgpr_count, ks.accum_vgpr_count, ks.sgpr_count,
       pi.name AS counter_name, pi.symbol AS counter_symbol, pi.component, pi.description,
       pi.block, pi.expression, pi.value_type, pi.id AS counter_id, SUM(pe.value) AS value,
       k.start, k.end, pi.is_constant, pi.is_derived, (k.end - k.start) AS duration,
       (SELECT c.string FROM `rocpd_string` c WHERE c.id = e.category_id AND c.guid = e.guid) AS category,
       k.nid, e.extdata, ks.code_object_id
  FROM `rocpd_pmc_event` pe
  JOIN `rocpd_info_pmc` pi ON pi.id = pe.pmc_id AND pi.guid = pe.guid
  JOIN `rocpd_event` e ON e.id = pe.event_id AND e.guid = pe.guid
  JOIN `rocpd_kernel_dispatch` k ON k.event_id = pe.event_id AND k.guid = pe.guid
  JOIN `rocpd_info_agent` ag ON ag.id = k.agent_id AND ag.guid = k.guid
  JOIN `rocpd_info_kernel_symbol` ks ON ks.id = k.kernel_id AND ks.guid = k.guid
  JOIN `rocpd_info_process` p ON p.id = k.pid AND p.guid = k.guid
  JOIN `rocpd_info_thread` t ON t.id = k.tid AND t.guid = k.guid
 GROUP BY pe.guid, k.dispatch_id, pi.name, k.agent_id;
