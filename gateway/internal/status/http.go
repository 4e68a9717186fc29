package status

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/jackc/pgx/v5/pgtype"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/svcplatform/svc/gateway/internal/apierr"
	"github.com/svcplatform/svc/gateway/internal/auth"
	"github.com/svcplatform/svc/gateway/internal/coredb"
	"github.com/svcplatform/svc/gateway/internal/sla"
	"github.com/svcplatform/svc/gateway/internal/web/pages"
)

// The paths served (CONTRACT §18).
const (
	PathStatus    = "/api/v1/platform/status"
	PathSLA       = "/api/v1/platform/sla"
	PathPage      = "/status"
	PathIncidents = "/api/admin/incidents"
)

// Service serves the status, the SLA, the page and the incident API.
type Service struct {
	pool      *pgxpool.Pool
	probes    *Prober
	incidents *Incidents

	// The SLA's answer is read from the database at most every slaTTL:
	// its 30-day window sums up to 43,200 rows per surface.
	slaMu   sync.Mutex
	slaBody []byte
	slaAt   time.Time
}

// slaTTL is how long an SLA answer is reused.
const slaTTL = 10 * time.Second

// NewService returns the service over a prober.
func NewService(pool *pgxpool.Pool, probes *Prober) *Service {
	s := &Service{pool: pool, probes: probes}
	s.incidents = NewIncidents(pool, func(ctx context.Context) []string {
		var names []string
		for _, c := range probes.Current(ctx) {
			names = append(names, c.Name)
		}
		return names
	})
	return s
}

// Incidents is the incident store.
func (s *Service) Incidents() *Incidents { return s.incidents }

// Register adds the paths to a server.
func (s *Service) Register(handle func(pattern string, h http.Handler)) {
	handle("GET "+PathStatus, http.HandlerFunc(s.status))
	handle("GET "+PathSLA, http.HandlerFunc(s.sla))
	handle("GET "+PathPage, http.HandlerFunc(s.page))
	handle("POST "+PathIncidents, auth.AdminOnly(http.HandlerFunc(s.createIncident)))
	handle("POST "+PathIncidents+"/{id}/updates", auth.AdminOnly(http.HandlerFunc(s.addUpdate)))
}

// Report is the body of GET /api/v1/platform/status.
type Report struct {
	Status     Level       `json:"status"`
	Components []Component `json:"components"`
	Incidents  []Incident  `json:"incidents"`
}

// Report probes (or reuses the last round) and lists the incidents.
func (s *Service) Report(ctx context.Context) Report {
	cs := s.probes.Current(ctx)
	in, err := s.incidents.Recent(ctx)
	if err != nil {
		// The database is down: the components say so; the incidents
		// cannot be read.
		in = []Incident{}
	}
	return Report{Status: Overall(cs), Components: cs, Incidents: in}
}

func (s *Service) status(w http.ResponseWriter, r *http.Request) {
	apierr.WriteJSON(w, http.StatusOK, s.Report(r.Context()), apierr.CacheControl("no-store"))
}

// slaTarget is one surface of GET /api/v1/platform/sla.
type slaTarget struct {
	Surface            string                `json:"surface"`
	AvailabilityTarget float64               `json:"availability_target"`
	LatencyP99MsTarget float64               `json:"latency_p99_ms_target"`
	Windows            map[string]sla.Window `json:"windows"`
}

func (s *Service) sla(w http.ResponseWriter, r *http.Request) {
	body, err := s.slaAnswer(r.Context())
	if err != nil {
		apierr.Write(w, r, apierr.Unavailable("The service levels"))
		slog.WarnContext(r.Context(), "sla: cannot read the windows", "error", err)
		return
	}
	apierr.WriteJSONBody(w, http.StatusOK, body, apierr.CacheControl("no-store"))
}

func (s *Service) slaAnswer(ctx context.Context) ([]byte, error) {
	s.slaMu.Lock()
	defer s.slaMu.Unlock()
	if s.slaBody != nil && time.Since(s.slaAt) < slaTTL {
		return s.slaBody, nil
	}
	now := time.Now()
	targets := make([]slaTarget, 0, 4)
	for _, sf := range sla.Surfaces() {
		t := sla.Targets[sf]
		targets = append(targets, slaTarget{Surface: sf.String(), AvailabilityTarget: t.Availability,
			LatencyP99MsTarget: t.LatencyP99Ms, Windows: map[string]sla.Window{}})
	}
	for _, win := range sla.Windows {
		m, err := sla.Since(ctx, s.pool, now.Add(-win.Span))
		if err != nil {
			return nil, err
		}
		for i, sf := range sla.Surfaces() {
			targets[i].Windows[win.Name] = m[sf]
		}
	}
	body, err := json.Marshal(map[string]any{"targets": targets})
	if err != nil {
		return nil, err
	}
	s.slaBody, s.slaAt = body, now
	return body, nil
}

// historyDays is how many days of bars the page shows.
const historyDays = 90

func (s *Service) page(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	rep := s.Report(ctx)
	days := map[string]map[string]int16{}
	today := time.Now().UTC().Truncate(24 * time.Hour)
	rows, err := coredb.New(s.pool).StatusDays(ctx, pgtype.Date{Time: today.AddDate(0, 0, -(historyDays - 1)), Valid: true})
	if err == nil {
		for _, row := range rows {
			if days[row.Component] == nil {
				days[row.Component] = map[string]int16{}
			}
			days[row.Component][row.Day.Time.Format(time.DateOnly)] = row.Worst
		}
	}
	d := pages.Status{Overall: rep.Status.String(), OverallText: overallText[rep.Status]}
	for _, c := range rep.Components {
		pc := pages.StatusComponent{Name: c.Name, Status: c.Status.String(), Checked: c.Checked.Format(time.RFC3339)}
		for i := historyDays - 1; i >= 0; i-- {
			day := today.AddDate(0, 0, -i).Format(time.DateOnly)
			st := "no data"
			if l, ok := days[c.Name][day]; ok && l >= 0 && int(l) < len(levelNames) {
				st = Level(l).String()
			}
			pc.Days = append(pc.Days, pages.StatusDay{Date: day, Status: st})
		}
		d.Components = append(d.Components, pc)
	}
	for _, in := range rep.Incidents {
		pi := pages.StatusIncident{Title: in.Title, Status: in.Status, Started: in.Started.Format(time.RFC3339),
			Components: in.Components}
		if in.Resolved != nil {
			pi.Resolved = in.Resolved.Format(time.RFC3339)
		}
		for _, u := range in.Updates {
			pi.Updates = append(pi.Updates, pages.StatusUpdate{At: u.At.Format(time.RFC3339), Status: u.Status, Body: u.Body})
		}
		d.Incidents = append(d.Incidents, pi)
	}
	if err := pages.RenderStatus(w, d); err != nil {
		slog.ErrorContext(ctx, "render status page", "error", err)
	}
}

var overallText = map[Level]string{
	Operational:   "All systems operational",
	Degraded:      "Degraded performance",
	PartialOutage: "Partial outage",
	MajorOutage:   "Major outage",
}

// maxRequestBody bounds an incident request's body.
const maxRequestBody = 64 << 10

func decodeBody(r *http.Request, v any) error {
	dec := json.NewDecoder(io.LimitReader(r.Body, maxRequestBody))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return apierr.Invalid("", "The body must be a JSON object with the documented fields: %v", err)
	}
	return nil
}

func (s *Service) createIncident(w http.ResponseWriter, r *http.Request) {
	var in NewIncident
	if err := decodeBody(r, &in); err != nil {
		apierr.Write(w, r, err)
		return
	}
	id, err := s.incidents.Create(r.Context(), in)
	if err != nil {
		apierr.Write(w, r, err)
		return
	}
	s.writeIncident(w, r, id)
}

func (s *Service) addUpdate(w http.ResponseWriter, r *http.Request) {
	var in NewUpdate
	if err := decodeBody(r, &in); err != nil {
		apierr.Write(w, r, err)
		return
	}
	id := r.PathValue("id")
	if err := s.incidents.AddUpdate(r.Context(), id, in); err != nil {
		apierr.Write(w, r, err)
		return
	}
	s.writeIncident(w, r, id)
}

// writeIncident answers the incident as the status page shows it.
func (s *Service) writeIncident(w http.ResponseWriter, r *http.Request, id string) {
	in, err := s.incidents.Recent(r.Context())
	if err != nil {
		apierr.Write(w, r, err)
		return
	}
	for _, i := range in {
		if i.ID == id {
			apierr.WriteJSON(w, http.StatusOK, i)
			return
		}
	}
	apierr.Write(w, r, errors.New("the incident written is not among the recent ones"))
}
