package rocpdtest

import "strings"

// schemaSQL creates one process image's tables. SUFFIX is the table suffix
// ("_" + uuid with underscores), GUID the dashed uuid every row defaults to.
// The DDL is written from rocpd-schema.md §2, not copied from rocprofv3.
const schemaSQL = `
CREATE TABLE "rocpd_metadataSUFFIX" (id INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT,
  tag TEXT NOT NULL, value TEXT NOT NULL);
CREATE TABLE rocpd_stringSUFFIX (id INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT,
  guid TEXT DEFAULT 'GUID' NOT NULL, string TEXT NOT NULL UNIQUE ON CONFLICT ABORT);
CREATE TABLE rocpd_info_nodeSUFFIX (id INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT,
  guid TEXT DEFAULT 'GUID' NOT NULL, hash BIGINT NOT NULL UNIQUE, machine_id TEXT NOT NULL UNIQUE,
  system_name TEXT, hostname TEXT, release TEXT, version TEXT, hardware_name TEXT, domain_name TEXT);
CREATE TABLE rocpd_info_processSUFFIX (id INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT,
  guid TEXT DEFAULT 'GUID' NOT NULL, nid INTEGER NOT NULL, ppid INTEGER, pid INTEGER NOT NULL,
  init BIGINT, fini BIGINT, start BIGINT, end BIGINT, command TEXT,
  environment JSONB DEFAULT '{}' NOT NULL, extdata JSONB DEFAULT '{}' NOT NULL,
  FOREIGN KEY (nid) REFERENCES rocpd_info_nodeSUFFIX (id) ON UPDATE CASCADE);
CREATE TABLE rocpd_info_threadSUFFIX (id INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT,
  guid TEXT DEFAULT 'GUID' NOT NULL, nid INTEGER NOT NULL, ppid INTEGER, pid INTEGER NOT NULL,
  tid INTEGER NOT NULL, name TEXT, start BIGINT, end BIGINT, extdata JSONB DEFAULT '{}' NOT NULL);
CREATE TABLE rocpd_info_agentSUFFIX (id INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT,
  guid TEXT DEFAULT 'GUID' NOT NULL, nid INTEGER NOT NULL, pid INTEGER NOT NULL,
  type TEXT CHECK (type IN ('CPU', 'GPU')), absolute_index INTEGER, logical_index INTEGER,
  type_index INTEGER, uuid INTEGER, name TEXT, model_name TEXT, vendor_name TEXT,
  product_name TEXT, user_name TEXT, extdata JSONB DEFAULT '{}' NOT NULL);
CREATE TABLE rocpd_info_queueSUFFIX (id INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT,
  guid TEXT DEFAULT 'GUID' NOT NULL, nid INTEGER NOT NULL, pid INTEGER NOT NULL, name TEXT,
  extdata JSONB DEFAULT '{}' NOT NULL);
CREATE TABLE rocpd_info_streamSUFFIX (id INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT,
  guid TEXT DEFAULT 'GUID' NOT NULL, nid INTEGER NOT NULL, pid INTEGER NOT NULL, name TEXT,
  extdata JSONB DEFAULT '{}' NOT NULL);
CREATE TABLE rocpd_info_pmcSUFFIX (id INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT,
  guid TEXT DEFAULT 'GUID' NOT NULL, nid INTEGER NOT NULL, pid INTEGER NOT NULL, agent_id INTEGER,
  target_arch TEXT CHECK (target_arch IN ('CPU', 'GPU')), event_code INT, instance_id INTEGER,
  name TEXT NOT NULL, symbol TEXT NOT NULL, description TEXT, long_description TEXT DEFAULT '',
  component TEXT, units TEXT DEFAULT '', value_type TEXT CHECK (value_type IN ('ABS', 'ACCUM', 'RELATIVE')),
  block TEXT, expression TEXT, is_constant INTEGER, is_derived INTEGER,
  extdata JSONB DEFAULT '{}' NOT NULL);
CREATE TABLE rocpd_info_code_objectSUFFIX (id INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT,
  guid TEXT DEFAULT 'GUID' NOT NULL, nid INTEGER NOT NULL, pid INTEGER NOT NULL, agent_id INTEGER,
  uri TEXT, load_base BIGINT, load_size BIGINT, load_delta BIGINT,
  storage_type TEXT CHECK (storage_type IN ('FILE', 'MEMORY')), extdata JSONB DEFAULT '{}' NOT NULL);
CREATE TABLE rocpd_info_kernel_symbolSUFFIX (id INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT,
  guid TEXT DEFAULT 'GUID' NOT NULL, nid INTEGER NOT NULL, pid INTEGER NOT NULL,
  code_object_id INTEGER NOT NULL, kernel_name TEXT, display_name TEXT, kernel_object INTEGER,
  kernarg_segment_size INTEGER, kernarg_segment_alignment INTEGER, group_segment_size INTEGER,
  private_segment_size INTEGER, sgpr_count INTEGER, arch_vgpr_count INTEGER,
  accum_vgpr_count INTEGER, extdata JSONB DEFAULT '{}' NOT NULL);
CREATE TABLE rocpd_trackSUFFIX (id INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT,
  guid TEXT DEFAULT 'GUID' NOT NULL, nid INTEGER NOT NULL, pid INTEGER, tid INTEGER,
  name_id INTEGER, extdata JSONB DEFAULT '{}' NOT NULL);
CREATE TABLE rocpd_eventSUFFIX (id INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT,
  guid TEXT DEFAULT 'GUID' NOT NULL, category_id INTEGER, stack_id INTEGER,
  parent_stack_id INTEGER, correlation_id INTEGER, call_stack JSONB DEFAULT '{}' NOT NULL,
  line_info JSONB DEFAULT '{}' NOT NULL, extdata JSONB DEFAULT '{}' NOT NULL);
CREATE TABLE rocpd_argSUFFIX (id INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT,
  guid TEXT DEFAULT 'GUID' NOT NULL, event_id INTEGER NOT NULL, position INTEGER NOT NULL,
  type TEXT NOT NULL, name TEXT NOT NULL, value TEXT, extdata JSONB DEFAULT '{}' NOT NULL);
CREATE TABLE rocpd_pmc_eventSUFFIX (id INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT,
  guid TEXT DEFAULT 'GUID' NOT NULL, event_id INTEGER, pmc_id INTEGER NOT NULL,
  value REAL DEFAULT 0.0, extdata JSONB DEFAULT '{}');
CREATE TABLE rocpd_regionSUFFIX (id INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT,
  guid TEXT DEFAULT 'GUID' NOT NULL, nid INTEGER NOT NULL, pid INTEGER NOT NULL,
  tid INTEGER NOT NULL, start BIGINT NOT NULL, end BIGINT NOT NULL, name_id INTEGER NOT NULL,
  event_id INTEGER, extdata JSONB DEFAULT '{}' NOT NULL);
CREATE TABLE rocpd_sampleSUFFIX (id INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT,
  guid TEXT DEFAULT 'GUID' NOT NULL, track_id INTEGER NOT NULL, timestamp BIGINT NOT NULL,
  event_id INTEGER, extdata JSONB DEFAULT '{}' NOT NULL);
CREATE TABLE rocpd_kernel_dispatchSUFFIX (id INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT,
  guid TEXT DEFAULT 'GUID' NOT NULL, nid INTEGER NOT NULL, pid INTEGER NOT NULL, tid INTEGER,
  agent_id INTEGER NOT NULL, kernel_id INTEGER NOT NULL, dispatch_id INTEGER NOT NULL,
  queue_id INTEGER NOT NULL, stream_id INTEGER NOT NULL, start BIGINT NOT NULL, end BIGINT NOT NULL,
  private_segment_size INTEGER, group_segment_size INTEGER,
  workgroup_size_x INTEGER NOT NULL, workgroup_size_y INTEGER NOT NULL, workgroup_size_z INTEGER NOT NULL,
  grid_size_x INTEGER NOT NULL, grid_size_y INTEGER NOT NULL, grid_size_z INTEGER NOT NULL,
  region_name_id INTEGER, event_id INTEGER, extdata JSONB DEFAULT '{}' NOT NULL);
CREATE TABLE rocpd_memory_copySUFFIX (id INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT,
  guid TEXT DEFAULT 'GUID' NOT NULL, nid INTEGER NOT NULL, pid INTEGER NOT NULL, tid INTEGER,
  start BIGINT NOT NULL, end BIGINT NOT NULL, name_id INTEGER NOT NULL, dst_agent_id INTEGER,
  dst_address INTEGER, src_agent_id INTEGER, src_address INTEGER, size INTEGER NOT NULL,
  queue_id INTEGER, stream_id INTEGER, region_name_id INTEGER, event_id INTEGER,
  extdata JSONB DEFAULT '{}' NOT NULL);
CREATE TABLE rocpd_memory_allocateSUFFIX (id INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT,
  guid TEXT DEFAULT 'GUID' NOT NULL, nid INTEGER NOT NULL, pid INTEGER NOT NULL, tid INTEGER,
  agent_id INTEGER, type TEXT CHECK (type IN ('ALLOC', 'FREE', 'REALLOC', 'RECLAIM')),
  level TEXT CHECK (level IN ('REAL', 'VIRTUAL', 'SCRATCH')), start BIGINT NOT NULL,
  end BIGINT NOT NULL, address INTEGER, size INTEGER NOT NULL, queue_id INTEGER,
  stream_id INTEGER, event_id INTEGER, extdata JSONB DEFAULT '{}' NOT NULL);
INSERT INTO "rocpd_metadataSUFFIX" (tag, value) VALUES
  ('schema_version', '3'), ('uuid', 'SUFFIX'), ('guid', 'GUID');
`

// BaseTables are the schema's table base names, in creation order.
var BaseTables = []string{
	"rocpd_metadata", "rocpd_string", "rocpd_info_node", "rocpd_info_process",
	"rocpd_info_thread", "rocpd_info_agent", "rocpd_info_queue", "rocpd_info_stream",
	"rocpd_info_pmc", "rocpd_info_code_object", "rocpd_info_kernel_symbol", "rocpd_track",
	"rocpd_event", "rocpd_arg", "rocpd_pmc_event", "rocpd_region", "rocpd_sample",
	"rocpd_kernel_dispatch", "rocpd_memory_copy", "rocpd_memory_allocate",
}

// Suffix returns the table suffix of a dashed uuid.
func Suffix(guid string) string {
	if guid == "" {
		return ""
	}
	return "_" + strings.ReplaceAll(guid, "-", "_")
}

func schemaFor(guid string) string {
	return strings.NewReplacer("SUFFIX", Suffix(guid), "GUID", guid).Replace(schemaSQL)
}

// viewsFor creates the un-suffixed pass-through views of one image.
func viewsFor(guid string) string {
	var b strings.Builder
	for _, t := range BaseTables {
		b.WriteString("CREATE VIEW " + t + " AS SELECT * FROM " + t + Suffix(guid) + ";\n")
	}
	return b.String()
}
