package report

import (
	"bytes"
	"encoding/csv"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ioprobe/ioprobe/pkg/result"
)

func TestWriteCSV(t *testing.T) {
	var rs []*result.Result
	for _, f := range fixtures {
		rs = append(rs, f.result())
	}
	var b bytes.Buffer
	require.NoError(t, WriteCSV(&b, rs, true))
	golden(t, "results.csv", b.Bytes())

	rows, err := csv.NewReader(bytes.NewReader(b.Bytes())).ReadAll()
	require.NoError(t, err)
	require.Len(t, rows, 1+len(rs))
	require.Equal(t, CSVColumns, rows[0])
	seen := map[string]bool{}
	for _, c := range CSVColumns {
		require.False(t, seen[c], "duplicate column %s", c)
		seen[c] = true
	}
	col := func(row []string, name string) string {
		for i, c := range CSVColumns {
			if c == name {
				return row[i]
			}
		}
		t.Fatalf("no column %s", name)
		return ""
	}
	require.Equal(t, "8192:1", col(rows[1], "block_sizes"))
	require.Equal(t, "/data/probe.dat", strings.Split(col(rows[1], "targets"), ";")[1])
	require.Equal(t, "eio=2;short=1", col(rows[1], "errors_by_class"))
	require.Equal(t, "4096:70;65536:30", col(rows[3], "block_sizes"))
	require.Empty(t, col(rows[3], "device_read_ops"), "no device known")
	require.Equal(t, "0", col(rows[4], "device_read_ops"), "device known, nothing counted")
	require.Contains(t, CSVColumns, "read_latency_p99_9_seconds")
	require.Equal(t, "2", col(rows[2], "merged_runs"))
	require.Equal(t, "esx-lab;esx-lab2", col(rows[2], "merged_hosts"))
	require.Empty(t, col(rows[1], "point"), "a plain run is no suite point")

	b.Reset()
	require.NoError(t, WriteCSV(&b, rs[:1], false))
	rows, err = csv.NewReader(&b).ReadAll()
	require.NoError(t, err)
	require.Len(t, rows, 1, "no header")
	require.Equal(t, "db01", col(rows[0], "hostname"))

	require.Error(t, WriteCSV(&bytes.Buffer{}, []*result.Result{nil}, true))
}

func TestWriteCSVSuitePoints(t *testing.T) {
	s := businessSuite()
	var b bytes.Buffer
	require.NoError(t, WriteCSV(&b, s.Results, true))
	rows, err := csv.NewReader(&b).ReadAll()
	require.NoError(t, err)
	require.Len(t, rows, 1+6, "one row per point")
	at := func(row []string, name string) string {
		for i, c := range CSVColumns {
			if c == name {
				return row[i]
			}
		}
		t.Fatalf("no column %s", name)
		return ""
	}
	require.Equal(t, "business", at(rows[1], "suite"))
	require.Equal(t, "file-server", at(rows[1], "point"))
	require.Equal(t, "File Server", at(rows[1], "point_pattern"))
	require.Equal(t, "8192", at(rows[1], "point_size_bytes"))
	require.Equal(t, "3", at(rows[1], "spread_runs"))
	require.Equal(t, "3007", at(rows[1], "spread_iops_min"))
	require.Equal(t, "3193", at(rows[1], "spread_iops_max"))
	require.Empty(t, at(rows[6], "spread_runs"), "the mixed run ran once")
	// The existing columns keep their places: new ones only at the end.
	require.Equal(t, "device_write_bytes", CSVColumns[slices.Index(CSVColumns, "suite")-1])
}

// TestCSVAddedFigureGoesLast: a figure added to the catalogue (at its end,
// as a new percentile would be) adds its column at the end of the CSV and
// moves none of the others.
func TestCSVAddedFigureGoesLast(t *testing.T) {
	figs := result.Figures()
	header := func(cols []csvColumn) []string {
		var names []string
		for _, c := range cols {
			names = append(names, c.name)
		}
		return names
	}
	before := header(buildCSVColumns(figs))
	require.Equal(t, CSVColumns, before)

	p := result.LatencyAll.Figure(result.StatP99_99).Figure()
	p.ID, p.Column, p.Block = "latency.percentiles.99.999", "latency_p99_999_seconds", result.CSVLast
	after := buildCSVColumns(append(figs, p))
	require.Equal(t, append(slices.Clone(before), "latency_p99_999_seconds"), header(after))

	r := mixedResult()
	var b bytes.Buffer
	cw := csv.NewWriter(&b)
	row := make([]string, len(after))
	for i, c := range after {
		row[i] = c.value(r)
	}
	require.NoError(t, cw.Write(row))
	cw.Flush()
	require.Equal(t, result.Float(r.Summary.Latency.Percentiles["99.99"]), row[len(row)-1], "the added column holds its figure")
}
