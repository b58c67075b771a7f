package exporter

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/require"

	"github.com/ioprobe/ioprobe/internal/stack"
)

// ioprobe_device_info: one series per device named, its settings in its
// labels as sysfs says them, a model a device made up cut to its bound,
// and a scheduler switched through sysfs seen at the next reading.
func TestDeviceInfo(t *testing.T) {
	sys := t.TempDir()
	write := func(rel, text string) {
		full := filepath.Join(sys, rel)
		require.NoError(t, os.MkdirAll(filepath.Dir(full), 0o755))
		require.NoError(t, os.WriteFile(full, []byte(text), 0o644))
	}
	usb := "devices/pci0000:00/0000:00:14.0/usb2/2-1/2-1:1.0/host6/target6:0:0/6:0:0:0"
	disk := usb + "/block/sdc"
	for k, v := range map[string]string{"dev": "8:32", "size": "62333952", "queue/scheduler": "none [mq-deadline]",
		"queue/rotational": "1", "queue/write_cache": "write through", "queue/logical_block_size": "512",
		"queue/physical_block_size": "512", "queue/nr_requests": "2", "queue/max_sectors_kb": "240", "queue/discard_max_bytes": "0"} {
		write(disk+"/"+k, v+"\n")
	}
	write(usb+"/model", strings.Repeat("Ultra Fit \x1b[2J", 20)+"\n")
	write(usb+"/rev", "1.00\n")
	write(usb+"/serial", "4C530001230912117385\n")
	require.NoError(t, os.MkdirAll(filepath.Join(sys, "class", "block"), 0o755))
	require.NoError(t, os.Symlink(filepath.Join(sys, disk), filepath.Join(sys, "class", "block", "sdc")))
	require.NoError(t, os.Symlink(filepath.Join(sys, usb), filepath.Join(sys, disk, "device")))

	info := newDeviceInfo(sys, "")
	reg := prometheus.NewRegistry()
	reg.MustRegister(&scrapeCollector{logger: testLogger(t), collectors: map[string]subCollector{"device_info": info}})
	info.refresh(context.Background(), nil, []string{"sdc"})
	// Printable characters only, cut to 64 bytes: what the device made up
	// costs no more in every sample of every scrape.
	model := strings.Repeat("Ultra Fit [2J", 5)[:maxModelLabel]
	want := func(sched string) string {
		return `
# HELP ioprobe_device_info ` + "The settings of each block device under the configured targets and in the devices list, as sysfs says (read every 30 s and at a reload): kind is disk, loop, dm or md; scheduler is empty for a device without a request queue of its own; model and firmware are cut to 64 and 32 characters; serial_sha256 is the SHA-256 of the serial number. Always 1." + `
# TYPE ioprobe_device_info gauge
ioprobe_device_info{bus="",device="sdc",discard_max_bytes="0",firmware="1.00",fua="0",kind="disk",logical_block_bytes="512",max_sectors_kb="240",model="` + model + `",nr_requests="2",numa_node="",physical_block_bytes="512",rotational="1",scheduler="` + sched + `",serial_sha256="` + stack.HashSerial("4C530001230912117385") + `",write_cache="write through"} 1
`
	}
	require.NoError(t, testutil.GatherAndCompare(reg, strings.NewReader(want("mq-deadline")), "ioprobe_device_info"))

	write(disk+"/queue/scheduler", "[none] mq-deadline\n")
	require.NoError(t, testutil.GatherAndCompare(reg, strings.NewReader(want("mq-deadline")), "ioprobe_device_info"), "a scrape reads no sysfs")
	info.refresh(context.Background(), nil, []string{"sdc"})
	require.NoError(t, testutil.GatherAndCompare(reg, strings.NewReader(want("none")), "ioprobe_device_info"))

	info.refresh(context.Background(), nil, nil)
	n, err := testutil.GatherAndCount(reg, "ioprobe_device_info")
	require.NoError(t, err)
	require.Zero(t, n, "a device no longer asked for has no series")
}
