package launch

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/sys/unix"

	"github.com/rocprof-go/rocprof-go/internal/placeholder"
	"github.com/rocprof-go/rocprof-go/internal/tracing"
)

// Reading rescues back. An output directory may be shared: every user who
// can write it can put anything there, named like a rescue. So what
// convert and summary read back from it is found through descriptors
// (ReadDir of a directory held open, never a glob built from a path, which
// a '[' or '\' in the path breaks), follows no symbolic link, is this
// user's own (another user's is passed over with a warning), is bounded in
// size and type (a manifest is a regular file of at most 1 MiB, a spool a
// regular file), and its spools are read through the held descriptor of
// the rescue directory (/proc/self/fd/N/...), so a directory renamed or
// replaced meanwhile is not what is read. Which rescues are this user's
// is said by the name too: each user's rescues are in their own hidden
// directory, .rocprof-go-unconverted-<uid> (UnconvertedDirOf); the
// .rocprof-go-unconverted of older versions is read when it is this
// user's.

// UnconvertedDirOf is the hidden directory of an output directory holding
// the rescues (and, under a launcher, the run directories) of user uid.
// When another user holds that name, a rescue goes to a new directory
// named after it plus "-" and random characters.
func UnconvertedDirOf(uid int) string { return UnconvertedDir + "-" + strconv.Itoa(uid) }

// ownUnconvertedDir is this user's UnconvertedDirOf.
func ownUnconvertedDir() string { return UnconvertedDirOf(os.Geteuid()) }

// isOwnUnconvertedName reports whether name is a hidden rescue directory
// name of this user: the per-user name, one made beside it when another
// user held it, or the name of older versions.
func isOwnUnconvertedName(name string) bool {
	own := ownUnconvertedDir()
	return name == UnconvertedDir || name == own || strings.HasPrefix(name, own+"-")
}

// isUnconvertedName reports whether name is a hidden rescue directory name
// of any user.
func isUnconvertedName(name string) bool {
	return name == UnconvertedDir || strings.HasPrefix(name, UnconvertedDir+"-")
}

// Unconverted is one rescued run found in an output directory.
type Unconverted struct {
	// Dir is the rescue's (or orphaned run directory's) path, to show;
	// Top the hidden directory holding it; OutputDir the directory
	// holding that (the output directory the run wrote to).
	Dir, Top, OutputDir string
	Manifest            UnconvertedManifest
	// Spools are the whole spools; Partial those a SIGKILL cut short while
	// they were copied (their first chunks read back; the rest is lost).
	// Both are paths through the descriptor a Recovery holds: valid until
	// it is closed.
	Spools, Partial []string
	// Orphan: no rescue but a run directory whose rocprof-go was killed
	// while its app ran (its spools were on the output directory's file
	// system): no manifest, so no exit status; Manifest is what the
	// spools' headers say (host, the app's pid, its launcher's rank) and
	// PID is rocprof-go's from the run directory's owner file (else the
	// app's). Kept: the run kept them when its outputs failed.
	Orphan, Kept bool
	// AppRunning: the orphan's app still runs on this host (its spools
	// still grow): what is converted now is not all of its records.
	AppRunning bool
}

// Label names the rescued run: "rank N (host, pid P)" or "host, pid P",
// printable whatever its manifest says.
func (u *Unconverted) Label() string {
	m := &u.Manifest
	if m.Rank != "" {
		return fmt.Sprintf("rank %s (%s, pid %d)", Printable(m.Rank), Printable(m.Host), m.PID)
	}
	return fmt.Sprintf("%s, pid %d", Printable(m.Host), m.PID)
}

// Complete reports whether every spool of the run is there whole.
func (u *Unconverted) Complete() bool {
	return u.Manifest.State == RescueComplete && len(u.Partial) == 0
}

// Recovery is what FindUnconverted found under one input. Close it once
// its spools have been read.
type Recovery struct {
	Found []Unconverted
	// Warnings say what was passed over and why (another user's
	// directory, a symbolic link), printable.
	Warnings []string
	// Unread are this user's rescues that could not be read (a damaged
	// manifest), each with why, printable: their records are not in
	// Found, and are not converted.
	Unread []string
	held   []*os.File
	// runs are the run directories seen, listed as orphans once every
	// rescue is known (a rescue may be in another hidden directory than
	// its run directory).
	runs []runsIn
}

// runsIn are the run directories names in the hidden directory dir.
type runsIn struct {
	dir               *os.File
	via, disp, outDir string
	names             []string
}

// Close releases the directories the spools' paths go through.
func (r *Recovery) Close() {
	if r == nil {
		return
	}
	for _, f := range r.held {
		f.Close()
	}
	r.held = nil
}

func (r *Recovery) warnf(format string, args ...any) {
	r.Warnings = append(r.Warnings, Printable(fmt.Sprintf(format, args...)))
}

// Printable is s with every control character (an escape sequence a
// planted manifest or spool could send to the terminal) and every invalid
// byte shown as a Go escape (\x1b, \u009b).
func Printable(s string) string {
	clean := true
	for _, r := range s {
		if r == utf8.RuneError || unicode.IsControl(r) {
			clean = false
			break
		}
	}
	if clean {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n <= 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case unicode.IsControl(r):
			q := strconv.QuoteRune(r)
			b.WriteString(q[1 : len(q)-1])
		default:
			b.WriteString(s[i : i+n])
		}
		i += n
	}
	return b.String()
}

// rescueManifestLimit bounds a manifest read (anyone who can write the
// output directory could plant a huge one).
const rescueManifestLimit = 1 << 20

// openDirAt opens dir's sub-directory name without following a link.
func openDirAt(dir *os.File, disp, name string) (*os.File, error) {
	fd, err := unix.Openat(int(dir.Fd()), name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: filepath.Join(disp, name), Err: err}
	}
	return os.NewFile(uintptr(fd), filepath.Join(disp, name)), nil
}

// lstatAt is dir's entry name, not following a link.
func lstatAt(dir *os.File, name string) (unix.Stat_t, error) {
	var st unix.Stat_t
	err := unix.Fstatat(int(dir.Fd()), name, &st, unix.AT_SYMLINK_NOFOLLOW)
	return st, err
}

// namesOf lists an open directory's entries, sorted.
func namesOf(dir *os.File) []string {
	if _, err := dir.Seek(0, io.SeekStart); err != nil {
		return nil
	}
	names, _ := dir.Readdirnames(-1)
	sort.Strings(names)
	return names
}

func fileType(st *unix.Stat_t) string {
	switch st.Mode & unix.S_IFMT {
	case unix.S_IFLNK:
		return "a symbolic link"
	case unix.S_IFDIR:
		return "a directory"
	case unix.S_IFREG:
		return "a regular file"
	}
	return "a special file"
}

// fdPath is a path naming the open directory dir itself (its entry in
// /proc/self/fd, resolved by the kernel to what is held whatever became
// of its path); where /proc does not show it, its path.
func fdPath(dir *os.File) string {
	p := "/proc/self/fd/" + strconv.Itoa(int(dir.Fd()))
	var via, held unix.Stat_t
	if unix.Stat(p, &via) == nil && unix.Fstat(int(dir.Fd()), &held) == nil && via.Dev == held.Dev && via.Ino == held.Ino {
		return p
	}
	return dir.Name()
}

// readRegularAt reads dir's file name, at most limit bytes, with pread: a
// regular file of this user's, not through a link, not blocking on a FIFO.
func readRegularAt(dir *os.File, disp, name string, limit int64) ([]byte, error) {
	p := filepath.Join(disp, name)
	fd, err := unix.Openat(int(dir.Fd()), name, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	if err != nil {
		if errors.Is(err, unix.ELOOP) {
			return nil, fmt.Errorf("%s is a symbolic link: not followed", p)
		}
		return nil, &os.PathError{Op: "open", Path: p, Err: err}
	}
	f := os.NewFile(uintptr(fd), p)
	defer f.Close()
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return nil, &os.PathError{Op: "stat", Path: p, Err: err}
	}
	switch {
	case st.Mode&unix.S_IFMT != unix.S_IFREG:
		return nil, fmt.Errorf("%s is %s, not a regular file", p, fileType(&st))
	case int(st.Uid) != os.Geteuid():
		return nil, fmt.Errorf("%s belongs to uid %d, not to you (uid %d)", p, st.Uid, os.Geteuid())
	case st.Size > limit:
		return nil, fmt.Errorf("%s holds %d bytes, more than the %d a rocprof-go file of its kind has", p, st.Size, limit)
	}
	buf := make([]byte, st.Size)
	n, err := f.ReadAt(buf, 0)
	if err != nil && !errors.Is(err, io.EOF) {
		return nil, &os.PathError{Op: "read", Path: p, Err: err}
	}
	return buf[:n], nil
}

// FindUnconverted finds the rescued runs under path: an output directory
// (this user's hidden rescue directories in it), one such directory, or
// one rescue's directory; for the first two also the orphaned run
// directories there (after the rescues). ok is false when path holds no
// hidden rescue directory of any user, nor is one, nor is a rescue. The
// Recovery is to be closed once the spools are read.
func FindUnconverted(path string) (rec *Recovery, ok bool, err error) {
	rec = &Recovery{}
	dir, err := os.OpenFile(path, os.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return rec, false, nil
	}
	disp := filepath.Clean(path)
	base := filepath.Base(disp)
	if st, err := lstatAt(dir, UnconvertedManifestName); err == nil && st.Mode&unix.S_IFMT == unix.S_IFREG {
		// One rescue's directory.
		top := filepath.Dir(disp)
		if !rec.mine(dir, disp) {
			dir.Close()
			return rec, true, nil
		}
		rec.held = append(rec.held, dir)
		rec.rescue(dir, fdPath(dir), disp, top, filepath.Dir(top))
		return rec, true, nil
	}
	if isUnconvertedName(base) {
		rec.top(dir, disp, filepath.Dir(disp))
		rec.orphans()
		return rec, true, nil
	}
	defer dir.Close()
	for _, name := range namesOf(dir) {
		if !isUnconvertedName(name) {
			continue
		}
		ok = true
		p := filepath.Join(disp, name)
		st, err := lstatAt(dir, name)
		if err != nil {
			continue
		}
		switch {
		case st.Mode&unix.S_IFMT == unix.S_IFLNK:
			rec.warnf("%s is a symbolic link: not followed (rescues are never read through one)", p)
			continue
		case st.Mode&unix.S_IFMT != unix.S_IFDIR:
			rec.warnf("%s is %s, not a directory of rescues: not read", p, fileType(&st))
			continue
		case int(st.Uid) != os.Geteuid():
			rec.warnf("%s belongs to uid %d, not to you (uid %d): not read (rocprof-go reads only your own rescues; its owner converts them)", p, st.Uid, os.Geteuid())
			continue
		case !isOwnUnconvertedName(name):
			continue // yours, but named for another user: not a rocprof-go rescue directory of yours
		}
		top, err := openDirAt(dir, disp, name)
		if err != nil {
			rec.warnf("%v: not read", err)
			continue
		}
		rec.top(top, p, disp)
	}
	// The orphans before the verdict: a hidden directory holding only an
	// orphaned run directory holds a rescue.
	rec.orphans()
	// An empty hidden directory of this user's (a run killed before it
	// put anything there) is no rescue.
	return rec, ok && len(rec.Found)+len(rec.Warnings)+len(rec.Unread) > 0, nil
}

// mine checks that the open directory dir (at disp) is this user's and
// writable by no one else; it warns when not.
func (rec *Recovery) mine(dir *os.File, disp string) bool {
	var st unix.Stat_t
	if err := unix.Fstat(int(dir.Fd()), &st); err != nil {
		rec.warnf("%s: %v: not read", disp, err)
		return false
	}
	if int(st.Uid) != os.Geteuid() {
		rec.warnf("%s belongs to uid %d, not to you (uid %d): not read (rocprof-go reads only your own rescues; its owner converts them)", disp, st.Uid, os.Geteuid())
		return false
	}
	if st.Mode&0o022 != 0 {
		rec.warnf("%s is writable by others (mode %04o): not read (anyone could have put what is in it there; chmod go-w it if its content is yours)", disp, st.Mode&0o7777)
		return false
	}
	return true
}

// top reads one hidden rescue directory: its rescues, then its orphaned
// run directories. It takes dir over.
func (rec *Recovery) top(dir *os.File, disp, outDir string) {
	if !rec.mine(dir, disp) {
		dir.Close()
		return
	}
	rec.held = append(rec.held, dir)
	via := fdPath(dir)
	var runs []string
	for _, name := range namesOf(dir) {
		st, err := lstatAt(dir, name)
		if err != nil {
			continue
		}
		p := filepath.Join(disp, name)
		switch {
		case st.Mode&unix.S_IFMT == unix.S_IFLNK:
			rec.warnf("%s is a symbolic link: not followed (rescues are never read through one)", p)
			continue
		case st.Mode&unix.S_IFMT != unix.S_IFDIR:
			continue
		case int(st.Uid) != os.Geteuid():
			rec.warnf("%s belongs to uid %d, not to you (uid %d): not read", p, st.Uid, os.Geteuid())
			continue
		}
		if strings.HasPrefix(name, runDirPrefix) {
			runs = append(runs, name)
			continue
		}
		entry, err := openDirAt(dir, disp, name)
		if err != nil {
			continue
		}
		if _, err := lstatAt(entry, UnconvertedManifestName); err != nil {
			entry.Close() // created, killed before its manifest: nothing in it yet
			continue
		}
		rec.rescue(entry, via+"/"+name, p, disp, outDir)
		entry.Close()
	}
	rec.runs = append(rec.runs, runsIn{dir, via, disp, outDir, runs})
}

// rescue reads one rescue's directory entry (read through via) into Found,
// or says in Unread why it cannot.
func (rec *Recovery) rescue(entry *os.File, via, disp, top, outDir string) {
	u := Unconverted{Dir: disp, Top: top, OutputDir: outDir}
	data, err := readRegularAt(entry, disp, UnconvertedManifestName, rescueManifestLimit)
	if err == nil {
		if err = json.Unmarshal(data, &u.Manifest); err != nil {
			err = fmt.Errorf("%s: not a rescue manifest: %v", filepath.Join(disp, UnconvertedManifestName), err)
		}
	}
	if err != nil {
		rec.Unread = append(rec.Unread, Printable(err.Error()))
		return
	}
	eachPassEntry(entry, disp, func(pd *os.File, pass, s string) {
		if !strings.HasSuffix(s, ".spool") {
			return
		}
		whole := strings.HasPrefix(s, "rpg-")
		if !whole && !strings.HasPrefix(s, ".partial-rpg-") {
			return
		}
		st, err := lstatAt(pd, s)
		if err != nil || st.Mode&unix.S_IFMT != unix.S_IFREG || int(st.Uid) != os.Geteuid() {
			if err == nil {
				rec.warnf("%s is %s of uid %d: not read", filepath.Join(disp, pass, s), fileType(&st), st.Uid)
			}
			return
		}
		p := via + "/" + pass + "/" + s
		if whole {
			u.Spools = append(u.Spools, p)
		} else {
			u.Partial = append(u.Partial, p)
		}
	})
	rec.Found = append(rec.Found, u)
}

// eachPassEntry calls f with each entry of the pass directories (pass_N,
// this user's own directories, not links) of dir, a run directory or a
// rescue's, shown as disp; pd is the entry's open pass directory.
func eachPassEntry(dir *os.File, disp string, f func(pd *os.File, pass, name string)) {
	for _, pass := range namesOf(dir) {
		if !strings.HasPrefix(pass, "pass_") {
			continue
		}
		if st, err := lstatAt(dir, pass); err != nil || st.Mode&unix.S_IFMT != unix.S_IFDIR || int(st.Uid) != os.Geteuid() {
			continue
		}
		pd, err := openDirAt(dir, disp, pass)
		if err != nil {
			continue
		}
		for _, name := range namesOf(pd) {
			f(pd, pass, name)
		}
		pd.Close()
	}
}

// orphans lists, after the rescues, the run directories seen whose
// rocprof-go is gone without removing them: SIGKILLed while its app ran
// (before any rescue: the app's own spools are the only copy), or kept
// when its outputs failed. A run directory a rescue already holds (its
// manifest's run_dir) is not listed again: its spools are the rescue's.
func (rec *Recovery) orphans() {
	inRescue := map[string]bool{}
	for _, u := range rec.Found {
		if !u.Orphan && isUnconvertedName(filepath.Base(filepath.Dir(u.Manifest.RunDir))) {
			inRescue[filepath.Base(u.Manifest.RunDir)] = true
		}
	}
	for _, r := range rec.runs {
		rec.orphansIn(r, inRescue)
	}
	rec.runs = nil
}

// orphansIn lists the orphans among the run directories of one hidden
// directory.
func (rec *Recovery) orphansIn(r runsIn, inRescue map[string]bool) {
	dir, via, disp, outDir := r.dir, r.via, r.disp, r.outDir
	host, _ := os.Hostname()
	for _, name := range r.names {
		if inRescue[name] {
			continue
		}
		rd, err := openDirAt(dir, disp, name)
		if err != nil {
			continue
		}
		d := filepath.Join(disp, name)
		u := Unconverted{Dir: d, Top: disp, OutputDir: outDir, Orphan: true}
		if st, err := lstatAt(rd, runKeptFile); err == nil && st.Mode&unix.S_IFMT == unix.S_IFREG {
			u.Kept = true
		}
		var owner runOwner
		if b, err := readRegularAt(rd, d, runOwnerFile, 64); err == nil {
			owner = parseRunOwner(string(b))
		}
		eachPassEntry(rd, d, func(pd *os.File, pass, s string) {
			if !strings.HasPrefix(s, "rpg-") || !strings.HasSuffix(s, ".spool") {
				return
			}
			if st, err := lstatAt(pd, s); err == nil && st.Mode&unix.S_IFMT == unix.S_IFREG && int(st.Uid) == os.Geteuid() {
				u.Spools = append(u.Spools, via+"/"+name+"/"+pass+"/"+s)
			}
		})
		rd.Close()
		if len(u.Spools) == 0 {
			continue
		}
		m := &u.Manifest
		m.State, m.RunDir, m.PID = RescueComplete, d, owner.pid
		m.Reason = "its rocprof-go was killed before its app ended: no exit status known"
		if u.Kept {
			m.Reason = "kept by its rocprof-go when its outputs could not be written"
		}
		// The first readable spool's header names the run; every spool's
		// process is one that may still run.
		var pids []int
		for _, s := range u.Spools {
			r, err := tracing.Open(s)
			if err != nil {
				continue
			}
			p := r.Process()
			r.Close()
			if len(pids) == 0 {
				l := placeholder.LauncherOf(p.Getenv)
				m.Host, m.AppPID = p.Hostname, int(p.PID)
				m.Rank, m.Size, m.RankVar, m.Launcher, m.Job = l.Rank, l.Size, l.RankVar, l.Name, l.Job
			}
			pids = append(pids, int(p.PID))
		}
		if m.Host == host && !u.Kept && owner.runs() {
			continue // its rocprof-go still runs: not an orphan (yet)
		}
		if m.PID == 0 {
			m.PID = m.AppPID
		}
		for _, pid := range pids {
			if m.Host == host && pid > 0 && !exited(pid) {
				u.AppRunning = true
			}
		}
		rec.Found = append(rec.Found, u)
	}
}

// runOwner is a run directory's owner file: the pid of the rocprof-go
// that made it and that process's start time (clock ticks after boot,
// /proc/PID/stat's field 22), which tells it from a later process given
// the same pid. Older versions wrote the pid alone.
type runOwner struct {
	pid   int
	start uint64 // 0: not recorded
}

func parseRunOwner(s string) runOwner {
	f := strings.Fields(s)
	var o runOwner
	if len(f) > 0 {
		o.pid, _ = strconv.Atoi(f[0])
	}
	if len(f) > 1 {
		o.start, _ = strconv.ParseUint(f[1], 10, 64)
	}
	return o
}

// thisRunOwner is this process as the owner of a run directory.
func thisRunOwner() string {
	s := strconv.Itoa(os.Getpid())
	if st, ok := procStartTime(os.Getpid()); ok {
		s += " " + strconv.FormatUint(st, 10)
	}
	return s + "\n"
}

// runs reports whether the owner may still run on this host: its pid is
// a live process started when the owner was (or, for an owner file of an
// older version, a process named rocprof-go). An unknown owner (no pid)
// is taken as running: not ours to judge.
func (o runOwner) runs() bool {
	if o.pid <= 0 {
		return true
	}
	if unix.Kill(o.pid, 0) == unix.ESRCH {
		return false
	}
	start, ok := procStartTime(o.pid)
	if !ok {
		return !exited(o.pid) // no /proc: the pid alone
	}
	if o.start != 0 {
		return start == o.start && !exited(o.pid)
	}
	b, err := os.ReadFile("/proc/" + strconv.Itoa(o.pid) + "/comm")
	return err == nil && strings.TrimSpace(string(b)) == "rocprof-go" && !exited(o.pid)
}

// procStartTime is a process's start time in clock ticks after boot
// (/proc/PID/stat's field 22).
func procStartTime(pid int) (uint64, bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, false
	}
	i := strings.LastIndexByte(string(b), ')')
	if i < 0 {
		return 0, false
	}
	// After the command: field 3 (state) onward; the start time is 22.
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 20 {
		return 0, false
	}
	v, err := strconv.ParseUint(f[19], 10, 64)
	return v, err == nil
}
