package launch

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestParseNotes(t *testing.T) {
	in := strings.Join([]string{
		"rpg-note\tv=1\tkind=spool\tpid=10\tppid=1\terrno=13\tstage=create\tuid=999\teuid=999\tstart_euid=0\tcomm=app\tpath=/dev/shm/r/pass_1",
		"rpg-note\tv=1\tkind=exec\tpid=11\tppid=1\terrno=0\tstage=\tuid=0\teuid=0\tstart_euid=0\tcomm=env\tpath=/nonexistent",
		"rpg-note\tv=1\tkind=exec-failed\tpid=11\tppid=1\terrno=2\tstage=\tuid=0\teuid=0\tstart_euid=0\tcomm=env\tpath=/nonexistent",
		"rpg-note\tv=1\tkind=exec\tpid=11\tppid=1\terrno=0\tstage=\tuid=0\teuid=0\tstart_euid=0\tcomm=env\tpath=/bin/app",
		"rpg-note\tv=1\tkind=spawn\tpid=12\tppid=11\terrno=0\tstage=\tuid=0\teuid=0\tstart_euid=0\tcomm=app\tpath=/bin/child",
		"rpg-note\tv=1\tkind=spool\tpid=13\tppid=1\terrno=2\tstage=create\tuid=0\teuid=0\tstart_euid=0\tcomm=c\tpath=/dev/shm/r/pass_1",
		"garbage line",
		"rpg-note\tv=2\tkind=spool\tpid=14",
	}, "\n") + "\n"
	got := parseNotes(strings.NewReader(in))
	require.Len(t, got, 4)
	require.Equal(t, UnprofiledProcess{PID: 10, Command: "app", Cause: "spool_not_created", Error: "permission denied",
		Reason: got[0].Reason}, got[0])
	require.Contains(t, got[0].Reason, "setuid: uid 999, started as 0")
	require.Equal(t, 11, got[1].PID)
	require.Equal(t, "/bin/app", got[1].Command, "the failed exec is void, the second one counts")
	require.Equal(t, "profiler_removed", got[1].Cause)
	require.Equal(t, 12, got[2].PID)
	require.Contains(t, got[2].Reason, "posix_spawn")
	require.Contains(t, got[3].Reason, "another mount namespace")
}
