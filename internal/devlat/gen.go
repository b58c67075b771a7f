package devlat

// The BPF objects (devlat_bpfel.o) and their Go loader (devlat_bpfel.go)
// are generated from bpf/ by `make bpf` (clang) and committed, so that a
// build needs no C compiler; TestObjectsAreFromTheSource fails when they
// are stale.
//go:generate go tool bpf2go -cc clang-14 -strip llvm-strip-14 -cflags "-O2 -g -Wall -Werror -Wno-missing-declarations" -target bpfel -go-package devlat -output-stem devlat devlat bpf/devlat.c
