package uring_test

import (
	"testing"

	"github.com/ioprobe/ioprobe/internal/engine"
	"github.com/ioprobe/ioprobe/internal/engine/enginetest"
	"github.com/ioprobe/ioprobe/internal/engine/uring"
)

func TestConformance(t *testing.T) {
	enginetest.Run(t, func() engine.Engine { return uring.New() })
}
