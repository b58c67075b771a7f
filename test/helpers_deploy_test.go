package test

import (
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// serviceSettings is what systemd would run ioprobe.service with, of the
// settings that decide ioprobe's view of the processes: the unit, then
// each drop-in, the last assignment of ProtectProc winning, capability
// lists merged, an empty one resetting them (systemd.exec(5)).
type serviceSettings struct {
	protectProc string
	ambient     []string
	bounding    []string
}

func unitSettings(t *testing.T, files ...string) serviceSettings {
	t.Helper()
	var s serviceSettings
	for _, f := range files {
		b, err := os.ReadFile(f)
		require.NoError(t, err)
		section := ""
		for _, line := range strings.Split(string(b), "\n") {
			line = strings.TrimSpace(line)
			if strings.HasPrefix(line, "[") {
				section = line
				continue
			}
			k, v, ok := strings.Cut(line, "=")
			if section != "[Service]" || !ok || strings.HasPrefix(line, "#") {
				continue
			}
			switch k {
			case "ProtectProc":
				s.protectProc = v
			case "AmbientCapabilities":
				s.ambient = merge(s.ambient, v)
			case "CapabilityBoundingSet":
				s.bounding = merge(s.bounding, v)
			}
		}
	}
	return s
}

func merge(list []string, v string) []string {
	if strings.TrimSpace(v) == "" {
		return []string{}
	}
	return append(list, strings.Fields(v)...)
}

// setprivCaps is the unit's ambient capabilities as setpriv's
// --ambient-caps wants them ("+sys_ptrace,+dac_read_search").
func (s serviceSettings) setprivCaps() string {
	var out []string
	for _, c := range s.ambient {
		out = append(out, "+"+strings.ToLower(strings.TrimPrefix(c, "CAP_")))
	}
	return strings.Join(out, ",")
}
