package result

import (
	"encoding/json"
	"fmt"
	"reflect"

	"github.com/ioprobe/ioprobe/internal/strictjson"
)

// resultFields is a Result's fields without its UnmarshalJSON (which
// checks its sums): what the key check walks.
type resultFields Result

// MaxHistograms bounds the latency histograms one document may hold. A
// histogram is read into its dense form, NumBuckets counters (34 KiB),
// from as little as 90 bytes of JSON: without a bound, a 50 MB document
// of empty histograms would take 20 GB. 16384 of them take 560 MiB; a
// run has 2 to 7 of them (up to 4 more per job and per clone of a fio
// job file), so a fleet suite of 21 points on 100 hosts holds about
// 15000.
const MaxHistograms = 1 << 14

// MaxDecodedBytes bounds the memory a document takes once decoded,
// histograms aside (MaxHistograms bounds them): a list of 3-byte empty
// objects is a list of 900-byte jobs or 1.2 KiB results, so a 30 MB
// document took 19 GiB. A fleet suite of 21 points on 100 hosts, each
// with a 10-minute run's intervals, takes about 30 MiB.
const MaxDecodedBytes = 256 << 20

// keyChecker checks a document's keys as written; a type that decodes
// itself is checked as its wire form: a histogram's sparse form, a
// result's fields. It counts the histograms (MaxHistograms) and the rest
// (MaxDecodedBytes).
var keyChecker = strictjson.Checker{
	MostBytes: MaxDecodedBytes,
	As: map[reflect.Type]reflect.Type{
		reflect.TypeFor[Histogram](): reflect.TypeFor[histogramJSON](),
		reflect.TypeFor[Result]():    reflect.TypeFor[resultFields](),
	},
	Most: map[reflect.Type]strictjson.Bound{
		reflect.TypeFor[Histogram](): {Most: MaxHistograms, What: fmt.Sprintf("latency histograms (each takes %d KiB of memory once read)", NumBuckets*8/1024)},
	},
}

// CheckKeys refuses what decoding data into v would take silently: a
// key that matches a field only when its case is ignored (encoding/json
// would read "Hostname" as hostname, and "Summary" beside "summary" as
// whichever comes last) and a key an object gives twice. Keys no field
// has are left alone: a result written by a later ioprobe may carry
// fields this one does not know. It also refuses a document of more than
// MaxHistograms histograms, or that would take more than MaxDecodedBytes.
func CheckKeys(data []byte, v any) error { return keyChecker.Check(data, v, "") }

// DecodeBudget is what the documents decoded against it took of
// MaxHistograms and MaxDecodedBytes: the files of one report or compare
// share the bounds, so that a hundred files, each within them, cannot
// take a hundred times them between them.
type DecodeBudget struct{ spent strictjson.Spent }

// decodeDoc decodes a document into v once its keys passed CheckKeys,
// counting it in b.
func decodeDoc(data []byte, v any, b *DecodeBudget) error {
	if err := keyChecker.CheckShared(data, v, "", &b.spent); err != nil {
		return err
	}
	return json.Unmarshal(data, v)
}
