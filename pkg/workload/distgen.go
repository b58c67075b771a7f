package workload

import (
	"fmt"
	"math"
	"math/bits"
	"sync"
	"sync/atomic"
)

// goldenRatio64 is fio's __hash_u64 multiplier (hash.h). fio multiplies
// the rank zipf, pareto and normal draw by it, so that the hot blocks are
// spread over the region rather than packed at its start; ioprobe does
// the same, so a block's rank is the one fio gives it.
const goldenRatio64 = 0x61C8864680B583EB

// zipfMaxTerms caps the terms of zipf's zeta sum, as fio's ZIPF_MAX_GEN.
const zipfMaxTerms = 10_000_000

// distGen is the state of a non-uniform distribution on one target: what
// fio's zipf_state and gauss_state hold per file, and its zone tables
// (zone-dist.c). It is read-only once built; the random draws are the
// generator's.
type distGen struct {
	kind    string
	nranges uint64 // blocks of the smallest transfer in the region
	randOff uint64 // where rank 0 lands (fio's rand_off)
	// zipf: alpha, eta and zeta(n) of Gray et al.'s method, as fio's
	// zipf_next; half is 0.5^theta.
	alpha, eta, zetan, half float64
	// pareto: fio's pareto_pow, log(h)/log(1-h).
	pow float64
	// normal: fio's stddev, in blocks (an unsigned int in fio).
	stddev uint64
	// zones: for each direction the 100 slots of fio's zone_state_index,
	// each the first block and the number of blocks of its zone.
	zones [2][100]zoneSpan
}

type zoneSpan struct{ first, n uint64 }

// newDistGen builds the distribution d over a region of regionLen bytes
// drawn in blocks of minBlock bytes (fio's range_size: the smallest
// transfer; offsets are multiples of it), a zoned one's in blocks of
// minBlock too, which the caller sets to the alignment (fio's
// last_block: blockalign's blocks). off draws fio's random rand_off when
// the distribution has no center.
func newDistGen(d Distribution, regionLen, minBlock int64, off func() uint64) (*distGen, error) {
	g := &distGen{kind: d.Kind, nranges: uint64((regionLen + minBlock - 1) / minBlock)}
	n := g.nranges
	switch d.Kind {
	case DistZipf:
		g.zetan = zeta(n, d.Value)
		theta := d.Value
		zeta2 := 1 + math.Pow(0.5, theta)
		g.alpha = 1 / (1 - theta)
		g.eta = (1 - math.Pow(2/float64(n), 1-theta)) / (1 - zeta2/g.zetan)
		g.half = math.Pow(0.5, theta)
		g.randOff = off() & math.MaxUint32 // fio: a 32-bit draw
		if d.Center >= 0 {
			g.randOff = toUint64(float64(n) * d.Center)
		}
	case DistPareto:
		g.pow = math.Log(d.Value) / math.Log(1-d.Value)
		g.randOff = off() & math.MaxUint32
		if d.Center >= 0 {
			g.randOff = toUint64(float64(n) * d.Center)
		}
	case DistNormal:
		if d.Value != 0 {
			// fio: ceil(nranges * dev / 100), at most half the range,
			// in an unsigned int.
			g.stddev = uint64(uint32(math.Ceil(float64(n) * d.Value / 100)))
			g.stddev = min(g.stddev, n/2)
		}
		if d.Center >= 0 {
			// fio stores nranges * (center - 0.5) in an unsigned int: a
			// center below the middle wraps, as it does on x86-64.
			g.randOff = uint64(uint32(int64(float64(n) * (d.Center - 0.5))))
		}
	case DistZoned, DistZonedAbs:
		lastb := uint64(regionLen / minBlock) // fio's last_block
		for dir, zs := range d.Zones {
			slot := 0
			var sizePct int
			var sizeBytes int64
			for _, z := range zs {
				var span zoneSpan
				if d.Kind == DistZoned {
					span.first = uint64(sizePct) * lastb / 100
					span.n = lastb * uint64(z.SizePct) / 100
					sizePct += z.SizePct
				} else {
					first, end := uint64(sizeBytes/minBlock), uint64((sizeBytes+z.Bytes)/minBlock)
					if end > lastb {
						return nil, fmt.Errorf("random_distribution %s: the zones end at %d bytes, past the region's %d (fio: \"zoned_abs sizes exceed file size\")", d, sizeBytes+z.Bytes, regionLen)
					}
					span = zoneSpan{first: first, n: end - first}
					sizeBytes += z.Bytes
				}
				for range z.AccessPct {
					g.zones[dir][slot] = span
					slot++
				}
			}
		}
	default:
		return nil, fmt.Errorf("random_distribution %q: not one ioprobe draws", d.Kind)
	}
	return g, nil
}

// toUint64 is C's conversion of a non-negative double to an unsigned
// 64-bit integer (truncation), saturating where C's is undefined.
func toUint64(x float64) uint64 {
	switch {
	case !(x > 0):
		return 0
	case x >= 1<<64:
		return math.MaxUint64
	}
	return uint64(x)
}

// zetas caches zeta(n, theta): up to ten million powers, the same for
// every worker and lane of a run (fio computes it per job and file).
var zetas struct {
	sync.Mutex
	m map[[2]uint64]float64
}

// zeta is the sum of 1/i^theta for i = 1..min(n, zipfMaxTerms), summed in
// fio's order (zipf_update), so its rounding is fio's.
func zeta(n uint64, theta float64) float64 {
	key := [2]uint64{n, math.Float64bits(theta)}
	zetas.Lock()
	defer zetas.Unlock()
	if z, ok := zetas.m[key]; ok {
		return z
	}
	var z float64
	for i := range min(n, zipfMaxTerms) {
		z += math.Pow(1/float64(i+1), theta)
	}
	if zetas.m == nil || len(zetas.m) >= 64 {
		zetas.m = map[[2]uint64]float64{} // bounded: a long-lived daemon sees many sizes
	}
	zetas.m[key] = z
	return z
}

// unit draws a number in [0, 1] from the generator's stream, as fio's
// __rand / FRAND32_MAX.
func (g *Generator) unit() float64 {
	return float64(g.rand()>>32) / math.MaxUint32
}

// distBlock draws the block of a random I/O in direction dir with fio's
// non-uniform distributions (lib/zipf.c, lib/gauss.c, io_u.c).
func (g *Generator) distBlock(dir int) uint64 {
	d := g.dist
	n := d.nranges
	var v uint64
	switch d.kind {
	case DistZipf:
		u := g.unit()
		z := u * d.zetan
		switch {
		case z < 1:
			v = 1
		case z < 1+d.half:
			v = 2
		default:
			v = 1 + toUint64(float64(n)*math.Pow(d.eta*u-d.eta+1, d.alpha))
		}
		v--
	case DistPareto:
		v = toUint64(float64(n-1) * math.Pow(g.unit(), d.pow))
	case DistNormal:
		var sum uint64
		for range 12 {
			sum += g.below(n + 1)
		}
		sum = (sum + 11) / 12
		if d.stddev > 0 {
			// fio's gauss_dev: uniform in [-stddev/2, stddev/2), halved
			// until the sum stays in the range (unsigned arithmetic: a
			// sum below 0 wraps past the range and is halved too).
			r := g.rand() >> 32
			dev := int64(float64(d.stddev)*(float64(r)/(1<<32))) - int64(d.stddev/2)
			for uint64(dev)+sum >= n {
				dev /= 2
			}
			sum += uint64(dev)
		}
		v = sum
	default: // zoned, zoned_abs
		span := d.zones[dir&1][g.below(100)]
		return span.first + g.below(span.n)
	}
	return (v*goldenRatio64 + d.randOff) % n
}

// blockPerm visits every block of a region once per pass in a scrambled
// order, without a map: fio's random_generator=lfsr (lib/lfsr.c), which
// runs through a maximal-length sequence over the blocks and skips the
// values past the last. Here a counter runs through 2^k values and a
// bijection of k bits scrambles each; values of n or more are skipped.
// Every pass has the same order, as fio's (lfsr_reset with the same seed).
// The counter is atomic: a worker's lanes on a target share one pass.
type blockPerm struct {
	n, mask uint64
	k       uint
	key     [3]uint64
	ctr     atomic.Uint64
}

func newBlockPerm(n, seed uint64) *blockPerm {
	p := &blockPerm{n: n, k: uint(bits.Len64(n - 1))}
	p.mask = 1<<p.k - 1
	for i := range p.key {
		seed += 0x9e3779b97f4a7c15
		z := (seed ^ seed>>30) * 0xbf58476d1ce4e5b9
		p.key[i] = (z ^ z>>27) * 0x94d049bb133111eb
	}
	return p
}

// scramble is a bijection of k-bit values: an add, a multiply by an odd
// number and a right xorshift, each one to one modulo 2^k, three times.
func (p *blockPerm) scramble(x uint64) uint64 {
	s := p.k/2 + 1
	for _, key := range p.key {
		x = (x + key) & p.mask
		x = (x * (key | 1)) & p.mask
		x ^= x >> s
	}
	return x
}

// next returns the next block, and whether a new pass started with it.
func (p *blockPerm) next() (b uint64, newPass bool) {
	for {
		v := p.ctr.Add(1) - 1
		newPass = newPass || (v&p.mask == 0 && v > 0)
		if b = p.scramble(v & p.mask); b < p.n {
			return b, newPass
		}
	}
}

// drawBlocks sets up a non-uniform distribution or fio's lfsr for the
// random I/O of spec, on the cursor's target: one per worker and target,
// made by the first generator and shared by the worker's lanes there.
func (g *Generator) drawBlocks(spec *Spec, seed uint64) error {
	if spec.RandomDistribution == "" && spec.RandomGenerator != GeneratorLFSR {
		return nil
	}
	g.minBlock = spec.MinBlock()
	c := g.cursor
	switch {
	case spec.RandomDistribution != "":
		d, err := ParseDistribution(spec.RandomDistribution)
		if err != nil {
			return err
		}
		if d.Kind == DistZoned || d.Kind == DistZonedAbs {
			// fio's zones are in blocks of blockalign (last_block).
			g.minBlock = spec.Alignment()
		}
		if c.dist == nil {
			if c.dist, err = newDistGen(d, g.region.Len, g.minBlock, g.rand); err != nil {
				return err
			}
		}
		g.dist = c.dist
	default:
		n := uint64(g.region.Len / g.minBlock)
		if c.perm == nil || c.perm.n != n {
			c.perm = newBlockPerm(n, seed)
		}
		g.perm = c.perm
	}
	return nil
}

// placeDrawn places a random I/O at a block the distribution (or the lfsr
// pass) drew, with a transfer size that fits. A new lfsr pass starts as
// the random map's does (fio_file_reset): both sequential streams back at
// the region's start and, for a buffered run, the cache dropped.
func (g *Generator) placeDrawn(op *Op, dir int) {
	var b uint64
	if g.dist != nil {
		b = g.distBlock(dir)
	} else {
		var newPass bool
		if b, newPass = g.perm.next(); newPass {
			g.cursor.restart()
			op.DropCache = g.drop
		}
	}
	off := int64(b) * g.minBlock
	g.fit(op, off)
	op.Offset = g.region.Start + off
	if g.follow {
		g.cursor.follow(dir, off+op.Len)
	}
}
