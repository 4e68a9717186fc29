package pluginrt

import (
	"log/slog"
	"os"
	"time"
)

// watchParent exits the plugin when the gateway that started it dies, so
// that no plugin outlives its gateway. The gateway also starts plugins with
// PR_SET_PDEATHSIG; this watch covers what that signal misses (it follows
// the thread that forked, not the process). stop runs the plugin's stop
// hooks first.
func watchParent(log *slog.Logger, stop func()) {
	ppid := os.Getppid()
	if ppid == 1 {
		return // started by init: there is no gateway to outlive
	}
	go func() {
		for range time.Tick(time.Second) {
			if os.Getppid() != ppid {
				log.Warn("the gateway has exited; stopping", "gateway_pid", ppid)
				stop()
				os.Exit(0)
			}
		}
	}()
}
