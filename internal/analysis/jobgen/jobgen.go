package jobgen

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"sync"

	"github.com/rocprof-go/rocprof-go/internal/output/model"
	"github.com/rocprof-go/rocprof-go/internal/output/parquet"
	"github.com/rocprof-go/rocprof-go/internal/output/rocpd"
	"github.com/rocprof-go/rocprof-go/internal/tracing"
	"github.com/rocprof-go/rocprof-go/internal/tracing/spooltest"
)

// Job is a synthetic job's shape.
type Job struct {
	Ranks        int // ranks, 0..Ranks-1
	Dispatches   int // kernel dispatches per rank
	Kernels      int // kernel names; dispatch i runs name i%Kernels in shape (i/Kernels)%2
	RanksPerHost int // rank r runs on host node<r/RanksPerHost> (0: 8)
	SlowRank     int // this rank's dispatches of kernel 0 take SlowNs longer (-1: none)
	SlowNs       uint64
	Parquet      bool // the hive-partitioned Parquet files
	ROCpd        bool // DIR/<rank>_results.db
}

// Host is rank r's host name.
func (j Job) Host(r int) string {
	n := j.RanksPerHost
	if n <= 0 {
		n = 8
	}
	return "node" + strconv.Itoa(r/n)
}

// PID is rank r's process id.
func (j Job) PID(r int) int32 { return int32(10000 + r) }

// KernelName is kernel k's name as the outputs write it.
func KernelName(k int) string { return fmt.Sprintf("kernel_%03d", k) }

// Shape is dispatch i's kernel and launch shape: grid {4096<<s, 1, 1},
// workgroup {64<<s, 1, 1}.
func (j Job) Shape(i int) (kernel, shape int) { return i % j.Kernels, (i / j.Kernels) % 2 }

// Grid and Workgroup are shape s's.
func Grid(s int) [3]uint32      { return [3]uint32{4096 << s, 1, 1} }
func Workgroup(s int) [3]uint32 { return [3]uint32{64 << s, 1, 1} }

// Duration is how long dispatch i of rank r lasts, in ns: 1,000 + 10 per
// kernel index + 500 for the second shape + 3 per (r mod 7), plus SlowNs
// for the slow rank's kernel 0.
func (j Job) Duration(r, i int) uint64 {
	k, s := j.Shape(i)
	d := uint64(1000 + 10*k + 500*s + 3*(r%7))
	if r == j.SlowRank && k == 0 {
		d += j.SlowNs
	}
	return d
}

// Write writes the job's ranks into dir, as many at once as there are
// cores; spools are made in a temporary directory and removed.
func Write(dir string, j Job) error {
	if j.Kernels <= 0 {
		j.Kernels = 1
	}
	tmp, err := os.MkdirTemp("", "rocprof-go-jobgen-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	next := make(chan int)
	errs := make(chan error, runtime.GOMAXPROCS(0))
	var wg sync.WaitGroup
	for range runtime.GOMAXPROCS(0) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for r := range next {
				if err := j.writeRank(dir, tmp, r); err != nil {
					errs <- fmt.Errorf("rank %d: %w", r, err)
					for range next {
					}
					return
				}
			}
		}()
	}
	for r := range j.Ranks {
		select {
		case next <- r:
		case err := <-errs:
			close(next)
			wg.Wait()
			return err
		}
	}
	close(next)
	wg.Wait()
	select {
	case err := <-errs:
		return err
	default:
		return nil
	}
}

// writeRank writes rank r's spool into tmp, then its outputs into dir.
func (j Job) writeRank(dir, tmp string, r int) error {
	pid := j.PID(r)
	b := spooltest.New(tracing.ProcessInfo{PID: pid, PPID: 1, PSize: 1, StartBoottimeNs: 1_000_000, StartRealtimeNs: 1_000_000,
		Hostname: j.Host(r), Argv: []string{"./app"}, Exe: "./app", Cwd: "/",
		Environ: []string{"OMPI_COMM_WORLD_RANK=" + strconv.Itoa(r), "OMPI_COMM_WORLD_SIZE=" + strconv.Itoa(j.Ranks),
			"PMIX_NAMESPACE=jobgen"}})
	b.Add(spooltest.Agent(0, 0, 0, tracing.AgentCPU, "CPU"))
	b.Add(spooltest.Agent(2, 1, 0, tracing.AgentGPU, "gfx90a"))
	b.Add(tracing.CodeObject{CodeObjectID: 1, Operation: tracing.CodeObjectLoad, AgentNode: 2, LoadBase: 0x7f00, LoadSize: 4096,
		URI: []byte("file:///app#offset=0&size=4096")})
	for k := range j.Kernels {
		b.Add(tracing.KernelSymbol{KernelID: uint64(k + 1), CodeObjectID: 1, KernelObject: 0x100 * uint64(k+1), KernargSize: 24,
			VGPRCount: 12, SGPRCount: 20, Name: []byte(KernelName(k) + ".kd")})
	}
	t := uint64(2_000_000)
	for i := range j.Dispatches {
		k, s := j.Shape(i)
		d := j.Duration(r, i)
		b.Add(tracing.KernelDispatch{AgentNode: 2, TID: uint32(pid), QueueID: 1, DispatchID: uint64(i + 1),
			KernelID: uint64(k + 1), CorrelationID: uint64(i + 1), Start: t, End: t + d, Grid: Grid(s), Workgroup: Workgroup(s),
			VGPRCount: 12, SGPRCount: 20})
		t += d + 100
	}
	rdir := filepath.Join(tmp, strconv.Itoa(r))
	if err := os.Mkdir(rdir, 0o700); err != nil {
		return err
	}
	defer os.RemoveAll(rdir)
	spool, err := b.WriteFile(rdir)
	if err != nil {
		return err
	}
	in := model.Input{Spools: []string{spool}}
	if j.Parquet {
		// What a rank run with -f parquet --parquet-hive -d DIR -o %hostname%/%pid% writes.
		pin := in
		pin.Config.ParquetHive, pin.Config.ParquetRank, pin.Config.ParquetHost = true, r, j.Host(r)
		pin.Config.ParquetHiveRoot = dir
		if err := parquet.Write(filepath.Join(dir, j.Host(r), strconv.Itoa(int(pid))), &pin); err != nil {
			return err
		}
	}
	if j.ROCpd {
		if err := rocpd.Write(filepath.Join(dir, strconv.Itoa(r)+"_results.db"), &in); err != nil {
			return err
		}
	}
	return nil
}
