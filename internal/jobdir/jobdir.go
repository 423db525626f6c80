package jobdir

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// Name is the hidden directory, in an output directory, that holds the
// manifests of the jobs whose ranks wrote there.
const Name = ".rocprof-go-job"

// MaxBytes bounds a rank's manifest: a real one holds a few thousand file
// entries; a bigger file is not a manifest and is not read into memory.
const MaxBytes = 64 << 20

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

// Manifest is one rank's manifest file as read.
type Manifest struct {
	Path    string
	Data    []byte
	ModTime time.Time
}

// Found is what a job's directory held: the manifests read, and the files
// named like one that were refused, each with the reason (a warning for
// the user: a rank may be missing because of it).
type Found struct {
	Manifests []Manifest
	Refused   []string
}

// The manifests are read back from an output directory that other users
// may be able to write (a project's shared directory): each is found by
// descriptor (the names read from the open job directory, never a glob
// built from a path that may hold `[` or `\`), opened without following a
// link or blocking on a FIFO, and believed only when it is a regular file
// of this user's (or root's) with one link, of at most MaxBytes. Anything
// else is refused with a warning, never read.

// Of returns the manifests of job's ranks in dir (none: no Manifests).
func Of(dir, job string) Found {
	top, err := openDir(dir, Name)
	if err != nil {
		return Found{Refused: refusedDir(dir, Name, err)}
	}
	defer unix.Close(top)
	f, _ := readJob(top, filepath.Join(dir, Name), Key(job))
	return f
}

// Newest returns the manifests of the job in dir whose newest manifest
// was written last (a directory reused by several jobs holds each one's);
// no Manifests when dir holds none.
func Newest(dir string) Found {
	top, err := openDir(dir, Name)
	if err != nil {
		return Found{Refused: refusedDir(dir, Name, err)}
	}
	defer unix.Close(top)
	names, err := readNames(top)
	if err != nil {
		return Found{Refused: []string{fmt.Sprintf("%s: %v", filepath.Join(dir, Name), err)}}
	}
	sort.Strings(names)
	var best Found
	var bestTime time.Time
	var refused []string
	for _, n := range names {
		f, newest := readJob(top, filepath.Join(dir, Name), n)
		refused = append(refused, f.Refused...)
		if len(f.Manifests) > 0 && (best.Manifests == nil || newest.After(bestTime)) {
			best, bestTime = f, newest
		}
	}
	// The newest job's refusals are its own (a file refused there claimed
	// one of its ranks); another job's directory refused whole is said
	// only when no job is believed at all.
	if best.Manifests == nil {
		best.Refused = refused
	}
	return best
}

// openDir opens dir's entry name as a directory, following no link at it
// (dir itself is the user's path, followed as given).
func openDir(dir, name string) (int, error) {
	d, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return -1, err
	}
	defer unix.Close(d)
	return unix.Openat(d, name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
}

// refusedDir says why dir/name was not read, unless it does not exist.
func refusedDir(dir, name string, err error) []string {
	if errors.Is(err, unix.ENOENT) {
		return nil
	}
	p := filepath.Join(dir, name)
	if errors.Is(err, unix.ELOOP) || errors.Is(err, unix.ENOTDIR) {
		return []string{fmt.Sprintf("%s is not a directory (a symbolic link or a file): its manifests are not read; remove it", p)}
	}
	return []string{fmt.Sprintf("%s: %v", p, err)}
}

func readNames(fd int) ([]string, error) {
	d, err := unix.Dup(fd)
	if err != nil {
		return nil, err
	}
	f := os.NewFile(uintptr(d), "")
	defer f.Close()
	return f.Readdirnames(-1)
}

// readJob reads the rank manifests in top's job directory key; newest is
// the latest modification time among those read.
func readJob(top int, topPath, key string) (f Found, newest time.Time) {
	jobPath := filepath.Join(topPath, key)
	jd, err := unix.Openat(top, key, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		if errors.Is(err, unix.ENOENT) {
			return f, newest
		}
		var st unix.Stat_t
		if unix.Fstatat(top, key, &st, unix.AT_SYMLINK_NOFOLLOW) == nil && st.Mode&unix.S_IFMT == unix.S_IFREG {
			return f, newest // a stray file beside the jobs' directories
		}
		f.Refused = refusedDir(topPath, key, err)
		return f, newest
	}
	defer unix.Close(jd)
	names, err := readNames(jd)
	if err != nil {
		f.Refused = append(f.Refused, fmt.Sprintf("%s: %v", jobPath, err))
		return f, newest
	}
	sort.Strings(names)
	for _, n := range names {
		if ok, _ := filepath.Match("rank-*.json", n); !ok {
			continue
		}
		m, why := readManifest(jd, filepath.Join(jobPath, n), n)
		if why != "" {
			f.Refused = append(f.Refused, why)
			continue
		}
		f.Manifests = append(f.Manifests, m)
		if m.ModTime.After(newest) {
			newest = m.ModTime
		}
	}
	return f, newest
}

// readManifest reads dir's file name (at path), or says why not.
func readManifest(dir int, path, name string) (Manifest, string) {
	fd, err := unix.Openat(dir, name, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	if err != nil {
		if errors.Is(err, unix.ELOOP) {
			return Manifest{}, fmt.Sprintf("%s is a symbolic link, not a rank's manifest: not followed", path)
		}
		return Manifest{}, fmt.Sprintf("%s: %v", path, err)
	}
	file := os.NewFile(uintptr(fd), path)
	defer file.Close()
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return Manifest{}, fmt.Sprintf("%s: %v", path, err)
	}
	me := uint32(os.Geteuid())
	switch {
	case st.Mode&unix.S_IFMT != unix.S_IFREG:
		return Manifest{}, fmt.Sprintf("%s is not a regular file: not a rank's manifest, not read", path)
	case st.Uid != me && st.Uid != 0:
		return Manifest{}, fmt.Sprintf("%s belongs to uid %d, not to you (uid %d): another user's file is not believed as your job's rank; "+
			"remove it, or read the job as the user who ran it", path, st.Uid, me)
	case st.Nlink != 1:
		return Manifest{}, fmt.Sprintf("%s has %d links: a rank's manifest has one (a hard link planted to another file); not read", path, st.Nlink)
	case st.Size > MaxBytes:
		return Manifest{}, fmt.Sprintf("%s is %d bytes, more than a rank's manifest holds (%d): not read", path, st.Size, MaxBytes)
	}
	data, err := io.ReadAll(io.LimitReader(file, MaxBytes+1))
	if err != nil {
		return Manifest{}, fmt.Sprintf("%s: %v", path, err)
	}
	if len(data) > MaxBytes {
		return Manifest{}, fmt.Sprintf("%s grew past %d bytes while read: not read", path, MaxBytes)
	}
	return Manifest{Path: path, Data: data, ModTime: time.Unix(st.Mtim.Unix())}, ""
}

// Missing returns the ranks 0..size-1 that are not among ranks, given the
// job's size as its launcher said it (the ranks' manifests record it).
// Nothing is missing when size is no number or no rank is one (a
// launcher's odd values: the ranks cannot be counted).
func Missing(size string, ranks []string) []int {
	n, err := strconv.Atoi(size)
	if err != nil || n <= 0 || n > 1<<24 {
		return nil
	}
	seen := make([]bool, n)
	numeric := false
	for _, r := range ranks {
		if i, err := strconv.Atoi(r); err == nil && i >= 0 && i < n {
			seen[i], numeric = true, true
		}
	}
	if !numeric && len(ranks) > 0 {
		return nil
	}
	var out []int
	for i, ok := range seen {
		if !ok {
			out = append(out, i)
		}
	}
	return out
}

// Ranges writes ranks (ascending) briefly: "1, 3-7, 9".
func Ranges(ranks []int) string {
	var parts []string
	for i := 0; i < len(ranks); {
		j := i
		for j+1 < len(ranks) && ranks[j+1] == ranks[j]+1 {
			j++
		}
		if j == i {
			parts = append(parts, strconv.Itoa(ranks[i]))
		} else {
			parts = append(parts, strconv.Itoa(ranks[i])+"-"+strconv.Itoa(ranks[j]))
		}
		i = j + 1
	}
	return strings.Join(parts, ", ")
}
