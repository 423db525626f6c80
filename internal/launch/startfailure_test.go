package launch

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// The loader is asked again only when it is one known to take --list: a
// program naming another interpreter could run the app a second time.
func TestOnlyKnownLoadersAreAskedAgain(t *testing.T) {
	for _, l := range []string{"/lib64/ld-linux-x86-64.so.2", "/lib/ld-linux-aarch64.so.1", "/lib/ld-linux.so.2",
		"/lib64/ld64.so.2", "/lib/ld-musl-x86_64.so.1"} {
		require.True(t, listsLibraries(l), l)
	}
	for _, l := range []string{"", "/opt/app/bin/my-launcher", "/usr/bin/python3"} {
		require.False(t, listsLibraries(l), l)
	}
	require.Empty(t, loaderFailure("/bin/sh", nil, ""), "a program that loads: nothing to say")
}
