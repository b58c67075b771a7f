package target

import (
	"fmt"
	"testing"

	"github.com/ioprobe/ioprobe/internal/testloop"
)

// What a look for signatures costs on a blank device (nothing found, so
// every round of the search runs), as reads of 64 KiB and time: the
// interval-end look (CheckSignatures) and the full search Open and
// Recheck run (scanSignatures, as scanDevice reads). `go test -run XXX -bench BenchmarkLook
// ./internal/target/` (root: loop devices over sparse files).
func BenchmarkLook(b *testing.B) {
	for _, size := range []int64{1 << 30, 1 << 40} {
		dev := testloop.Device(b, size)
		tg, err := Open(dev, Options{Write: true, AllowDestructive: true})
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { tg.Close() })
		b.Run(fmt.Sprintf("interval/%dGiB", size>>30), func(b *testing.B) {
			var c ReadCount
			for i := 0; i < b.N; i++ {
				if err := tg.CheckSignatures(&c); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(c.Ops)/float64(b.N), "reads/look")
			b.ReportMetric(float64(c.Bytes)/float64(b.N)/(1<<20), "MiB/look")
		})
		b.Run(fmt.Sprintf("open/%dGiB", size>>30), func(b *testing.B) {
			var n int
			read := func(off int64, k int) ([]byte, error) { n++; return readDirect(tg.FD, off, k) }
			for i := 0; i < b.N; i++ {
				if _, err := scanSignatures(size, tg.LogicalBlock, tg.LogicalBlock, read); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(n)/float64(b.N), "reads/look")
		})
	}
}
