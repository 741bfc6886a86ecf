package sandbox

import (
	"os/exec"

	"github.com/reinsdev/reins/internal/lazy"
)

// supervised: on Linux every process runs under the supervisor (Argv).
const supervised = true

// probe starts /bin/true in the container's namespaces once per process:
// the kernel's settings (sysctls, AppArmor, a seccomp policy of a container
// runtime) decide, and only trying tells.
var probed = lazy.Value[error]{New: func() error {
	cmd := exec.Command("/bin/true")
	cmd.SysProcAttr = containerAttr(Policy{DenyNetwork: true})
	cmd.SysProcAttr.Pdeathsig = 0
	return cmd.Run()
}}

func probe() error { return probed.Get() }
