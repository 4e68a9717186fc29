package shardcheck_test

import (
	"testing"

	"github.com/svcplatform/svc/internal/pgtest"
)

func TestMain(m *testing.M) { pgtest.Main(m) }
