package engine_test

import (
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ioprobe/ioprobe/internal/engine"
	"github.com/ioprobe/ioprobe/internal/iobuf"
	"github.com/ioprobe/ioprobe/pkg/workload"
)

// BenchmarkPrepareWrite measures what the engines do to a write buffer
// just before a plain write (no --verify) is issued, per I/O, at several
// transfer sizes: the CPU a write costs besides the system call.
func BenchmarkPrepareWrite(b *testing.B) {
	for _, size := range []int64{512, 4096, 65536, 1 << 20} {
		b.Run(strconv.FormatInt(size, 10), func(b *testing.B) {
			bufs, err := iobuf.New(1, int(size), 1)
			require.NoError(b, err)
			defer bufs.Close()
			w := &engine.Worker{Targets: []engine.Target{{Region: workload.Region{Len: 1 << 30}}}}
			s := &engine.Lane{}
			buf := bufs.Slot(0, size)
			op := engine.IO{Op: workload.Op{Write: true, Len: size}}
			b.SetBytes(size)
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				op.Offset = int64(i%1024) * size
				w.PrepareWrite(s, &op, buf, uint64(i))
			}
		})
	}
}
