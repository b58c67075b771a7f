package fiojob

import (
	"testing"
)

func parse(t *testing.T, text string, o Options) ([]Point, error) {
	t.Helper()
	return Parse("job.fio", []byte(text), o)
}
