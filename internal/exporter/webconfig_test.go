package exporter

import (
	"bytes"
	"errors"
	"log/slog"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestWebConfigErrorKeepsLinesOnly: yaml.v2's errors quote the file; what
// ioprobe says of them keeps the line numbers only. Other errors are kept.
func TestWebConfigErrorKeepsLinesOnly(t *testing.T) {
	for in, want := range map[string]string{
		"yaml: unmarshal errors:\n  line 1: field root:$6$s3cret:19000 not found in type web.Config\n  line 2: field bin:*:1 not found in type web.Config": "yaml: line 1, line 2: not an exporter-toolkit web configuration: an unknown key, or a value of the wrong type (the file's text is not shown)",
		"yaml: unmarshal errors:\n  line 3: cannot unmarshal !!str `s3cret` into web.Config":                                                               "yaml: line 3: not an exporter-toolkit web configuration: an unknown key, or a value of the wrong type (the file's text is not shown)",
		"yaml: line 4: mapping values are not allowed in this context":                                                                                     "yaml: line 4: not valid YAML (the file's text is not shown)",
		"yaml: unknown anchor 's3cret' referenced":                                                                                                         "yaml: not valid YAML (the file's text is not shown)",
		"crypto/bcrypt: hashedSecret too short to be a bcrypted password":                                                                                  "crypto/bcrypt: hashedSecret too short to be a bcrypted password",
	} {
		require.Equal(t, want, webConfigError(errors.New(in)).Error(), in)
	}
	require.NoError(t, webConfigError(nil))

	var log bytes.Buffer
	l := slog.New(webConfigLog{slog.NewTextHandler(&log, nil)}).With("component", "web")
	l.Error("Unable to parse configuration", "err", "yaml: unmarshal errors:\n  line 1: field s3cret not found in type web.Config")
	require.NotContains(t, log.String(), "s3cret")
	require.Contains(t, log.String(), "component=web")
	require.Contains(t, log.String(), `err="yaml: line 1: not an exporter-toolkit web configuration`)
}
