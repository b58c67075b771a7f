package result

import (
	"encoding/json"
	"reflect"

	"github.com/ioprobe/ioprobe/internal/strictjson"
)

// resultFields is a Result's fields without its UnmarshalJSON (which
// checks its sums): what the key check walks.
type resultFields Result

// keyChecker checks a document's keys as written; a type that decodes
// itself is checked as its wire form: a histogram's sparse form, a
// result's fields.
var keyChecker = strictjson.Checker{As: map[reflect.Type]reflect.Type{
	reflect.TypeFor[Histogram](): reflect.TypeFor[histogramJSON](),
	reflect.TypeFor[Result]():    reflect.TypeFor[resultFields](),
}}

// CheckKeys refuses what decoding data into v would take silently: a
// key that matches a field only when its case is ignored (encoding/json
// would read "Hostname" as hostname, and "Summary" beside "summary" as
// whichever comes last) and a key an object gives twice. Keys no field
// has are left alone: a result written by a later ioprobe may carry
// fields this one does not know.
func CheckKeys(data []byte, v any) error { return keyChecker.Check(data, v, "") }

// decodeDoc decodes a document into v once its keys passed CheckKeys.
func decodeDoc(data []byte, v any) error {
	if err := CheckKeys(data, v); err != nil {
		return err
	}
	return json.Unmarshal(data, v)
}
