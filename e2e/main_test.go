package e2e

import (
	"testing"

	"github.com/svcplatform/svc/internal/pgtest"
)

func TestMain(m *testing.M) { pgtest.Main(m) }
