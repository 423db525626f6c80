package vgpu

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// An app with thousands of launches in flight made ROCR 5.2 and 6.1 print
// "Use of non-host signal in host signal wait API." ten times (HIP waits
// on its kernel-argument pool's GPU-only signals; messages.c): the virtual
// GPU drops exactly that message, on every runtime.
func TestNonHostSignalWarningIsDropped(t *testing.T) {
	for _, rt := range runtimes(t) {
		t.Run(rt.Name, func(t *testing.T) {
			r := runOn(t, rt, 2*time.Minute, nil, filepath.Join(rt.Apps, "tiny_kernels"), "8000")
			require.Equalf(t, 0, r.code, "stderr: %s", r.stderr)
			require.Contains(t, r.stdout, "dispatches=8000")
			require.NotContains(t, r.stderr, "non-host signal")
		})
	}
}

// Only that message is dropped: other fprintf output, through glibc's
// fortified entry point (what ROCR calls) or the plain one, and the same
// text on stdout, pass unchanged.
func TestOtherMessagesPass(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(dir, "msg.c")
	require.NoError(t, os.WriteFile(src, []byte(`#include <stdio.h>
int main(void) {
  fprintf(stderr, "Warning: (!g_use_interrupt_wait || isIPC()) && \"Use of non-host signal in host signal wait API.\" in %s, x.cpp:87\n", "f");
  fprintf(stderr, "Warning: something else %d\n", 42);
  fprintf(stdout, "Warning: (!g_use_interrupt_wait || isIPC()) && \"Use of non-host signal in host signal wait API.\" on stdout %d\n", 1);
  return 0;
}
`), 0o600))
	for _, flags := range [][]string{{"-O2", "-D_FORTIFY_SOURCE=2"}, {"-O0", "-U_FORTIFY_SOURCE"}} {
		bin := filepath.Join(dir, "msg")
		out, err := exec.Command("cc", append(flags, "-o", bin, src)...).CombinedOutput()
		require.NoError(t, err, string(out))
		r := run(t, time.Minute, nil, bin)
		require.Equal(t, 0, r.code)
		require.Equal(t, "Warning: something else 42\n", r.stderr, flags)
		require.Contains(t, r.stdout, "on stdout 1\n", flags)
	}
}
