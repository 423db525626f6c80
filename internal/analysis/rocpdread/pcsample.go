package rocpdread

import (
	"database/sql"
	"strconv"
	"strings"
)

// PC samples (issue 34): rocprof-go stores each as a rocpd_sample row on
// a "PC samples" track (extdata {"agent_id"}) with an event of category
// PC_SAMPLING_HOST_TRAP or PC_SAMPLING_STOCHASTIC whose extdata is the
// sample (the layout internal/output/rocpd's appendPCSampleExt writes). They are not API
// instants: Regions and RegionTimings leave them out.

// PCSampleCategories are the event categories of PC samples.
var PCSampleCategories = []string{"PC_SAMPLING_HOST_TRAP", "PC_SAMPLING_STOCHASTIC"}

// PCSample is one stored PC sample. Scans reuse one value: copy what you
// keep.
type PCSample struct {
	ID            int64
	PID, TID      int64 // the track's process and thread row ids
	AgentID       int64 // rocpd_info_agent id (the track's)
	Timestamp     int64
	Category      string // PC_SAMPLING_HOST_TRAP or PC_SAMPLING_STOCHASTIC
	CorrelationID int64  // the dispatch's internal correlation id (stack_id)
	ExternalCorr  int64
	PCSampleExt
}

// PCSampleExt is a PC sample's event extdata.
type PCSampleExt struct {
	DispatchID   uint64 `json:"dispatch_id"`
	CodeObjectID uint64 `json:"code_object_id"` // rocpd_info_code_object id, 0: none
	Offset       uint64 `json:"code_object_offset"`
	PC           uint64 `json:"pc"`
	ExecMask     uint64 `json:"exec_mask"`
	Workgroup    struct {
		X uint32 `json:"x"`
		Y uint32 `json:"y"`
		Z uint32 `json:"z"`
	} `json:"wrkgrp_id"`
	WaveInGroup uint32 `json:"wave_in_grp"`
	Chiplet     uint32 `json:"chiplet"`
	HWID        uint32 `json:"hw_id"`
	Instruction string `json:"instruction"`
	Comment     string `json:"instruction_comment"`
	// Stochastic samples only: short names (VALU, WAITCNT) and the raw
	// snapshot registers.
	WaveIssued    *bool     `json:"wave_issued,omitempty"`
	InstType      string    `json:"inst_type,omitempty"`
	StallReason   string    `json:"stall_reason,omitempty"`
	WaveCount     uint32    `json:"wave_count,omitempty"`
	DualIssueVALU bool      `json:"dual_issue_valu,omitempty"`
	Snapshot      [3]uint32 `json:"snapshot"`
}

// pcCategoryIDs returns the string ids of an image's PC-sample
// categories as an SQL list ("-1" when it has none).
func pcCategoryIDs(in *Info) string {
	ids := []string{"-1"}
	for id, s := range in.Strings {
		for _, c := range PCSampleCategories {
			if s == c {
				ids = append(ids, strconv.FormatInt(id, 10))
			}
		}
	}
	return strings.Join(ids, ",")
}

// PCSamples streams the stored PC samples, image by image, in the order
// they were written (each process's in the order ROCR delivered them).
func (db *DB) PCSamples(fn func(*Info, *PCSample) error) error {
	var s PCSample
	return db.scanImages(func(in *Info) error {
		im := in.Image
		cats := pcCategoryIDs(in)
		if cats == "-1" {
			return nil
		}
		type pcTrack struct{ pid, tid, agent int64 }
		tracks := map[int64]pcTrack{}
		err := db.each(`SELECT id, COALESCE(pid, 0), COALESCE(tid, 0),
  CASE WHEN json_valid(extdata) THEN COALESCE(json_extract(extdata, '$.agent_id'), 0) ELSE 0 END
FROM `+quote(im.Table("rocpd_track")), func(r *sql.Rows) error {
			var id int64
			var t pcTrack
			if err := r.Scan(&id, &t.pid, &t.tid, &t.agent); err != nil {
				return err
			}
			tracks[id] = t
			return nil
		})
		if err != nil {
			return err
		}
		var track, cat int64
		var ext sql.RawBytes
		texts := map[string]string{}
		return db.each(`SELECT r.id, r.track_id, r.timestamp, e.category_id, COALESCE(e.stack_id, 0),
  COALESCE(e.correlation_id, 0), e.extdata
FROM `+quote(im.Table("rocpd_sample"))+` r JOIN `+quote(im.Table("rocpd_event"))+` e ON e.id = r.event_id
WHERE e.category_id IN (`+cats+`) ORDER BY r.id`, func(r *sql.Rows) error {
			if err := r.Scan(&s.ID, &track, &s.Timestamp, &cat, &s.CorrelationID, &s.ExternalCorr, &ext); err != nil {
				return err
			}
			t := tracks[track]
			s.PID, s.TID, s.AgentID = t.pid, t.tid, t.agent
			s.Category = in.String(cat)
			if err := parsePCSampleExt(ext, &s.PCSampleExt, texts); err != nil {
				return err
			}
			return fn(in, &s)
		})
	})
}
