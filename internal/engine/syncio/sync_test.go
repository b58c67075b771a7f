package syncio_test

import (
	"testing"

	"github.com/ioprobe/ioprobe/internal/engine"
	"github.com/ioprobe/ioprobe/internal/engine/enginetest"
	"github.com/ioprobe/ioprobe/internal/engine/syncio"
)

func TestConformance(t *testing.T) {
	enginetest.Run(t, func() engine.Engine { return syncio.New() })
}
