package blkid

// swapProbes are swap areas and hibernation images, at the end of the
// first page for every page size Linux has used (4 to 64 KiB).
//
// Formats: the kernel's include/linux/swap.h (union swap_header: the magic
// in the last 10 bytes of the first page) and kernel/power/swap.c (the
// hibernation image rewrites that magic: S1SUSPEND, and the older
// S2SUSPEND, ULSUSPEND, LINHIB0001); TuxOnIce's magic at the start of the
// device from its patch set.
func swapProbes() []Probe {
	const tuxOnIce = "\xed\xc3\x02\xe9\x98\x56\xe5\x0c"
	var swap, susp []Magic
	susp = append(susp, Magic{Magic: tuxOnIce})
	for _, page := range swapPageSizes {
		for _, m := range []string{"SWAP-SPACE", "SWAPSPACE2"} {
			swap = append(swap, Magic{Magic: m, SBOff: page - 10})
		}
		for _, m := range []string{"S1SUSPEND", "S2SUSPEND", "ULSUSPEND", "LINHIB0001"} {
			susp = append(susp, Magic{Magic: m, SBOff: page - 10})
		}
	}
	return []Probe{
		MagicProbe("swsuspend", Other, "a hibernation image (swsuspend)", susp, nil),
		// A TuxOnIce image keeps the swap magic: libblkid calls it
		// swsuspend, and wipefs lists the swap signature under it too.
		MagicProbe("swap", Other, "a swap area", swap, nil),
	}
}

var swapPageSizes = []int64{4 << 10, 8 << 10, 16 << 10, 32 << 10, 64 << 10}
