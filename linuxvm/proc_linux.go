package linuxvm

import (
	"os/exec"
	"syscall"
)

// dieWithParent makes QEMU die with the process that started it (a
// vfslab killed by timeout(1) or ^C leaves no guest running).
func dieWithParent(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
