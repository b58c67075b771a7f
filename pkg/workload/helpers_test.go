package workload

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func lineSpec(lines ...Line) Spec {
	return Spec{Lines: lines, Duration: time.Second}.WithDefaults()
}

func valid() Spec {
	return Spec{ReadPct: 100, RandomPct: 100, Duration: time.Second}.WithDefaults()
}

// requireFieldErrors checks each case against a fresh spec from base.
func requireFieldErrors(t *testing.T, base func() Spec, cases []fieldCase) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := base()
			c.mod(&s)
			err := s.Validate()
			require.Error(t, err)
			require.Contains(t, err.Error(), c.want)
			var fe *FieldError
			require.ErrorAs(t, err, &fe)
		})
	}
}

// benchGeneratorNext times Next of a generator for spec over a GiB.
func benchGeneratorNext(b *testing.B, spec *Spec) {
	g, err := NewGenerator(spec, Region{Len: GiB}, nil, 1)
	if err != nil {
		b.Fatal(err)
	}
	var op Op
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		g.Next(&op)
	}
}
