package bench

import (
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strings"

	"google.golang.org/protobuf/encoding/protowire"
)

// Stage names a part of a request's path and the functions that are it.
// A CPU sample belongs to the stage of the innermost frame of its stack
// that matches one: the SQL a handler runs counts as SQL, not as the
// handler.
type Stage struct {
	Name  string
	Match *regexp.Regexp
}

// GatewayStages are the stages of a Graph request in the gateway, in the
// order of the path (issue 15: authenticate, route, bind, validate,
// authorize, hop, render, write).
var GatewayStages = []Stage{
	{"read the request", regexp.MustCompile(`^net/http\.\(\*conn\)\.readRequest`)},
	{"authenticate", regexp.MustCompile(`^github\.com/svcplatform/svc/gateway/internal/(auth|identity)\.`)},
	{"route", regexp.MustCompile(`^github\.com/svcplatform/svc/gateway/internal/graph\.(\(\*nodeRouter\)\.match|ParseNode)`)},
	{"bind", regexp.MustCompile(`^github\.com/svcplatform/svc/gateway/internal/graph\.(bind|applyLimit|decodeObject|readJSONBody)`)},
	{"validate", regexp.MustCompile(`^buf\.build/go/protovalidate`)},
	{"hop", regexp.MustCompile(`^github\.com/svcplatform/svc/(gateway/internal/host\.\(\*Host\)\.Invoke|internal/plugin/protocol\.)`)},
	{"authorize", regexp.MustCompile(`^github\.com/svcplatform/svc/gateway/internal/route\.`)},
	{"render", regexp.MustCompile(`^github\.com/svcplatform/svc/gateway/internal/graph\.(\(\*wire|\(\*Handler\)\.(render|appendPaging|selectFields)|decodeAnswer)|^google\.golang\.org/protobuf/encoding/protojson`)},
	{"write the response", regexp.MustCompile(`^net/http\.(\(\*response\)\.(finishRequest|Write|write)|checkConnErrorWriter)`)},
	{"other request work", regexp.MustCompile(`^net/http\.\(\*conn\)\.serve`)},
	{"garbage collection", regexp.MustCompile(`^runtime\.(gcBgMarkWorker|bgsweep|bgscavenge|gcAssist|mallocgc)`)},
}

// PluginStages are the stages of a call in a plugin.
var PluginStages = []Stage{
	{"SQL (pgx)", regexp.MustCompile(`^github\.com/jackc/pgx`)},
	{"handler", regexp.MustCompile(`^github\.com/svcplatform/svc/sdk\.\(\*Plugin\)\.invoke`)},
	{"hop", regexp.MustCompile(`^github\.com/svcplatform/svc/internal/plugin/protocol\.`)},
	{"garbage collection", regexp.MustCompile(`^runtime\.(gcBgMarkWorker|bgsweep|bgscavenge|gcAssist|mallocgc)`)},
}

// StageCPU is the CPU time of one stage in a profile.
type StageCPU struct {
	Stage   string
	Seconds float64
}

// Stages reads a CPU profile (pprof's gzipped protobuf) and divides its
// samples among stages; what matches none is "rest" (the scheduler, idle
// work, start-up). The result follows the order of stages.
func Stages(profile []byte, stages []Stage) ([]StageCPU, error) {
	p, err := parseProfile(profile)
	if err != nil {
		return nil, err
	}
	sums := make([]float64, len(stages)+1)
	matchFn := make(map[uint64]int) // function id → stage index, or -1
	for _, s := range p.samples {
		stage := len(stages)
	frames:
		for _, loc := range s.locations {
			for _, fn := range p.locations[loc] {
				i, seen := matchFn[fn]
				if !seen {
					i = -1
					name := p.functions[fn]
					for k, st := range stages {
						if st.Match.MatchString(name) {
							i = k
							break
						}
					}
					matchFn[fn] = i
				}
				if i >= 0 {
					stage = i
					break frames
				}
			}
		}
		sums[stage] += float64(s.nanos) / 1e9
	}
	out := make([]StageCPU, 0, len(sums))
	for i, st := range stages {
		out = append(out, StageCPU{st.Name, sums[i]})
	}
	return append(out, StageCPU{"rest", sums[len(stages)]}), nil
}

// StageTable writes stages as a Markdown table: microseconds of CPU per
// request, or seconds in all when requests is 0, and shares.
func StageTable(cpu []StageCPU, requests uint64) string {
	var total float64
	for _, s := range cpu {
		total += s.Seconds
	}
	amount := func(sec float64) string {
		if requests == 0 {
			return fmt.Sprintf("%.2f s", sec)
		}
		return fmt.Sprintf("%.1f µs", 1e6*sec/float64(requests))
	}
	var b strings.Builder
	if requests == 0 {
		b.WriteString("| stage | CPU | share |\n|---|---|---|\n")
	} else {
		b.WriteString("| stage | CPU per request | share |\n|---|---|---|\n")
	}
	for _, s := range cpu {
		share := 0.0
		if total > 0 {
			share = 100 * s.Seconds / total
		}
		fmt.Fprintf(&b, "| %s | %s | %.1f %% |\n", s.Stage, amount(s.Seconds), share)
	}
	fmt.Fprintf(&b, "| **total** | **%s** | |\n", amount(total))
	return b.String()
}

// profile is what Stages needs of a pprof profile.
type profile struct {
	samples   []sample
	locations map[uint64][]uint64 // location id → function ids, innermost first
	functions map[uint64]string   // function id → name
}

type sample struct {
	locations []uint64 // leaf first
	nanos     int64
}

// parseProfile decodes the fields of profile.proto that Stages reads:
// sample (2), location (4), function (5), string_table (6) and sample_type
// (1) to find the CPU nanoseconds value.
func parseProfile(raw []byte) (*profile, error) {
	if bytes.HasPrefix(raw, []byte{0x1f, 0x8b}) {
		zr, err := gzip.NewReader(bytes.NewReader(raw))
		if err != nil {
			return nil, err
		}
		if raw, err = io.ReadAll(zr); err != nil {
			return nil, err
		}
	}
	p := &profile{locations: map[uint64][]uint64{}, functions: map[uint64]string{}}
	type rawSample struct {
		locs   []uint64
		values []int64
	}
	var (
		samples     []rawSample
		strs        []string
		sampleTypes [][2]uint64 // type, unit string indexes
		funcNames   = map[uint64]uint64{}
	)
	err := fields(raw, func(num protowire.Number, typ protowire.Type, v uint64, b []byte) error {
		switch num {
		case 1: // sample_type
			var t [2]uint64
			err := fields(b, func(n protowire.Number, _ protowire.Type, v uint64, _ []byte) error {
				if n == 1 || n == 2 {
					t[n-1] = v
				}
				return nil
			})
			sampleTypes = append(sampleTypes, t)
			return err
		case 2: // sample
			var s rawSample
			err := fields(b, func(n protowire.Number, t protowire.Type, v uint64, pb []byte) error {
				switch n {
				case 1:
					return packed(t, v, pb, func(x uint64) { s.locs = append(s.locs, x) })
				case 2:
					return packed(t, v, pb, func(x uint64) { s.values = append(s.values, int64(x)) })
				}
				return nil
			})
			samples = append(samples, s)
			return err
		case 4: // location
			var id uint64
			var fns []uint64
			err := fields(b, func(n protowire.Number, _ protowire.Type, v uint64, lb []byte) error {
				switch n {
				case 1:
					id = v
				case 4: // line
					return fields(lb, func(n protowire.Number, _ protowire.Type, v uint64, _ []byte) error {
						if n == 1 {
							fns = append(fns, v)
						}
						return nil
					})
				}
				return nil
			})
			p.locations[id] = fns
			return err
		case 5: // function
			var id, name uint64
			err := fields(b, func(n protowire.Number, _ protowire.Type, v uint64, _ []byte) error {
				switch n {
				case 1:
					id = v
				case 2:
					name = v
				}
				return nil
			})
			funcNames[id] = name
			return err
		case 6:
			strs = append(strs, string(b))
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("profile: %w", err)
	}
	str := func(i uint64) string {
		if i < uint64(len(strs)) {
			return strs[i]
		}
		return ""
	}
	for id, name := range funcNames {
		p.functions[id] = str(name)
	}
	value := -1
	for i, t := range sampleTypes {
		if str(t[0]) == "cpu" && str(t[1]) == "nanoseconds" {
			value = i
		}
	}
	if value < 0 {
		return nil, errors.New("profile: not a CPU profile (no cpu/nanoseconds sample type)")
	}
	for _, s := range samples {
		if value < len(s.values) {
			p.samples = append(p.samples, sample{locations: s.locs, nanos: s.values[value]})
		}
	}
	return p, nil
}

// fields calls f for each field of a protobuf message: v for varints (and
// fixed values), b for length-delimited ones.
func fields(raw []byte, f func(num protowire.Number, typ protowire.Type, v uint64, b []byte) error) error {
	for len(raw) > 0 {
		num, typ, n := protowire.ConsumeTag(raw)
		if n < 0 {
			return protowire.ParseError(n)
		}
		raw = raw[n:]
		var v uint64
		var b []byte
		switch typ {
		case protowire.VarintType:
			v, n = protowire.ConsumeVarint(raw)
		case protowire.BytesType:
			b, n = protowire.ConsumeBytes(raw)
		case protowire.Fixed64Type:
			v, n = protowire.ConsumeFixed64(raw)
		case protowire.Fixed32Type:
			var x uint32
			x, n = protowire.ConsumeFixed32(raw)
			v = uint64(x)
		default:
			n = protowire.ConsumeFieldValue(num, typ, raw)
		}
		if n < 0 {
			return protowire.ParseError(n)
		}
		raw = raw[n:]
		if err := f(num, typ, v, b); err != nil {
			return err
		}
	}
	return nil
}

// packed hands each value of a repeated integer field, packed or not.
func packed(typ protowire.Type, v uint64, b []byte, each func(uint64)) error {
	if typ != protowire.BytesType {
		each(v)
		return nil
	}
	for len(b) > 0 {
		x, n := protowire.ConsumeVarint(b)
		if n < 0 {
			return protowire.ParseError(n)
		}
		each(x)
		b = b[n:]
	}
	return nil
}
