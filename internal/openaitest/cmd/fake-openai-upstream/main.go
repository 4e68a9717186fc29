// Command fake-openai-upstream serves openaitest's fake OpenAI upstream on
// a loopback port for tests outside Go (tests/node-openai): it prints its
// base URL on the first line of its output and serves until it is
// stopped (SIGTERM, SIGINT) or its input closes.
//
//	fake-openai-upstream [reply]
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/svcplatform/svc/internal/openaitest"
)

func main() {
	reply := "Paris is sunny today."
	if len(os.Args) > 1 {
		reply = os.Args[1]
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	u := openaitest.Start(reply)
	defer u.Close()
	fmt.Println(u.BaseURL)
	// A test that dies without stopping it closes its input: go too.
	go func() {
		_, _ = io.Copy(io.Discard, os.Stdin)
		stop()
	}()
	<-ctx.Done()
}
