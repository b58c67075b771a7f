package fiojob

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// TestRandomDistributionAsFioReadsIt (issue 33 item 5): fio's values and
// refusals, checked against fio 3.33's own parser (fio --parse-only
// --debug=parse); fio turns its random map off for them, and ignores
// them on a sequential job.
func TestRandomDistributionAsFioReadsIt(t *testing.T) {
	base := "[j]\nfilename=/dev/big\nrw=randread\nsize=64m\n"
	for _, c := range []struct{ value, want string }{
		{"zipf:1.2", "zipf:1.2"},
		{"zipf", "zipf:1.1"},     // fio's default theta
		{"pareto", "pareto:0.2"}, // and h
		{"normal", "normal:0"},
		{"zipf: 1.2 ", "zipf:1.2"}, // blanks after the colon go
		{"zipf:1.2x", "zipf:1.2"},  // sscanf stops at the x
		{"normal:5:0.25", "normal:5:0.25"},
		{"zoned:60/10:30/20:10", "zoned:60/10:30/20:10/70"}, // a missing size shares the rest
		{"zoned:60/0:40/90", "zoned:60/10:40/90"},           // 0 is missing, as atoi gives it
		{"zoned_abs:60/1m:40/3m", "zoned_abs:60/1048576:40/3145728"},
		{"zoned_abs:60:40/3m", "zoned_abs:60/0:40/3145728"},
	} {
		j := one(t, base+"random_distribution="+c.value+"\n")
		require.Equal(t, c.want, j.Spec.RandomDistribution, c.value)
		require.False(t, j.Spec.RandomMap, "%s: fio keeps no map beside it", c.value)
	}
	require.Empty(t, one(t, base+"random_distribution=random\n").Spec.RandomDistribution)
	require.True(t, one(t, base+"random_distribution=random\n").Spec.RandomMap)
	seq := one(t, "[j]\nfilename=/dev/big\nrw=read\nsize=64m\nrandom_distribution=zipf:1.2\n")
	require.Empty(t, seq.Spec.RandomDistribution, "a sequential job ignores it, as fio's")
	require.Contains(t, seq.Notes[0], "no effect on a sequential job")

	for _, c := range []struct{ value, want string }{
		{"Zipf:1.2", "lower case"},
		{"zipf:1", "different than 1.0"},
		{"zipf:abc", "random postfix parsing failed"},
		{"zipf:1.2:2", "center out of range"},
		{"pareto:1", "between 0 and 1"},
		{"normal:100", "below 100"},
		{"zoned:50/10:40/90", "got=90"},
		{"zoned:60k/10:40/90", "got=40"}, // 60k is 61440, kept in a byte: 0
		{"zoned:60/10:40/90,50/50:50/50", "fio 3.33 fails to parse it"},
		{"zoned:60/60:40/60", "more than 100"},
		{"zoned:60/10:40/150", "more than 100"}, // 150 is 100: 110 in all
	} {
		require.Contains(t, refused(t, base+"random_distribution="+c.value+"\n"), c.want, c.value)
	}
	require.Contains(t, refused(t, base+"random_distribution=zoned_abs:50/48m:50/48m\n"), "job.fio:5: [j] random_distribution: ")
	require.Contains(t, refused(t, base+"random_distribution=zipf\nblockalign=8k\n"), "blockalign")
	// fio's JESD219 example: zones in blocks of blockalign, sizes from 512
	// bytes up.
	jesd := one(t, "[j]\nfilename=/dev/big\nrw=randrw\nnorandommap\nrwmixread=40\nbssplit=512/4:4k/67:64k/29\nblockalign=4k\nrandom_distribution=zoned:50/5:30/15:20/80\nsize=64m\n")
	require.Equal(t, "zoned:50/5:30/15:20/80", jesd.Spec.RandomDistribution)
	require.EqualValues(t, 4096, jesd.Spec.Align)
}

// TestRandomGeneratorAsFio: tausworthe and tausworthe64 change only the
// sequence; lfsr visits each block once per pass without fio's map.
func TestRandomGeneratorAsFio(t *testing.T) {
	base := "[j]\nfilename=/dev/big\nrw=randread\nsize=64m\n"
	for _, v := range []string{"tausworthe", "tausworthe64"} {
		j := one(t, base+"random_generator="+v+"\n")
		require.Empty(t, j.Spec.RandomGenerator)
		require.True(t, j.Spec.RandomMap)
	}
	j := one(t, base+"random_generator=lfsr\n")
	require.Equal(t, "lfsr", j.Spec.RandomGenerator)
	require.False(t, j.Spec.RandomMap, "an lfsr instead of the map (init_random_map)")
	require.Contains(t, refused(t, base+"random_generator=LFSR\n"), "tausworthe, lfsr and tausworthe64")
	require.Contains(t, refused(t, base+"random_generator=lfsr\nrandom_distribution=zoned:100/100\n"), "whole file")
	z := one(t, base+"random_generator=lfsr\nrandom_distribution=zipf\n")
	require.Empty(t, z.Spec.RandomGenerator, "zipf draws its own blocks")
}
