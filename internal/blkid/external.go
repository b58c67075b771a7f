package blkid

import (
	"bufio"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
)

// A second opinion: util-linux's own tools, asked about the device where
// they are installed (external_linux.go runs them). Their answers are
// parsed here, apart from running them, so fixtures test the parsing.

// ParseWipefsJSON parses `wipefs --no-act --json DEV`: every signature
// libblkid finds, each with its offset (wipefs hides each one it finds and
// probes again, so it lists backups and nested labels too). Empty output
// means nothing was found.
func ParseWipefsJSON(out []byte) ([]Signature, error) {
	if strings.TrimSpace(string(out)) == "" {
		return nil, nil
	}
	var w struct {
		Signatures []struct {
			Offset string `json:"offset"`
			Type   string `json:"type"`
		} `json:"signatures"`
	}
	if err := json.Unmarshal(out, &w); err != nil {
		return nil, fmt.Errorf("wipefs's answer is not the JSON it documents: %w", err)
	}
	sigs := make([]Signature, 0, len(w.Signatures))
	for _, s := range w.Signatures {
		off, err := strconv.ParseInt(s.Offset, 0, 64)
		if err != nil || s.Type == "" {
			return nil, fmt.Errorf("wipefs lists a signature it does not describe: type %q, offset %q", s.Type, s.Offset)
		}
		sigs = append(sigs, external(s.Type, "", off, "wipefs"))
	}
	return sigs, nil
}

// ParseBlkidExport parses `blkid -p -o export DEV` (its low-level probe,
// no cache) with the exit status it ended with: 0 found something (TYPE=
// and USAGE= for a superblock, PTTYPE= for a partition table), 2 found
// nothing, 8 found several things that contradict each other ("ambivalent
// result"), which is a refusal too. Any other status is an error. blkid
// prints no offsets; where it gives SBMAGIC_OFFSET or PTMAGIC_OFFSET they
// are used, elsewhere the offset is -1.
//
// On a partition blkid -p also describes the partition's own entry in its
// disk's table (PART_ENTRY_SCHEME=dos, PART_ENTRY_TYPE=0x83, ...) and
// exits 0 even when the partition holds nothing: that is where the
// partition is, not something on it, so an answer of only DEVNAME and
// PART_ENTRY_* keys is "nothing found".
func ParseBlkidExport(out []byte, status int) ([]Signature, error) {
	switch status {
	case 0:
	case 2:
		return nil, nil
	case 8:
		return []Signature{{Type: "ambivalent", Usage: Other, Offset: -1,
			What: "several signatures that contradict each other (blkid -p: ambivalent result)"}}, nil
	default:
		return nil, fmt.Errorf("blkid -p failed (exit status %d): %s", status, strings.TrimSpace(string(out)))
	}
	kv := map[string]string{}
	sc := bufio.NewScanner(strings.NewReader(string(out)))
	for sc.Scan() {
		if k, v, ok := strings.Cut(sc.Text(), "="); ok {
			kv[k] = v
		}
	}
	var sigs []Signature
	for _, p := range [][3]string{{"TYPE", "SBMAGIC_OFFSET", kv["USAGE"]}, {"PTTYPE", "PTMAGIC_OFFSET", string(PartitionTable)}} {
		typ := kv[p[0]]
		if typ == "" {
			continue
		}
		off, err := strconv.ParseInt(kv[p[1]], 0, 64)
		if err != nil {
			off = -1
		}
		sigs = append(sigs, external(typ, Usage(p[2]), off, "blkid -p"))
	}
	if len(sigs) == 0 && !onlyPartitionEntry(kv) {
		return nil, fmt.Errorf("blkid -p says it found something but names no TYPE or PTTYPE: %q", strings.TrimSpace(string(out)))
	}
	return sigs, nil
}

// onlyPartitionEntry says whether blkid's answer describes no more than
// the device's name and its partition entry.
func onlyPartitionEntry(kv map[string]string) bool {
	entry := false
	for k := range kv {
		switch {
		case strings.HasPrefix(k, "PART_ENTRY_"):
			entry = true
		case k != "DEVNAME":
			return false
		}
	}
	return entry
}

func external(typ string, usage Usage, off int64, tool string) Signature {
	return Signature{Type: typ, Usage: usage, Offset: off,
		What: fmt.Sprintf("a %s signature that util-linux's %s recognises and ioprobe's own probes do not", typ, tool)}
}

// Missing returns what others found that mine lacks: a signature counts
// as known when mine has its type at its offset, or anywhere when the
// other tool gave no offset. What stays is unique by type and offset.
func Missing(mine, others []Signature) []Signature {
	at := map[string]bool{}
	typ := map[string]bool{}
	for _, s := range mine {
		at[fmt.Sprint(s.Type, "@", s.Offset)] = true
		typ[s.Type] = true
	}
	var out []Signature
	for _, s := range others {
		k := fmt.Sprint(s.Type, "@", s.Offset)
		if at[k] || (s.Offset < 0 && typ[s.Type]) {
			continue
		}
		at[k], typ[s.Type] = true, true
		out = append(out, s)
	}
	return out
}
