package jobdir

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// Name is the hidden directory, in an output directory, that holds the
// manifests of the jobs whose ranks wrote there.
const Name = ".rocprof-go-job"

// Key names a job's directory: a hash of the launcher's job name (which
// may hold any character), so that two jobs writing into one output
// directory keep their manifests apart.
func Key(job string) string {
	sum := sha256.Sum256([]byte(job))
	return hex.EncodeToString(sum[:8])
}

// Path is rank's manifest of job in the output directory dir. A rank that
// is not a plain number (a launcher's odd value) keeps only the characters
// a file name can hold.
func Path(dir, job, rank string) string {
	clean := strings.Map(func(r rune) rune {
		if r == '/' || r == 0 {
			return '_'
		}
		return r
	}, rank)
	return filepath.Join(dir, Name, Key(job), "rank-"+clean+".json")
}

// Of returns the manifests of job's ranks in dir (nil: none).
func Of(dir, job string) []string {
	files, _ := filepath.Glob(filepath.Join(dir, Name, Key(job), "rank-*.json"))
	var kept []string
	for _, f := range files {
		if st, err := os.Lstat(f); err == nil && st.Mode().IsRegular() {
			kept = append(kept, f)
		}
	}
	return kept
}

// Newest returns the manifests of the job in dir whose newest manifest
// was written last (a directory reused by several jobs holds each one's),
// or nil when dir holds none.
func Newest(dir string) []string {
	jobs, err := os.ReadDir(filepath.Join(dir, Name))
	if err != nil {
		return nil
	}
	var best []string
	var bestTime time.Time
	for _, j := range jobs {
		if !j.IsDir() {
			continue
		}
		files, _ := filepath.Glob(filepath.Join(dir, Name, j.Name(), "rank-*.json"))
		var newest time.Time
		var kept []string
		for _, f := range files {
			st, err := os.Lstat(f)
			if err != nil || !st.Mode().IsRegular() {
				continue
			}
			kept = append(kept, f)
			if st.ModTime().After(newest) {
				newest = st.ModTime()
			}
		}
		if len(kept) > 0 && (best == nil || newest.After(bestTime)) {
			best, bestTime = kept, newest
		}
	}
	return best
}
