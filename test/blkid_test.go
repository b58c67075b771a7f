package test

import (
	"crypto/rand"
	"fmt"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ioprobe/ioprobe/internal/blkid"
	"github.com/ioprobe/ioprobe/internal/testdeps"
)

// The differential test: images made by the real tools (or, for types no
// Debian package here creates, hand-built from the published format) on
// loop devices full of random bytes, probed by util-linux's libblkid
// (wipefs and blkid -p) and by ioprobe. ioprobe must find every signature
// libblkid finds, at the same offset with the same name, and the binary
// must refuse to write there with the device's bytes unchanged.

// sigCase is one image.
type sigCase struct {
	name   string
	size   int64                          // device size, 0 = 64 MiB
	tools  []string                       // commands the case needs; a missing one skips this case only
	source string                         // for hand-built headers: the published format it follows
	make   func(t *testing.T, dev string) // writes the signature onto the attached loop device
	// want, when set, is a type libblkid must report for the case to
	// count: a case that makes nothing libblkid recognises is broken.
	want string
	// since and until bound the util-linux releases whose libblkid
	// reports the case ("": no bound); a referee outside them is not
	// asked (Debian 12's 2.38.1 knows nothing of bcachefs).
	since, until string
}

// sigRow is one line of the table the test logs.
type sigRow struct {
	typ, how, blkid, ioprobe, refused string
}

// referee is a util-linux whose wipefs and blkid judge the cases: the
// system's (Debian 12: 2.38.1), and, when IOPROBE_BLKID_REFEREE names a
// directory holding blkid and wipefs built from a newer util-linux
// (scripts/blkid-referee.sh builds them from a util-linux source tree),
// that one too.
type referee struct {
	version       string // "2.38.1"
	blkid, wipefs string
}

func (r referee) String() string { return "util-linux " + r.version }

// covers says whether r's libblkid reports a case of since and until.
func (r referee) covers(since, until string) bool {
	return (since == "" || !versionLess(r.version, since)) && (until == "" || !versionLess(until, r.version))
}

// versionLess compares dotted release numbers ("2.38.1" < "2.39"; "2.40"
// covers "2.40.4").
func versionLess(a, b string) bool {
	as, bs := strings.Split(a, "."), strings.Split(b, ".")
	for i := 0; i < len(as) && i < len(bs); i++ {
		x, _ := strconv.Atoi(as[i])
		y, _ := strconv.Atoi(bs[i])
		if x != y {
			return x < y
		}
	}
	return false
}

var (
	refereesOnce sync.Once
	refereeList  []referee
	refereeErr   error
)

var (
	sigRowsMu sync.Mutex
	sigRows   []sigRow
)

func TestBlkidDifferential(t *testing.T) {
	// Root for loop devices and libblkid's low-level probe.
	testdeps.Need(t, testdeps.LoopDevices, testdeps.Tool("wipefs"), testdeps.Tool("blkid"))
	cases := append(append([]sigCase(nil), fsCases...), otherCases...)
	t.Cleanup(func() { logSigTable(t) })
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			// The cases wait on the tools they run (mkfs, wipefs, blkid,
			// ioprobe) and each has its own loop device; none measures a
			// time or counts I/O, so they run beside each other (and beside
			// no other test: a parallel subtest runs only with its
			// siblings, the parent ends after them).
			t.Parallel()
			runSigCase(t, c)
		})
	}
}

func runSigCase(t *testing.T, c sigCase) {
	for _, tool := range c.tools {
		testdeps.Need(t, testdeps.Tool(tool))
	}
	size := c.size
	if size == 0 {
		size = 64 << 20
	}
	dev := randomLoop(t, size)
	c.make(t, dev)
	run(t, "blockdev", "--flushbufs", dev) // what the tools wrote through the page cache, down to the backing file

	f, err := os.Open(dev)
	require.NoError(t, err)
	defer f.Close()
	mine := blkid.Scan(f, size, 512)
	have := map[string]bool{}
	for _, s := range mine {
		have[sigKey(s.Type, s.Offset)] = true
	}

	var ref []refSig
	var judges []string
	var missing []string
	for _, rf := range referees(t) {
		if !rf.covers(c.since, c.until) {
			continue
		}
		judges = append(judges, rf.String())
		got := libblkidSignatures(t, rf, dev)
		if c.want != "" {
			require.Contains(t, typesOf(got), c.want, "%s does not see the %s this case makes: the case is broken", rf, c.want)
		}
		require.NotEmpty(t, got, "%s finds nothing: the case is broken", rf)
		for _, r := range got {
			if !have[sigKey(r.typ, r.off)] {
				missing = append(missing, fmt.Sprintf("%s at %d (%s)", r.typ, r.off, rf))
			}
		}
		ref = append(ref, got...)
	}
	if len(judges) == 0 {
		// Only a newer util-linux knows the type (IOPROBE_BLKID_REFEREE):
		// ioprobe's refusal and the bytes are checked alone.
		require.NotEmpty(t, c.want, "a case no referee judges names the type it makes")
		t.Logf("no referee here reports %s (util-linux %s and later): set IOPROBE_BLKID_REFEREE to a newer build", c.want, c.since)
		ref = []refSig{{typ: c.want, off: -1, by: "none here"}}
	}

	before := sha256Dev(t, dev)
	out := ioprobe(t, "", "run", "--target", dev, "--allow-destructive", "--read-pct", "0", "--duration", "1s")
	after := sha256Dev(t, dev)
	refused := out.code == 2
	named := false
	for _, r := range ref {
		if strings.Contains(out.stderr, "TYPE="+r.typ) {
			named = true
		}
	}

	row := sigRow{typ: strings.Join(typesOf(ref), ","), how: c.name, blkid: describeRef(ref) + " [" + strings.Join(judges, ", ") + "]", ioprobe: describeMine(mine)}
	row.refused = map[bool]string{true: "yes", false: "NO"}[refused && before == after]
	if c.source != "" {
		row.how += " (hand-built: " + c.source + ")"
	}
	sigRowsMu.Lock()
	sigRows = append(sigRows, row)
	sigRowsMu.Unlock()

	require.Empty(t, missing, "libblkid finds signatures ioprobe does not; ioprobe found %s", describeMine(mine))
	require.Equal(t, 2, out.code, "ioprobe must refuse: stdout %s stderr %s", out.stdout, out.stderr)
	require.True(t, named, "the refusal must name the type as blkid does (%v): %s", typesOf(ref), out.stderr)
	require.Equal(t, before, after, "the device's bytes changed")
}

// refSig is a signature as libblkid reports it.
type refSig struct {
	typ string
	off int64
	by  string // "wipefs", "blkid -p" or both
}

func describeRef(refs []refSig) string {
	parts := make([]string, len(refs))
	for i, r := range refs {
		parts[i] = fmt.Sprintf("%s@%d", r.typ, r.off)
	}
	return strings.Join(parts, " ")
}

func describeMine(sigs []blkid.Signature) string {
	parts := make([]string, len(sigs))
	for i, s := range sigs {
		parts[i] = fmt.Sprintf("%s@%d", s.Type, s.Offset)
	}
	return strings.Join(parts, " ")
}

// logSigTable logs the table the closing note quotes.
func logSigTable(t *testing.T) {
	sigRowsMu.Lock()
	defer sigRowsMu.Unlock()
	rows := append([]sigRow(nil), sigRows...)
	sort.SliceStable(rows, func(i, j int) bool { return rows[i].typ < rows[j].typ })
	var b strings.Builder
	b.WriteString("\n| type | how it was made | found by blkid | found by ioprobe | refused, bytes unchanged |\n|---|---|---|---|---|\n")
	for _, r := range rows {
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s |\n", r.typ, r.how, r.blkid, r.ioprobe, r.refused)
	}
	t.Log(b.String())
}

// The fingerprint the differential test compares sees a write anywhere on
// the device: in the random head, and in the hole in the middle.
func TestSha256DevSeesWrites(t *testing.T) {
	testdeps.Need(t, testdeps.LoopDevices)
	dev := randomLoop(t, 64<<20)
	before := sha256Dev(t, dev)
	require.Equal(t, before, sha256Dev(t, dev), "the fingerprint is stable")
	for _, off := range []int64{1 << 20, 32 << 20, 64<<20 - 512} {
		p := make([]byte, 32) // random: the same bytes as before have a chance of 2^-256
		_, err := rand.Read(p)
		require.NoError(t, err)
		writeAt(t, dev, off-32, p)
		after := sha256Dev(t, dev)
		require.NotEqual(t, before, after, "a byte written at %d", off)
		before = after
	}
}
