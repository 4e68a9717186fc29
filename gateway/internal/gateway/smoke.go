package gateway

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"time"

	"github.com/svcplatform/svc/gateway/internal/smoke"
)

// Smoke is `gateway smoke --base-url URL --credentials FILE`: the end-to-end
// check of a running platform (package smoke, CONTRACT §18). It fails when
// a step fails.
func Smoke(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	flags := flag.NewFlagSet("gateway smoke", flag.ContinueOnError)
	flags.SetOutput(stderr)
	base := flags.String("base-url", "", "the platform's public URL (default: the credentials file's base_url)")
	creds := flags.String("credentials", "", "the credentials file: the development seed's dev-credentials.json, or one of the same shape (docs/DECISIONS.md)")
	receiverAddr := flags.String("receiver-addr", "127.0.0.1:0", "where the webhook receiver listens")
	receiverURL := flags.String("receiver-url", "", "how the platform reaches the receiver (default: http://<receiver-addr>)")
	model := flags.String("model", "svc-builtin", "the model of the completion step")
	partner := flags.String("report-partner", "", "keep the result as a smoke run of this partner (partner/<id>/smoke_runs), with the owner's user token of the checked app; the owner must administer the partner's business")
	timeout := flags.Duration("step-timeout", 30*time.Second, "the longest a step may take")
	if err := flags.Parse(args); err != nil {
		return err
	}
	if *creds == "" || flags.NArg() > 0 {
		flags.Usage()
		return errors.New("smoke: --credentials <file> is required")
	}
	c, err := smoke.Load(*creds)
	if err != nil {
		return fmt.Errorf("smoke: %w", err)
	}
	if *base == "" {
		*base = c.BaseURL
	}
	if *base == "" {
		return errors.New("smoke: --base-url is required (the credentials file names none)")
	}
	failed := smoke.Run(ctx, smoke.Options{BaseURL: *base, Creds: c, ReceiverAddr: *receiverAddr,
		ReceiverURL: *receiverURL, Model: *model, StepTimeout: *timeout, Out: stdout, ReportPartner: *partner})
	if failed > 0 {
		return fmt.Errorf("smoke: %d steps failed", failed)
	}
	return nil
}
