// Package testjson reads JSON documents the way tests compare them with
// other tools' output: the keys of an object in the order the document has
// them (encoding/json's maps forget it).
package testjson

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
)

// Keys returns the keys of the object at path in data, in the document's
// order. Each path element is an object's key or, in an array, an
// element's index.
func Keys(data []byte, path ...string) ([]string, error) {
	if !json.Valid(data) {
		return nil, errors.New("not a JSON document")
	}
	raw := json.RawMessage(data)
	for _, p := range path {
		var m map[string]json.RawMessage
		if json.Unmarshal(raw, &m) == nil {
			raw = m[p]
		} else {
			var a []json.RawMessage
			if err := json.Unmarshal(raw, &a); err != nil {
				return nil, fmt.Errorf("at %q of %v: neither an object nor an array", p, path)
			}
			i, err := strconv.Atoi(p)
			if err != nil || i < 0 || i >= len(a) {
				return nil, fmt.Errorf("no element %q of %v (%d elements)", p, path, len(a))
			}
			raw = a[i]
		}
		if raw == nil {
			return nil, fmt.Errorf("no %q in %v", p, path)
		}
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	if tok != json.Delim('{') {
		return nil, fmt.Errorf("%v is not an object", path)
	}
	var keys []string
	for dec.More() {
		k, err := dec.Token()
		if err != nil {
			return nil, err
		}
		keys = append(keys, k.(string))
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			return nil, err
		}
	}
	return keys, nil
}
