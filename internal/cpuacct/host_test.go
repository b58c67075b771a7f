package cpuacct

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ioprobe/ioprobe/pkg/result"
)

func TestHost(t *testing.T) {
	tests := []struct {
		name   string
		want   result.Host
		source string
	}{
		{"xeon-pstate", result.Host{Hostname: "db01", Kernel: "6.8.0-45-generic",
			CPUModel: "Intel(R) Xeon(R) Gold 6248R CPU @ 3.00GHz", LogicalCPUs: 8, ClockHz: 3.0e9}, ClockBaseFrequency},
		// acpi-cpufreq's max is "3001000" (nominal + 1 MHz = turbo on);
		// the model name's rated 3.00 GHz wins.
		{"xeon-acpi", result.Host{Hostname: "esx-lab", Kernel: "5.15.0-119-generic",
			CPUModel: "Intel(R) Xeon(R) CPU E5-2690 v2 @ 3.00GHz", LogicalCPUs: 4, ClockHz: 3.0e9}, ClockModelName},
		{"epyc-amdpstate", result.Host{Hostname: "node-7", Kernel: "6.1.0-26-amd64",
			CPUModel: "AMD EPYC 7B13 64-Core Processor", LogicalCPUs: 2, ClockHz: 3.54e9}, ClockMaxFrequency},
		{"epyc-vm", result.Host{Hostname: "vm-1", Kernel: "6.12.48+deb13-cloud-amd64",
			CPUModel: "AMD EPYC", LogicalCPUs: 2, ClockHz: 2596.148e6}, ClockCurrentMHz},
		{"ppc64le", result.Host{Hostname: "p9", Kernel: "5.14.0-427.el9.ppc64le",
			CPUModel: "POWER9, altivec supported", LogicalCPUs: 2, ClockHz: 2.9e9}, ClockCurrentMHz},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := fixtureReader(tc.name)
			h, err := r.Host()
			require.NoError(t, err)
			require.Equal(t, tc.want.Hostname, h.Hostname)
			require.Equal(t, tc.want.Kernel, h.Kernel)
			require.Equal(t, tc.want.CPUModel, h.CPUModel)
			require.Equal(t, tc.want.LogicalCPUs, h.LogicalCPUs)
			require.InDelta(t, tc.want.ClockHz, h.ClockHz, 1e-3)

			hz, source, err := r.ClockHz()
			require.NoError(t, err)
			require.Equal(t, tc.source, source)
			require.InDelta(t, tc.want.ClockHz, hz, 1e-3)
		})
	}
}

func TestHostPartial(t *testing.T) {
	// An arm64 board without cpufreq: everything but the model and clock.
	h, err := fixtureReader("arm64-noclock").Host()
	require.ErrorContains(t, err, "clock rate")
	require.Equal(t, "pi", h.Hostname)
	require.Equal(t, 4, h.LogicalCPUs)
	require.Empty(t, h.CPUModel)
	require.Zero(t, h.ClockHz)

	// Nothing there at all: the errors say what is missing, and the
	// process's own view fills what it can.
	h, err = fixtureReader("does-not-exist").Host()
	require.Error(t, err)
	for _, want := range []string{"kernel release", "logical CPUs", "cpu model", "clock rate"} {
		require.ErrorContains(t, err, want)
	}
	require.Positive(t, h.LogicalCPUs)
	require.NotEmpty(t, h.Hostname)
}

func TestParseCPUInfoEmpty(t *testing.T) {
	info, err := parseCPUInfo(strings.NewReader(""))
	require.NoError(t, err)
	require.Equal(t, cpuInfo{}, info)
}

func TestRatedFromModel(t *testing.T) {
	require.Equal(t, 2.4e9, ratedFromModel("Intel(R) Xeon(R) CPU E7-4870 @ 2.40GHz"))
	require.Equal(t, 3e9, ratedFromModel("Intel(R) Core(TM) i7 CPU @3GHz"))
	require.Zero(t, ratedFromModel("AMD EPYC 7763 64-Core Processor"))
}
