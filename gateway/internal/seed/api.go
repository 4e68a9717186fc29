package seed

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/svcplatform/svc/gateway/internal/auth"
)

// API calls a plugin method by procedure as caller, request and answer in
// protojson, with the caller's access checks (dispatch.Dispatcher.CallJSON);
// ok is false when no loaded plugin serves the procedure. What the seed
// makes once plugins serve (the sponsored item, the lenses) goes through
// it, the way a person's client would.
type API interface {
	CallJSON(ctx context.Context, caller *auth.Principal, procedure string, req []byte) (res []byte, ok bool, err error)
}

// callAs calls procedure as who with req marshalled to JSON, and reads the
// answer into out when out is not nil; ok is false when no plugin serves
// the procedure (then err is nil).
func callAs(ctx context.Context, api API, who *auth.Principal, procedure string, req, out any) (ok bool, err error) {
	body, err := json.Marshal(req)
	if err != nil {
		return false, err
	}
	res, ok, err := api.CallJSON(ctx, who, procedure, body)
	if !ok || err != nil {
		if err != nil {
			err = fmt.Errorf("%s: %w", procedure, err)
		}
		return ok, err
	}
	if out != nil {
		if err := json.Unmarshal(res, out); err != nil {
			return true, fmt.Errorf("%s: %w", procedure, err)
		}
	}
	return true, nil
}
