package hostfs

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestParseScheduler(t *testing.T) {
	for in, want := range map[string]string{
		"none [mq-deadline] kyber bfq\n": "mq-deadline",
		"[none] mq-deadline kyber bfq":   "none",
		"mq-deadline kyber [bfq]":        "bfq",
		"none\n":                         "none", // a queue that offers no other
		"":                               "",
		"none mq-deadline":               "", // no bracket: not known which is active
	} {
		current, _, _ := ParseScheduler(in)
		require.Equal(t, want, current, "%q", in)
	}
}
