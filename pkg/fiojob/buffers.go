package fiojob

import (
	"encoding/hex"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/ioprobe/ioprobe/pkg/workload"
)

// buffers are fio's options for what writes carry, as fio's option
// callbacks leave them, in the order the job gives them: some set others
// (options.c: buffer_pattern turns scramble and zeros off and refill on
// or off, dedupe_percentage turns refill on), and fix-ups follow
// (init.c). fio_option_is_set is tracked where fio asks it.
type buffers struct {
	compress, chunk          int64
	compressSet              bool // TD_F_COMPRESS: buffer_compress_percentage given
	dedupe, workingSet       int64
	dedupeSet, workingMode   bool
	pattern                  []byte
	refill, refillSet        bool
	scramble, scrambleSet    bool
	zero, zeroSet            bool
	buffersAt                option // the last of these options, for a refusal
	dedupeGlobal             bool
	dedupeGlobalAt, modeAt   option
	compressAt, patternAt    option
	hasBuffers, defaultsDone bool
}

func init() {
	for key, set := range map[string]func(*job, option) error{
		"buffer_compress_percentage":    (*job).setCompress,
		"buffer_compress_chunk":         func(j *job, o option) error { return j.bufInt(o, &j.chunk, 0, math.MaxInt32) },
		"dedupe_percentage":             (*job).setDedupe,
		"dedupe_mode":                   (*job).setDedupeMode,
		"dedupe_working_set_percentage": func(j *job, o option) error { return j.bufInt(o, &j.workingSet, 0, 100) },
		"dedupe_global":                 func(j *job, o option) error { j.dedupeGlobalAt = o; return setBool(o, &j.dedupeGlobal) },
		"refill_buffers":                func(j *job, o option) error { j.refillSet = true; return j.bufFlag(o, &j.refill) },
		"zero_buffers":                  func(j *job, o option) error { j.zeroSet = true; return j.bufFlag(o, &j.zero) },
		"scramble_buffers": func(j *job, o option) error {
			j.bufDefaults()
			j.scrambleSet = true
			j.buffersAt = o
			return setBool(o, &j.scramble)
		},
		"buffer_pattern": (*job).setPattern,
	} {
		handlers[key] = set
	}
}

// bufDefaults gives the options their fio defaults before the first is
// read (chunk 512, scramble on, a working set of 5%).
func (j *job) bufDefaults() {
	if !j.defaultsDone {
		j.chunk, j.scramble, j.workingSet, j.defaultsDone = 512, true, 5, true
	}
	j.hasBuffers = true
}

func (j *job) bufInt(o option, dst *int64, lo, hi int64) error {
	j.bufDefaults()
	var v int
	if err := j.setInt(o, &v, nil, lo, hi); err != nil {
		return err
	}
	*dst, j.buffersAt = int64(v), o
	return nil
}

func (j *job) bufFlag(o option, dst *bool) error {
	j.bufDefaults()
	j.buffersAt = o
	return setFlag(o, dst)
}

func (j *job) setCompress(o option) error {
	if err := j.bufInt(o, &j.compress, 0, 100); err != nil {
		return err
	}
	j.compressSet, j.compressAt = true, o
	return nil
}

func (j *job) setDedupe(o option) error {
	if err := j.bufInt(o, &j.dedupe, 0, 100); err != nil {
		return err
	}
	j.dedupeSet, j.refill = true, true // str_dedupe_cb
	return nil
}

func (j *job) setDedupeMode(o option) error {
	j.bufDefaults()
	switch o.value {
	case "repeat":
		j.workingMode = false
	case "working_set":
		j.workingMode = true
	default:
		return fmt.Errorf("%q: fio's values are repeat and working_set", o.value)
	}
	j.modeAt, j.buffersAt = o, o
	return nil
}

// setPattern is fio's str_buffer_pattern_cb: the pattern, then refill on
// when the job compresses or reads (as far as its options so far say),
// scramble and zeros off.
func (j *job) setPattern(o option) error {
	j.bufDefaults()
	p, err := parsePattern(o.value)
	if err != nil {
		return err
	}
	reads := j.rw == "read" || j.rw == "randread" || j.rw == "rw" || j.rw == "randrw"
	j.pattern, j.patternAt, j.buffersAt = p, o, o
	j.refill = j.compress != 0 || reads
	j.scramble, j.zero = false, false
	return nil
}

// parsePattern is fio's parse_and_fill_pattern for buffer_pattern:
// strings in double quotes, decimal numbers (the bytes of an int, least
// significant first, as many as it needs; 0 is one zero byte) and
// hexadecimal ones (0x…, the bytes as written), one after another, at most
// 512 bytes. fio takes no formats (%o) there; a file ('name') is refused
// here (give its bytes).
func parsePattern(in string) ([]byte, error) {
	if in == "" {
		return nil, errors.New("needs a value")
	}
	var out []byte
	for s := in; s != ""; {
		switch s[0] {
		case '"':
			end := strings.IndexByte(s[1:], '"')
			if end < 0 {
				return nil, fmt.Errorf("%q: a string without its closing quote", in)
			}
			out = append(out, s[1:1+end]...)
			s = s[end+2:]
		case '\'':
			return nil, fmt.Errorf("%q: a pattern read from a file: give its bytes (0x…)", in)
		case '%':
			return nil, fmt.Errorf("%q: fio takes no formats (%%o) in buffer_pattern", in)
		default:
			b, rest, err := patternNumber(s)
			if err != nil {
				return nil, fmt.Errorf("%q: %v (fio: \"failed parsing\")", in, err)
			}
			out, s = append(out, b...), rest
		}
		if len(out) > workload.MaxPatternBytes {
			return nil, fmt.Errorf("%q: more than %d bytes (fio's limit)", in, workload.MaxPatternBytes)
		}
	}
	return out, nil
}

// patternNumber reads a number at the start of s as fio's parse_number.
func patternNumber(s string) ([]byte, string, error) {
	if len(s) > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X') && isHex(s[2]) {
		n := 2
		for n < len(s) && isHex(s[n]) {
			n++
		}
		digits := s[2:n]
		// "0xff0x14": the 0 before the next 0x is not a digit of this one.
		if n < len(s) && (s[n] == 'x' || s[n] == 'X') && digits[len(digits)-1] == '0' {
			digits, n = digits[:len(digits)-1], n-1
		}
		if len(digits)%2 == 1 {
			digits = "0" + digits // an odd count: the first digit alone
		}
		b, err := hex.DecodeString(digits)
		return b, s[n:], err
	}
	// A decimal number, up to a "0x" that may follow it.
	end := len(s)
	if i := strings.Index(strings.ToLower(s), "0x"); i >= 0 {
		end = i
	}
	n := 0
	if n < end && (s[n] == '-' || s[n] == '+') {
		n++
	}
	for n < end && s[n] >= '0' && s[n] <= '9' {
		n++
	}
	v, err := strconv.ParseInt(s[:n], 10, 64)
	if err != nil || v > math.MaxInt32 || v < math.MinInt32 {
		return nil, "", fmt.Errorf("%q is not a number fio takes (decimal in int's range, 0x…, or \"text\")", s)
	}
	if v == 0 {
		return []byte{0}, s[n:], nil
	}
	var b []byte
	for u := uint32(v); u != 0; u >>= 8 {
		b = append(b, byte(u))
	}
	return b, s[n:], nil
}

func isHex(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

// bufferContent is what the job's writes carry, after fio's fix-ups
// (init.c: fixup_options, setup_flags; io_u.c: fill_io_buffer, get_io_u):
// nil when it is fio's default (random, scrambled), which ioprobe's own
// stamped sectors stand for.
func (j *job) bufferContent(spec *workload.Spec, fail func(option, string) error) (*workload.BufferContent, error) {
	if !j.hasBuffers {
		return nil, nil
	}
	if j.dedupeGlobal {
		return nil, fail(j.dedupeGlobalAt, "fio then shares the dedupe working set among the jobs that set it; ioprobe keeps one per worker")
	}
	compress, zero, refill := j.compress, j.zero, j.refill
	if compress == 100 {
		zero, compress = true, 0
	} else if compress > 0 && !j.refillSet {
		refill = true
	}
	scramble := j.scramble && (j.scrambleSet || !(j.zero && j.zeroSet))
	b := &workload.BufferContent{Refill: refill, Scramble: scramble && !j.compressSet && !j.dedupeSet}
	if compress > 0 || j.dedupe > 0 {
		b.CompressPct, b.CompressChunk, b.DedupePct = int(compress), j.chunk, int(j.dedupe)
		if j.dedupe > 0 && j.workingMode {
			b.DedupeWorkingSetPct = int(j.workingSet)
			if b.DedupeWorkingSetPct == 0 {
				return nil, fail(j.modeAt, "working_set with dedupe_working_set_percentage=0: fio's working set would hold no page")
			}
		}
	}
	switch {
	case b.Compressing():
		b.Pattern = hex.EncodeToString(j.pattern)
	case len(j.pattern) > 0:
		b.Pattern = hex.EncodeToString(j.pattern)
	case zero:
		b.Zero = true
	}
	if b.Random() && !b.Refill && b.Scramble {
		return nil, nil // fio's default: ioprobe's stamped sectors
	}
	if spec.ReadPct < 100 && !b.Stamped() {
		// Not tied to an option line: one from the environment would
		// have its words left out of the note (j.note), and these are
		// ioprobe's, naming no value.
		j.notes = append(j.notes, "writes carry fio's buffer contents as fio writes them, without ioprobe's sector headers: a file ioprobe made stops being ioprobe's when it is written, and writing it again needs --allow-destructive (docs/fio.md, \"What writes carry\")")
	}
	return b, nil
}
