package pluginrt

import (
	"fmt"
	"os"
	"runtime"
	"runtime/pprof"
	"strings"
	"sync"
)

// startProfiles records the plugin's CPU profile while it serves and its
// allocation profile when it stops, when the operator asks for them with
// SVC_<NAME>_CPUPROFILE and SVC_<NAME>_MEMPROFILE (file paths; the gateway
// passes a plugin the variables named for it). It returns what writes them
// out; a profile that cannot be started is logged and skipped, never fatal.
func (p *Plugin) startProfiles() (finish func()) {
	prefix := "SVC_" + strings.ToUpper(strings.NewReplacer("-", "_", ".", "_").Replace(p.name)) + "_"
	cpuPath, memPath := os.Getenv(prefix+"CPUPROFILE"), os.Getenv(prefix+"MEMPROFILE")
	var cpu *os.File
	if cpuPath != "" {
		f, err := os.Create(cpuPath)
		if err == nil {
			err = pprof.StartCPUProfile(f)
		}
		if err != nil {
			p.log.Warn("cpu profile not recorded", "error", err)
		} else {
			cpu = f
		}
	}
	var once sync.Once
	return func() { once.Do(func() { p.writeProfiles(cpu, memPath) }) }
}

// writeProfiles ends the CPU profile and writes the allocation profile.
func (p *Plugin) writeProfiles(cpu *os.File, memPath string) {
	if cpu != nil {
		pprof.StopCPUProfile()
		_ = cpu.Close()
	}
	if memPath != "" {
		if err := writeHeapProfile(memPath); err != nil {
			p.log.Warn("allocation profile not written", "error", err)
		}
	}
}

// writeHeapProfile writes the heap profile (allocations since the start,
// and what is in use) to path.
func writeHeapProfile(path string) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	runtime.GC() // the in-use figures as of now
	if err := pprof.Lookup("allocs").WriteTo(f, 0); err != nil {
		_ = f.Close()
		return fmt.Errorf("write %s: %w", path, err)
	}
	return f.Close()
}
