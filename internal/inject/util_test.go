package inject

import (
	"os/exec"
)

func cmdOf(path string, args ...string) *exec.Cmd { return exec.Command(path, args...) }

func runOut(path string, args ...string) (string, error) {
	b, err := exec.Command(path, args...).Output()
	return string(b), err
}
