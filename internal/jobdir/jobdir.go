package jobdir

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"golang.org/x/sys/unix"

	"github.com/rocprof-go/rocprof-go/internal/securedir"
)

// Name is the hidden directory, in an output directory, that held the
// manifests of the jobs whose ranks wrote there, in older versions: one
// name for every user (another user who made it first kept everyone
// else's ranks out). Each user's is now NameOf(uid); the old name is still
// read when it is the user's own directory.
const Name = ".rocprof-go-job"

// NameOf is the hidden job directory of the user uid.
func NameOf(uid int) string { return Name + "-" + strconv.Itoa(uid) }

// OwnName is this user's NameOf.
func OwnName() string { return NameOf(os.Geteuid()) }

// isOwnName reports whether name is a job directory name of this user's:
// the per-user name, one made beside it when that name was taken, or the
// name of older versions.
func isOwnName(name string) bool {
	own := OwnName()
	return name == Name || name == own || strings.HasPrefix(name, own+"-")
}

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

// rankFile is the file name of rank's manifest. A rank that is not a plain
// number (a launcher's odd value) keeps only the characters a file name
// can hold.
func rankFile(rank string) string {
	clean := strings.Map(func(r rune) rune {
		if r == '/' || r == 0 {
			return '_'
		}
		return r
	}, rank)
	return "rank-" + clean + ".json"
}

// Path is where rank's manifest of job goes in the output directory dir
// when this user's job directory name is free (Write says where it went
// otherwise).
func Path(dir, job, rank string) string {
	return filepath.Join(dir, OwnName(), Key(job), rankFile(rank))
}

// Write writes rank's manifest of job (data) into the output directory dir
// and returns its path. Everything is created through descriptors of the
// verified output directory (mkdirat, O_EXCL|O_NOFOLLOW; securedir): this
// user's job directory NameOf(uid), private, or, when another user holds
// that name (or it is a link, or no directory), one of this user's beside
// it (the name, "-" and random characters; one already there is reused),
// said on warn. The manifest is written under a temporary name and renamed:
// a reader never sees half of one.
func Write(dir, job, rank string, data []byte, warn io.Writer) (string, error) {
	od, err := securedir.MkdirOutput(dir, 0o755)
	if err != nil {
		return "", err
	}
	defer od.Close()
	top, err := openTop(od, warn)
	if err != nil {
		return "", err
	}
	defer top.Close()
	jd, err := top.MkdirPrivate(Key(job))
	if err != nil {
		return "", err
	}
	defer jd.Close()
	name := rankFile(rank)
	for range 100 {
		tmp := "." + name + "." + strconv.FormatUint(rand.Uint64(), 36) + ".tmp"
		f, err := jd.Create(tmp, 0o644)
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		if err != nil {
			return "", err
		}
		_, err = f.Write(data)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err == nil {
			err = jd.Rename(tmp, name)
		}
		if err != nil {
			_ = jd.Remove(tmp)
			return "", err
		}
		return filepath.Join(jd.Path(), name), nil
	}
	return "", &os.PathError{Op: "create", Path: filepath.Join(jd.Path(), "."+name+".*.tmp"), Err: fs.ErrExist}
}

// openTop opens (creating it) this user's job directory in od, or one of
// this user's beside it when the name is taken (see Write).
func openTop(od *securedir.Dir, warn io.Writer) (*securedir.Dir, error) {
	name := OwnName()
	top, err := od.MkdirPrivate(name)
	var ue *securedir.UntrustedError
	if !errors.As(err, &ue) {
		return top, err
	}
	// One made beside it by an earlier rank of this user's.
	var alt *securedir.Dir
	if names, lerr := od.Names(); lerr == nil {
		for _, n := range names {
			if strings.HasPrefix(n, name+"-") {
				if d, oerr := od.OpenPrivate(n); oerr == nil {
					alt = d
					break
				}
			}
		}
	}
	if alt == nil {
		var aerr error
		if alt, aerr = od.MkdirTemp(name + "-"); aerr != nil {
			return nil, err
		}
	}
	if warn != nil {
		fmt.Fprintf(warn, "rocprof-go: warning: %v: this rank's job manifest goes to %s instead\n", printable(err.Error()), alt.Path())
	}
	return alt, nil
}

// printable is s with its control characters (a planted name's escape
// sequences) shown as Go escapes.
func printable(s string) string {
	for _, r := range s {
		if r == utf8.RuneError || unicode.IsControl(r) {
			q := strconv.Quote(s)
			return q[1 : len(q)-1]
		}
	}
	return s
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
	// Warnings say which job directories of this user's name were passed
	// over (a link, another user's directory at the name: the writers
	// went elsewhere, and said so); Others which other users' job
	// directories are there (not read: their owners read them).
	Warnings, Others []string
}

// The manifests are read back from an output directory that other users
// may be able to write (a project's shared directory): each is found by
// descriptor (the names read from the open job directory, never a glob
// built from a path that may hold `[` or `\`), opened without following a
// link or blocking on a FIFO, and believed only when it is a regular file
// of this user's (or root's) with one link, of at most MaxBytes. Anything
// else is refused with a warning, never read. The job directories read are
// this user's own (NameOf, those made beside it, the old Name) and no
// other: another user's is never read, a link never followed.

// Of returns the manifests of job's ranks in dir (none: no Manifests).
func Of(dir, job string) Found {
	f, jobs := readAll(dir, Key(job))
	if j, ok := jobs[Key(job)]; ok {
		f.Manifests, f.Refused = j.Manifests, append(f.Refused, j.Refused...)
	}
	return f
}

// Newest returns the manifests of the job in dir whose newest manifest
// was written last (a directory reused by several jobs holds each one's);
// no Manifests when dir holds none.
func Newest(dir string) Found {
	f, jobs := readAll(dir, "")
	keys := make([]string, 0, len(jobs))
	for k := range jobs {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var best *job
	var refused []string
	for _, k := range keys {
		j := jobs[k]
		refused = append(refused, j.Refused...)
		if len(j.Manifests) > 0 && (best == nil || j.newest.After(best.newest)) {
			best = j
		}
	}
	// The newest job's refusals are its own (a file refused there claimed
	// one of its ranks); another job's directory refused whole is said
	// only when no job is believed at all.
	if best == nil {
		f.Refused = append(f.Refused, refused...)
		return f
	}
	f.Manifests, f.Refused = best.Manifests, append(f.Refused, best.Refused...)
	return f
}

// job is one job's manifests gathered from this user's job directories.
type job struct {
	Found
	newest time.Time
}

// readAll reads this user's job directories in dir: every job's (only
// key's when key is not ""), each rank's manifest once (the newest when
// two directories hold one: a job's ranks may have written into two).
func readAll(dir, key string) (Found, map[string]*job) {
	var f Found
	jobs := map[string]*job{}
	d, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return f, jobs
	}
	defer unix.Close(d)
	names, err := readNames(d)
	if err != nil {
		f.Refused = append(f.Refused, fmt.Sprintf("%s: %v", dir, err))
		return f, jobs
	}
	sort.Strings(names)
	me := uint32(os.Geteuid())
	for _, n := range names {
		if n != Name && !strings.HasPrefix(n, Name+"-") {
			continue
		}
		p := filepath.Join(dir, n)
		var st unix.Stat_t
		if unix.Fstatat(d, n, &st, unix.AT_SYMLINK_NOFOLLOW) != nil {
			continue
		}
		own := isOwnName(n)
		switch {
		case !own && n != Name, n == Name && st.Uid != me:
			// Another user's (the old shared name included): their jobs.
			f.Others = append(f.Others, fmt.Sprintf("%s (uid %d)", p, st.Uid))
			continue
		case st.Mode&unix.S_IFMT == unix.S_IFLNK:
			f.Warnings = append(f.Warnings, fmt.Sprintf("%s is a symbolic link: not followed (a job's manifests are never read through one)", p))
			continue
		case st.Mode&unix.S_IFMT != unix.S_IFDIR:
			f.Warnings = append(f.Warnings, fmt.Sprintf("%s is no directory: not read", p))
			continue
		case st.Uid != me:
			f.Warnings = append(f.Warnings, fmt.Sprintf("%s belongs to uid %d, not to you (uid %d): not read (your ranks wrote their manifests beside it)", p, st.Uid, me))
			continue
		}
		top, err := unix.Openat(d, n, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		if err != nil {
			f.Refused = append(f.Refused, refusedDir(dir, n, err)...)
			continue
		}
		if fstatOwner(top) != me {
			unix.Close(top)
			continue // replaced since it was looked at
		}
		keys := []string{key}
		if key == "" {
			keys, err = readNames(top)
			if err != nil {
				f.Refused = append(f.Refused, fmt.Sprintf("%s: %v", p, err))
			}
		}
		for _, k := range keys {
			found, newest := readJob(top, p, k)
			if len(found.Manifests) == 0 && len(found.Refused) == 0 {
				continue
			}
			j := jobs[k]
			if j == nil {
				j = &job{}
				jobs[k] = j
			}
			j.merge(found)
			if newest.After(j.newest) {
				j.newest = newest
			}
		}
		unix.Close(top)
	}
	for _, j := range jobs {
		sort.SliceStable(j.Manifests, func(a, b int) bool {
			return filepath.Base(j.Manifests[a].Path) < filepath.Base(j.Manifests[b].Path)
		})
	}
	return f, jobs
}

// merge adds found to j, a rank's manifest once (the newest).
func (j *job) merge(found Found) {
	j.Refused = append(j.Refused, found.Refused...)
	for _, m := range found.Manifests {
		dup := false
		for i, o := range j.Manifests {
			if filepath.Base(o.Path) == filepath.Base(m.Path) {
				dup = true
				if m.ModTime.After(o.ModTime) {
					j.Manifests[i] = m
				}
			}
		}
		if !dup {
			j.Manifests = append(j.Manifests, m)
		}
	}
}

func fstatOwner(fd int) uint32 {
	var st unix.Stat_t
	if unix.Fstat(fd, &st) != nil {
		return ^uint32(0)
	}
	return st.Uid
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
