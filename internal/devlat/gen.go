package devlat

// The BPF objects (devlat_bpfel.o) and their Go loader (devlat_bpfel.go)
// are generated from bpf/ by `make bpf` (clang 14, Debian's) and
// committed, so that a build needs no C compiler; bpf/sources.sum names
// the sources they were built from. TestObjectsRecordTheirSource fails
// when a source changed since, and TestObjectsAreFromTheSource when the
// objects differ from what the sources build.
//go:generate go tool bpf2go -cc clang-14 -strip llvm-strip-14 -cflags "-O2 -g -Wall -Werror" -target bpfel -go-package devlat -output-stem devlat devlat bpf/devlat.c
//go:generate sh -c "sha256sum bpf/devlat.c bpf/kernel.h > bpf/sources.sum"
