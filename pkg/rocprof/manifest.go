package rocprof

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
)

// ManifestName is the manifest's file name at the top of the output directory.
const ManifestName = "run.json"

// Manifest describes one rocprof-go run: what ran, how it ended, and every
// file it wrote with its record count.
type Manifest struct {
	Version    string            `json:"version"`
	Command    []string          `json:"command"`
	Options    map[string]string `json:"options"`
	Agents     []ManifestAgent   `json:"agents"`
	ExitStatus int               `json:"exit_status"`
	TimedOut   bool              `json:"timed_out,omitempty"`
	Error      string            `json:"error,omitempty"`
	Passes     []ManifestPass    `json:"passes"`
	Files      []ManifestFile    `json:"files"`
}

// ManifestAgent is one GPU the run used (as known before the app started).
type ManifestAgent struct {
	Index   int    `json:"index"`
	NodeID  int    `json:"node_id"`
	Arch    string `json:"arch"`
	Virtual bool   `json:"virtual,omitempty"`
}

// ManifestPass is one run of the application.
type ManifestPass struct {
	Dir        string   `json:"dir"`
	Counters   []string `json:"counters,omitempty"`
	ExitStatus int      `json:"exit_status"`
	TimedOut   bool     `json:"timed_out,omitempty"`
	DurationS  float64  `json:"duration_s"`
}

// ManifestFile is one output file, its path relative to the manifest.
type ManifestFile struct {
	Path    string `json:"path"`
	Format  string `json:"format"`
	Domain  string `json:"domain"`
	Records int64  `json:"records"`
}

// WriteManifest writes dir/run.json atomically (a reader never sees half a
// manifest, and a concurrent run's manifest is replaced whole).
func WriteManifest(dir string, m *Manifest) error {
	data, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(dir, ".run.json-")
	if err != nil {
		return fmt.Errorf("write manifest: %w", err)
	}
	if _, err := tmp.Write(append(data, '\n')); err != nil {
		tmp.Close()
		os.Remove(tmp.Name())
		return fmt.Errorf("write manifest: %w", err)
	}
	if err := tmp.Close(); err != nil {
		os.Remove(tmp.Name())
		return err
	}
	if err := os.Chmod(tmp.Name(), 0o644); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), filepath.Join(dir, ManifestName))
}

// LoadManifest reads dir/run.json.
func LoadManifest(dir string) (*Manifest, error) {
	data, err := os.ReadFile(filepath.Join(dir, ManifestName))
	if err != nil {
		return nil, err
	}
	var m Manifest
	if err := json.Unmarshal(data, &m); err != nil {
		return nil, fmt.Errorf("%s: %w", filepath.Join(dir, ManifestName), err)
	}
	return &m, nil
}
