package report

import (
	"encoding/json"
	"io"
)

// WriteJSON writes v as JSON indented by two spaces, with a final newline
// and without HTML escaping (messages and paths stay readable).
func WriteJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}
