package outputtest

import (
	"encoding/json"
	"io"

	"github.com/rocprof-go/rocprof-go/internal/output/model"
)

// JSONDoc is the part of rocprofv3's results.json the tests read.
type JSONDoc struct {
	Tool []struct {
		Metadata struct {
			PID     int      `json:"pid"`
			Command []string `json:"command"`
		} `json:"metadata"`
		Agents []struct {
			ID struct {
				Handle uint64 `json:"handle"`
			} `json:"id"`
			Type   int    `json:"type"`
			NodeID uint64 `json:"node_id"`
			Name   string `json:"name"`
		} `json:"agents"`
		Strings struct {
			BufferRecords []struct {
				Kind       string   `json:"kind"`
				Operations []string `json:"operations"`
			} `json:"buffer_records"`
			MarkerAPI []struct {
				Key   uint64 `json:"key"`
				Value string `json:"value"`
			} `json:"marker_api"`
		} `json:"strings"`
		KernelSymbols []struct {
			KernelID            uint64 `json:"kernel_id"`
			FormattedKernelName string `json:"formatted_kernel_name"`
		} `json:"kernel_symbols"`
		Summary []struct {
			Domain string `json:"domain"`
			Stats  struct {
				Count uint64 `json:"count"`
			} `json:"stats"`
		} `json:"summary"`
		CallbackRecords struct {
			CounterCollection []struct {
				DispatchData struct {
					DispatchInfo struct {
						DispatchID uint64 `json:"dispatch_id"`
					} `json:"dispatch_info"`
				} `json:"dispatch_data"`
				Records []struct {
					Value float64 `json:"value"`
				} `json:"records"`
			} `json:"counter_collection"`
		} `json:"callback_records"`
		BufferRecords map[string][]struct {
			Kind          int    `json:"kind"`
			Operation     int    `json:"operation"`
			Start         uint64 `json:"start_timestamp"`
			End           uint64 `json:"end_timestamp"`
			CorrelationID struct {
				Internal uint64 `json:"internal"`
			} `json:"correlation_id"`
		} `json:"buffer_records"`
	} `json:"rocprofiler-sdk-tool"`
}

// JSONCounts counts records per domain in one process element.
func JSONCounts(doc *JSONDoc, proc int) [model.NumDomains]uint64 {
	var c [model.NumDomains]uint64
	p := doc.Tool[proc]
	for d := model.Domain(0); d < model.NumDomains; d++ {
		c[d] = uint64(len(p.BufferRecords[model.Domains[d].JSON]))
	}
	c[model.DomCounter] = 0
	for _, g := range p.CallbackRecords.CounterCollection {
		c[model.DomCounter] += uint64(len(g.Records))
	}
	return c
}

// JSONUnmarshal decodes one JSON document from r.
func JSONUnmarshal(r io.Reader, v any) error { return json.NewDecoder(r).Decode(v) }
