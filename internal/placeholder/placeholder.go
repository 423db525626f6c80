package placeholder

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Process is what placeholders may refer to about one profiled process.
type Process struct {
	Pid, Ppid, Pgid, Sid int
	// PSize is the number of children of the parent process (%psize%).
	PSize    int
	Hostname string
	Cwd      string
	Argv     []string
	// LookupEnv reads the process's environment (%env{NAME}%, %rank% ...).
	LookupEnv func(string) (string, bool)
	// Launch is when profiling started (%launch_date%, %launch_time%).
	Launch time.Time
}

// Current describes the calling process, for keys resolved before launch.
func Current() Process {
	host, err := os.Hostname()
	if err != nil {
		host = "UNKNOWN_HOSTNAME"
	}
	cwd, _ := os.Getwd()
	sid, _ := getsid()
	pgid, _ := getpgid()
	return Process{
		Pid: os.Getpid(), Ppid: os.Getppid(), Pgid: pgid, Sid: sid, PSize: 1,
		Hostname: host, Cwd: cwd, Argv: os.Args, LookupEnv: os.LookupEnv, Launch: time.Now(),
	}
}

var (
	envForms = regexp.MustCompile(`%env\{([A-Za-z0-9_]+)\}%|\$env\{([A-Za-z0-9_]+)\}|\$ENV\{([A-Za-z0-9_]+)\}|%q\{([A-Za-z0-9_]+)\}`)
)

// perProcessKeys are the keys whose value differs between the processes of
// one run; a prefix that uses any of them gives each process its own files.
var perProcessKeys = []string{"pid", "ppid", "pgid", "psid", "psize", "p", "argv", "argt", "args", "tag", "nid"}

// IsPerProcess reports whether a template refers to a per-process key,
// directly or through a variable's value (%env{X}% where X=%tag%-trace is
// per process, as rocprofv3 expands it); the variables are read from this
// process's environment, which the app inherits.
func IsPerProcess(template string) bool {
	_, cut := cutAt(template, Process{LookupEnv: os.LookupEnv}, perProcessKeys)
	return cut
}

// rankKeys are the keys an MPI or SLURM launcher sets per rank: the same
// for every process of a run whose rocprof-go runs inside the rank (its
// environment names the rank), per process when the ranks are the app's
// children.
var rankKeys = []string{"rank", "size", "nid", "r", "s"}

// RunPart returns the part of template that every process of one run
// resolves alike, expanded for p (the process that starts the run): the
// template up to its first placeholder whose value may differ between the
// run's processes (pid, arguments, ...; the rank when p's environment names
// none), and whether the template was cut there. A variable's value counts
// as written in its place (-d %env{X}% with X=%tag%-trace is cut at
// %tag%). rocprof-go puts a run's own files (run.json) under it.
func RunPart(template string, p Process) (part string, cut bool) {
	if p.LookupEnv == nil {
		p.LookupEnv = os.LookupEnv
	}
	keys := perProcessKeys
	if LauncherOf(p.LookupEnv).Name == "" {
		keys = append(append([]string{}, perProcessKeys...), rankKeys...)
	}
	return cutAt(template, p, keys)
}

// cutAt expands template for p up to its first placeholder among keys (or
// %arg<N>%), and says whether it stopped there.
func cutAt(template string, p Process, keys []string) (string, bool) {
	if p.LookupEnv == nil {
		p.LookupEnv = os.LookupEnv
	}
	v := values(p)
	v.stop = keys
	var pieces []piece
	var err error
	v.expand(template, 0, piece{}, &pieces, &err)
	s, _ := contain(template, pieces)
	return s, v.stopped
}

// Expand resolves every placeholder in template for process p, as
// rocprofv3's format_path does, with two differences (docs/outputs.md,
// "Placeholders"):
//
//   - a variable's value (%env{NAME}% and its other spellings) is expanded
//     again, as rocprofv3 expands it (its summary test sets
//     ARBITRARY_ENV_VARIABLE=%tag%-trace-inp-yaml and writes to
//     %env{ARBITRARY_ENV_VARIABLE}%); a value that names itself, directly or
//     through others, stops after maxEnvDepth levels (rocprofv3 loops
//     forever; ExpandChecked refuses it);
//   - the value of every other placeholder (an argument of the app, the
//     working directory, the hostname, the launch time) is never expanded
//     again: an app run as `app %cwd%` keeps its own text in -o %args%.
//
// A value never climbs out of the directory the template names: a ".."
// path component made from a variable's value or the launch time's format
// (ROCPROF_TIME_FORMAT, ROCPROF_DATE_FORMAT), or a path the format makes
// absolute, is neutralised here ('.' and a leading '/' become '_');
// ExpandChecked refuses it instead, which the options do before the app
// runs.
func Expand(template string, p Process) string {
	s, _ := expandPieces(template, p)
	return s
}

// ExpandChecked is Expand that refuses, instead of neutralising, a value
// that would climb out of the directory the template names or that refers
// to itself.
func ExpandChecked(template string, p Process) (string, error) {
	return expandPieces(template, p)
}

// maxEnvDepth bounds how deep variables' values are expanded: a value that
// names a variable whose value names another... (A=%env{B}%, B=%env{A}%)
// stops there.
const maxEnvDepth = 8

// EscapeError is a value that would put the output outside the directory
// the template names: a ".." path component, or an absolute path, made
// from it.
type EscapeError struct {
	Template string
	Source   string // "environment variable X", "ROCPROF_TIME_FORMAT"
	Value    string // the value as the source gave it
	Path     string // the expansion, as it would have been
}

func (e *EscapeError) Error() string {
	return fmt.Sprintf("%s=%q makes %q expand to %q, outside the directory it names: a value may add sub-directories but not "+
		"climb out (no \"..\" component, no absolute path); change the value, or write the directory itself in -d",
		e.Source, e.Value, e.Template, e.Path)
}

// CycleError is a variable whose value refers to itself, directly or
// through other variables.
type CycleError struct {
	Template string
	Source   string
}

func (e *CycleError) Error() string {
	return fmt.Sprintf("%q: the value of %s refers back to itself through %%env{...}%% (or variables nest more than %d deep): "+
		"a variable's placeholders are expanded, as rocprofv3 expands them, so it must not name itself; change its value", e.Template, e.Source, maxEnvDepth)
}

// piece is a stretch of an expansion and where its text came from: src
// names the variable or format that chose it, "" for the template's own
// text and the values of the other placeholders.
type piece struct {
	text, src, value string
}

func expandPieces(template string, p Process) (string, error) {
	if p.LookupEnv == nil {
		p.LookupEnv = os.LookupEnv
	}
	v := values(p)
	var pieces []piece
	var err error
	v.expand(template, 0, piece{}, &pieces, &err)
	s, escErr := contain(template, pieces)
	if ce, ok := err.(*CycleError); ok {
		ce.Template = template
	}
	if err == nil && escErr != nil {
		err = escErr
	}
	return s, err
}

// expand appends the pieces of s to out; in is the variable s is the value
// of (its src and value), zero for the template itself.
func (e *expansion) expand(s string, depth int, in piece, out *[]piece, errp *error) {
	lit := 0
	flush := func(i int) {
		if i > lit {
			*out = append(*out, piece{text: s[lit:i], src: in.src, value: in.value})
		}
	}
	for i := 0; i < len(s) && !e.stopped; {
		if name, n := envAt(s[i:]); n > 0 {
			flush(i)
			raw, _ := e.p.LookupEnv(name)
			val := sanitizeEnv(raw)
			src := piece{src: "environment variable " + name, value: raw}
			if depth >= maxEnvDepth {
				if *errp == nil {
					*errp = &CycleError{Source: src.src}
				}
				*out = append(*out, piece{text: val, src: src.src, value: raw})
			} else {
				e.expand(val, depth+1, src, out, errp)
			}
			i += n
			lit = i
			continue
		}
		if key, val, src, n := e.at(s[i:]); n > 0 {
			flush(i)
			if e.stop != nil && (key == "arg" || slices.Contains(e.stop, key)) {
				e.stopped = true
				return
			}
			pc := piece{text: val, src: in.src, value: in.value}
			if src != "" {
				pc.src, pc.value = src, e.formats[src]
			}
			*out = append(*out, pc)
			i += n
			lit = i
			continue
		}
		i++
	}
	if !e.stopped {
		flush(len(s))
	}
}

// contain joins the pieces, neutralising (and reporting) a ".." component
// a value made, or an absolute path a format made.
func contain(template string, pieces []piece) (string, error) {
	var b strings.Builder
	var src []int // per byte: index of its piece when a value chose it, else -1
	for i, pc := range pieces {
		b.WriteString(pc.text)
		for range len(pc.text) {
			if pc.src != "" {
				src = append(src, i)
			} else {
				src = append(src, -1)
			}
		}
	}
	out := []byte(b.String())
	var bad = -1
	if len(out) > 0 && out[0] == '/' && src[0] >= 0 && pieces[src[0]].src != "" && !strings.HasPrefix(pieces[src[0]].src, "environment") {
		bad = src[0]
		out[0] = '_'
	}
	for start := 0; start <= len(out); {
		end := start
		for end < len(out) && out[end] != '/' {
			end++
		}
		if end-start == 2 && out[start] == '.' && out[start+1] == '.' {
			for k := start; k < end; k++ {
				if src[k] >= 0 {
					if bad < 0 {
						bad = src[k]
					}
					out[start], out[start+1] = '_', '_'
					break
				}
			}
		}
		start = end + 1
	}
	if bad < 0 {
		return string(out), nil
	}
	return string(out), &EscapeError{Template: template, Source: pieces[bad].src, Value: pieces[bad].value, Path: b.String()}
}

// expansion is one process's placeholder values.
type expansion struct {
	p    Process
	keys []struct{ key, val, src string }
	one  map[byte]string // %h %p %j %r %s
	// formats are the values of the variables that chose a value's text
	// (ROCPROF_TIME_FORMAT, ROCPROF_DATE_FORMAT) by name.
	formats map[string]string
	// stop, when set, names the keys (and %arg<N>%) at which expand stops
	// (cutAt); stopped says it did.
	stop    []string
	stopped bool
}

var (
	envFormAt = regexp.MustCompile(`^(?:` + envForms.String() + `)`)
	argNAt    = regexp.MustCompile(`^[%{]arg([0-9]+)[%}]`)
	dashesAt  = regexp.MustCompile(`^[-_]*`)
)

func values(p Process) *expansion {
	args := appArgs(p.Argv)
	l := LauncherOf(p.LookupEnv)
	rank, size := l.Rank, l.Size
	if l.Name == "" {
		rank, size = "0", "1"
	}
	job := envOr(p.LookupEnv, "SLURM_JOB_ID", "0")
	nid := strconv.Itoa(p.Pid)
	if l.Name != "" {
		nid = rank
	}
	launch := p.Launch
	if launch.IsZero() {
		launch = time.Now()
	}
	dateFmt := envOr(p.LookupEnv, dateFormatEnv, "%F")
	timeFmt := envOr(p.LookupEnv, timeFormatEnv, "%F_%H.%M")
	tag := ""
	if len(p.Argv) > 0 {
		tag = filepath.Base(p.Argv[0])
	}
	// Values the process or its environment chose become one path
	// component each: a hostname of "../../.." (anyone may set one in a
	// UTS namespace) or a job id with a slash must not lead outside -d.
	host := cleanArg(p.Hostname)
	job, rank, size, nid, tag = cleanArg(job), cleanArg(rank), cleanArg(size), cleanArg(nid), cleanArg(tag)
	return &expansion{p: p, keys: []struct{ key, val, src string }{
		{"hostname", host, ""},
		{"pid", strconv.Itoa(p.Pid), ""},
		{"ppid", strconv.Itoa(p.Ppid), ""},
		{"pgid", strconv.Itoa(p.Pgid), ""},
		{"psid", strconv.Itoa(p.Sid), ""},
		{"psize", strconv.Itoa(p.PSize), ""},
		{"job", job, ""},
		{"rank", rank, ""},
		{"size", size, ""},
		{"nid", nid, ""},
		{"cwd", p.Cwd, ""},
		{"launch_date", strftime(dateFmt, launch), dateFormatEnv},
		{"launch_time", strftime(timeFmt, launch), timeFormatEnv},
		{"argv", joinArgs(append([]string{p.argv0()}, args...)), ""},
		{"argt", joinArgs(append([]string{tag}, args...)), ""},
		{"args", joinArgs(args), ""},
		{"tag", tag, ""},
	}, one: map[byte]string{'h': host, 'p': strconv.Itoa(p.Pid), 'j': job, 'r': rank, 's': size},
		formats: map[string]string{dateFormatEnv: dateFmt, timeFormatEnv: timeFmt}}
}

// The variables rocprofv3 reads %launch_date% and %launch_time%'s formats
// from.
const (
	dateFormatEnv = "ROCPROF_DATE_FORMAT"
	timeFormatEnv = "ROCPROF_TIME_FORMAT"
)

// envAt returns the variable named by the %env{NAME}% (or $env{NAME},
// $ENV{NAME}, %q{NAME}) s starts with and its length, or 0.
func envAt(s string) (string, int) {
	if len(s) == 0 || s[0] != '%' && s[0] != '$' {
		return "", 0
	}
	m := envFormAt.FindStringSubmatch(s)
	if m == nil {
		return "", 0
	}
	for _, name := range m[1:] {
		if name != "" {
			return name, len(m[0])
		}
	}
	return "", 0
}

// at returns the key of the (non-variable) placeholder s starts with ("arg"
// for %arg<N>%), its value, the format variable that chose it ("" for the
// others) and its length, or 0 when s starts with none.
func (e *expansion) at(s string) (key, val, src string, n int) {
	switch s[0] {
	case '%', '{':
	default:
		return "", "", "", 0
	}
	if m := argNAt.FindStringSubmatch(s); m != nil {
		n, _ := strconv.Atoi(m[1])
		if n < len(e.p.Argv) {
			return "arg", cleanArg(e.p.Argv[n]), "", len(m[0])
		}
		// An argument the app was not given: gone, with the separators
		// after it.
		return "arg", "", "", len(m[0]) + len(dashesAt.FindString(s[len(m[0]):]))
	}
	end := byte('%')
	if s[0] == '{' {
		end = '}'
	}
	for _, k := range e.keys {
		if len(s) >= len(k.key)+2 && s[1:1+len(k.key)] == k.key && s[1+len(k.key)] == end {
			return k.key, k.val, k.src, len(k.key) + 2
		}
	}
	if s[0] == '%' && len(s) > 1 {
		if v, ok := e.one[s[1]]; ok {
			return string(s[1]), v, "", 2
		}
	}
	return "", "", "", 0
}

func (p Process) argv0() string {
	if len(p.Argv) == 0 {
		return ""
	}
	return p.Argv[0]
}

// appArgs drops a leading "--" argument, as rocprofv3 does.
func appArgs(argv []string) []string {
	if len(argv) < 2 {
		return nil
	}
	args := argv[1:]
	if args[0] == "--" {
		args = args[1:]
	}
	return args
}

func cleanArg(a string) string {
	a = strings.ReplaceAll(a, "/", "_")
	return strings.TrimLeft(a, "._")
}

func joinArgs(args []string) string {
	out := make([]string, 0, len(args))
	for _, a := range args {
		if c := cleanArg(a); c != "" {
			out = append(out, c)
		}
	}
	return strings.Join(out, "_")
}

func sanitizeEnv(v string) string {
	v = strings.TrimLeft(v, " \t/")
	return strings.Map(func(r rune) rune {
		if r == ' ' || r == '\t' || r == '/' {
			return '_'
		}
		return r
	}, v)
}

func envOr(lookup func(string) (string, bool), name, def string) string {
	if v, ok := lookup(name); ok && v != "" {
		return v
	}
	return def
}

// strftime supports the conversions rocprofv3's default date and time formats
// use, plus the common ones users put in ROCPROF_*_FORMAT.
func strftime(f string, t time.Time) string {
	var b strings.Builder
	for i := 0; i < len(f); i++ {
		if f[i] != '%' || i+1 == len(f) {
			b.WriteByte(f[i])
			continue
		}
		i++
		switch f[i] {
		case 'F':
			b.WriteString(t.Format("2006-01-02"))
		case 'Y':
			b.WriteString(t.Format("2006"))
		case 'm':
			b.WriteString(t.Format("01"))
		case 'd':
			b.WriteString(t.Format("02"))
		case 'H':
			b.WriteString(t.Format("15"))
		case 'M':
			b.WriteString(t.Format("04"))
		case 'S':
			b.WriteString(t.Format("05"))
		case 'T':
			b.WriteString(t.Format("15:04:05"))
		case 's':
			b.WriteString(strconv.FormatInt(t.Unix(), 10))
		case '%':
			b.WriteByte('%')
		default:
			b.WriteByte('%')
			b.WriteByte(f[i])
		}
	}
	return b.String()
}
