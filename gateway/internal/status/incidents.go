package status

import (
	"context"
	"errors"
	"slices"
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/svcplatform/svc/gateway/internal/apierr"
	"github.com/svcplatform/svc/gateway/internal/coredb"
)

// The incident statuses, as Statuspage names them.
const (
	Investigating = "investigating"
	Identified    = "identified"
	Monitoring    = "monitoring"
	Resolved      = "resolved"
)

// transitions is the incident state machine: the statuses an update may
// give an incident in each status. An open incident may move to any open
// status (a fix that did not hold goes back to investigating) or be
// resolved; a resolved incident is closed (a recurrence is a new incident,
// as Statuspage's postmortem flow has it).
var transitions = map[string][]string{
	Investigating: {Investigating, Identified, Monitoring, Resolved},
	Identified:    {Investigating, Identified, Monitoring, Resolved},
	Monitoring:    {Investigating, Identified, Monitoring, Resolved},
	Resolved:      {},
}

// CanMove says whether an update may move an incident from one status to
// another.
func CanMove(from, to string) bool { return slices.Contains(transitions[from], to) }

// Incident is an incident as the status page shows it.
type Incident struct {
	ID         string     `json:"id"`
	Title      string     `json:"title"`
	Status     string     `json:"status"`
	Components []string   `json:"components"`
	Updates    []Update   `json:"updates"`
	Started    time.Time  `json:"started_time"`
	Resolved   *time.Time `json:"resolved_time"`
}

// Update is one of an incident's updates, newest first.
type Update struct {
	At     time.Time `json:"at"`
	Status string    `json:"status"`
	Body   string    `json:"body"`
}

// NewIncident is the body of POST /api/admin/incidents.
type NewIncident struct {
	Title      string   `json:"title"`
	Status     string   `json:"status"`
	Components []string `json:"components"`
	Body       string   `json:"body"`
}

// NewUpdate is the body of POST /api/admin/incidents/<id>/updates.
type NewUpdate struct {
	Status string `json:"status"`
	Body   string `json:"body"`
}

const maxBody = 5000

// Incidents stores the operator's incidents.
type Incidents struct {
	pool *pgxpool.Pool
	// known lists the components an incident may name.
	known func(ctx context.Context) []string
}

// NewIncidents returns the incident store over pool; known lists the
// component names an incident may name.
func NewIncidents(pool *pgxpool.Pool, known func(ctx context.Context) []string) *Incidents {
	return &Incidents{pool: pool, known: known}
}

// Create opens an incident with its first update (its body, when given).
func (s *Incidents) Create(ctx context.Context, in NewIncident) (string, error) {
	if in.Status == "" {
		in.Status = Investigating
	}
	switch {
	case in.Title == "" || utf8.RuneCountInString(in.Title) > 200:
		return "", apierr.Invalid("title", "title must have 1 to 200 characters.")
	case !slices.Contains(transitions[Investigating], in.Status):
		return "", apierr.Invalid("status", "status must be investigating, identified, monitoring or resolved.")
	case utf8.RuneCountInString(in.Body) > maxBody:
		return "", apierr.Invalid("body", "body must have at most %d characters.", maxBody)
	}
	known := s.known(ctx)
	for _, c := range in.Components {
		if !slices.Contains(known, c) {
			return "", apierr.Invalid("components", "%q is not a component of the status page.", c)
		}
	}
	if in.Components == nil {
		in.Components = []string{}
	}
	var id int64
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		q := coredb.New(tx)
		row, err := q.CreateIncident(ctx, coredb.CreateIncidentParams{Title: in.Title, Status: in.Status, Components: in.Components})
		if err != nil {
			return err
		}
		id = row.ID
		return q.AddIncidentUpdate(ctx, coredb.AddIncidentUpdateParams{IncidentID: id, Status: in.Status, Body: in.Body})
	})
	if err != nil {
		return "", err
	}
	return strconv.FormatInt(id, 10), nil
}

// AddUpdate posts an update on incident id, moving it to the update's
// status (the state machine above).
func (s *Incidents) AddUpdate(ctx context.Context, id string, in NewUpdate) error {
	n, err := strconv.ParseInt(id, 10, 64)
	if err != nil || n <= 0 {
		return apierr.NotFound("Incident " + id)
	}
	switch {
	case !slices.Contains(transitions[Investigating], in.Status):
		return apierr.Invalid("status", "status must be investigating, identified, monitoring or resolved.")
	case in.Body == "" || utf8.RuneCountInString(in.Body) > maxBody:
		return apierr.Invalid("body", "body must have 1 to %d characters.", maxBody)
	}
	return pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		q := coredb.New(tx)
		cur, err := q.GetIncidentForUpdate(ctx, n)
		if errors.Is(err, pgx.ErrNoRows) {
			return apierr.NotFound("Incident " + id)
		}
		if err != nil {
			return err
		}
		if !CanMove(cur.Status, in.Status) {
			return apierr.Invalid("status", "the incident is %s: it takes no more updates; open a new incident.", cur.Status)
		}
		if err := q.SetIncidentStatus(ctx, coredb.SetIncidentStatusParams{ID: n, Status: in.Status}); err != nil {
			return err
		}
		return q.AddIncidentUpdate(ctx, coredb.AddIncidentUpdateParams{IncidentID: n, Status: in.Status, Body: in.Body})
	})
}

// Recent lists the open incidents and those resolved in the last 14 days,
// newest first, each with its updates, newest first.
func (s *Incidents) Recent(ctx context.Context) ([]Incident, error) {
	q := coredb.New(s.pool)
	rows, err := q.RecentIncidents(ctx, pgtype.Timestamptz{Time: time.Now().Add(-14 * 24 * time.Hour), Valid: true})
	if err != nil {
		return nil, err
	}
	out := make([]Incident, 0, len(rows))
	ids := make([]int64, 0, len(rows))
	at := map[int64]int{}
	for _, r := range rows {
		in := Incident{ID: strconv.FormatInt(r.ID, 10), Title: r.Title, Status: r.Status,
			Components: r.Components, Updates: []Update{}, Started: r.StartedAt.Time.UTC()}
		if r.ResolvedAt.Valid {
			t := r.ResolvedAt.Time.UTC()
			in.Resolved = &t
		}
		if in.Components == nil {
			in.Components = []string{}
		}
		at[r.ID] = len(out)
		ids = append(ids, r.ID)
		out = append(out, in)
	}
	if len(ids) == 0 {
		return out, nil
	}
	updates, err := q.IncidentUpdates(ctx, ids)
	if err != nil {
		return nil, err
	}
	for _, u := range updates {
		i := at[u.IncidentID]
		out[i].Updates = append(out[i].Updates, Update{At: u.At.Time.UTC(), Status: u.Status, Body: u.Body})
	}
	return out, nil
}
