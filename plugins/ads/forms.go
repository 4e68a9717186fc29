package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/mail"
	"net/url"
	"strings"
	"unicode/utf8"

	"github.com/jackc/pgx/v5"

	adsv1 "github.com/svcplatform/svc/gen/svc/ads/v1"
	"github.com/svcplatform/svc/plugins/ads/internal/adsdb"
	"github.com/svcplatform/svc/sdk"
)

// Bounds of lead forms and leads.
const (
	maxQuestions   = 15
	maxKeyLen      = 64
	maxLabelLen    = 300 // code points
	maxAnswerLen   = 300 // code points
	minPhoneDigits = 5
	maxPhoneDigits = 20
)

// standardQuestions are Meta's prefilled question types and the label a
// form shows when the advertiser gives none. Their key is the type in
// lower case.
var standardQuestions = map[string]string{
	"FULL_NAME": "Full name", "EMAIL": "Email", "PHONE": "Phone number",
	"CITY": "City", "COMPANY_NAME": "Company name", "JOB_TITLE": "Job title",
}

// question is one stored question of a form.
type question struct {
	Type  string `json:"type"`
	Key   string `json:"key"`
	Label string `json:"label"`
}

// answer is one stored answer of a lead, Meta's field_data item.
type answer struct {
	Name   string   `json:"name"`
	Values []string `json:"values"`
}

// normalizeQuestions checks a form's questions and fills in the keys and
// labels of standard ones. A refusal names the question's field, e.g.
// questions[2].key.
func normalizeQuestions(in []*adsv1.LeadgenQuestion) ([]question, error) {
	if len(in) == 0 || len(in) > maxQuestions {
		return nil, sdk.Invalid("questions", "Invalid parameter: questions must hold 1 to %d questions.", maxQuestions)
	}
	out := make([]question, 0, len(in))
	seen := map[string]bool{}
	for i, q := range in {
		field := fmt.Sprintf("questions[%d]", i)
		t, key, label := q.GetType(), q.GetKey(), q.GetLabel()
		if !utf8.ValidString(label) || strings.ContainsRune(label, 0) || utf8.RuneCountInString(label) > maxLabelLen {
			return nil, sdk.Invalid(field+".label", "Invalid parameter: %s.label must be text of at most %d characters.", field, maxLabelLen)
		}
		if std, ok := standardQuestions[t]; ok {
			if key != "" && key != strings.ToLower(t) {
				return nil, sdk.Invalid(field+".key", "Invalid parameter: %s.key of a %s question is %q (or none).", field, t, strings.ToLower(t))
			}
			key = strings.ToLower(t)
			if strings.TrimSpace(label) == "" {
				label = std
			}
		} else if t == "CUSTOM" {
			if !validKey(key) {
				return nil, sdk.Invalid(field+".key", "Invalid parameter: %s.key of a CUSTOM question must be 1 to %d lower-case letters, digits and _.", field, maxKeyLen)
			}
			if strings.TrimSpace(label) == "" {
				return nil, sdk.Invalid(field+".label", "Invalid parameter: %s.label is required for a CUSTOM question.", field)
			}
		} else {
			return nil, sdk.Invalid(field+".type", "Invalid parameter: %s.type %q is not one of FULL_NAME, EMAIL, PHONE, CITY, COMPANY_NAME, JOB_TITLE, CUSTOM.", field, t)
		}
		if seen[key] {
			return nil, sdk.Invalid(field+".key", "Invalid parameter: %s asks %q, which an earlier question asks already.", field, key)
		}
		seen[key] = true
		out = append(out, question{Type: t, Key: key, Label: label})
	}
	return out, nil
}

func validKey(s string) bool {
	if s == "" || len(s) > maxKeyLen {
		return false
	}
	for _, r := range s {
		if !(r == '_' || r >= 'a' && r <= 'z' || r >= '0' && r <= '9') {
			return false
		}
	}
	return true
}

// checkAnswers checks a lead's field_data against the form's questions:
// exactly one value for every question and nothing else; emails and phone
// numbers well-formed. It returns the answers in the form's order. A
// refusal names the field, e.g. field_data[1].values.
func checkAnswers(questions []question, fields []*adsv1.LeadField) ([]answer, error) {
	byKey := map[string]question{}
	for _, q := range questions {
		byKey[q.Key] = q
	}
	given := map[string]string{}
	for i, f := range fields {
		field := fmt.Sprintf("field_data[%d]", i)
		q, ok := byKey[f.GetName()]
		if !ok {
			return nil, sdk.Invalid(field+".name", "Invalid parameter: %s.name %q is not a question of this form.", field, f.GetName())
		}
		if _, dup := given[q.Key]; dup {
			return nil, sdk.Invalid(field+".name", "Invalid parameter: %s answers %q a second time.", field, q.Key)
		}
		if len(f.GetValues()) != 1 {
			return nil, sdk.Invalid(field+".values", "Invalid parameter: %s.values must hold exactly one answer.", field)
		}
		v := strings.TrimSpace(f.GetValues()[0])
		if v == "" || !utf8.ValidString(v) || strings.ContainsRune(v, 0) || utf8.RuneCountInString(v) > maxAnswerLen {
			return nil, sdk.Invalid(field+".values", "Invalid parameter: %s.values must be 1 to %d characters.", field, maxAnswerLen)
		}
		if err := checkFormat(q.Type, v); err != nil {
			return nil, sdk.Invalid(field+".values", "Invalid parameter: %s.values: %v.", field, err)
		}
		given[q.Key] = v
	}
	out := make([]answer, 0, len(questions))
	for _, q := range questions {
		v, ok := given[q.Key]
		if !ok {
			return nil, sdk.Invalid("field_data", "Invalid parameter: field_data lacks an answer to %q.", q.Key)
		}
		out = append(out, answer{Name: q.Key, Values: []string{v}})
	}
	return out, nil
}

// checkFormat checks the answers whose question type has a format.
func checkFormat(questionType, v string) error {
	switch questionType {
	case "EMAIL":
		a, err := mail.ParseAddress(v)
		if err != nil || a.Address != v || a.Name != "" {
			return errors.New("not an email address")
		}
	case "PHONE":
		digits := 0
		for i, r := range v {
			switch {
			case r >= '0' && r <= '9':
				digits++
			case r == '+' && i == 0, r == ' ', r == '-', r == '(', r == ')':
			default:
				return errors.New("a phone number has digits, spaces, - ( ) and a leading + only")
			}
		}
		if digits < minPhoneDigits || digits > maxPhoneDigits {
			return fmt.Errorf("a phone number has %d to %d digits", minPhoneDigits, maxPhoneDigits)
		}
	}
	return nil
}

// checkPolicyURL accepts an absolute https URL without credentials.
func checkPolicyURL(raw string) error {
	u, err := url.Parse(raw)
	if err != nil || !strings.EqualFold(u.Scheme, "https") || u.Host == "" || u.Opaque != "" || u.User != nil || strings.ContainsAny(raw, " \x00") {
		return sdk.Invalid("privacy_policy_url", "Invalid parameter: privacy_policy_url must be an absolute https URL without a user name or password.")
	}
	return nil
}

func (s *service) createLeadgenForm(ctx context.Context, call *sdk.Call, req *adsv1.CreateLeadgenFormRequest) (*adsv1.CreatedResponse, error) {
	if err := plainText("name", req.GetName()); err != nil {
		return nil, err
	}
	questions, err := normalizeQuestions(req.GetQuestions())
	if err != nil {
		return nil, err
	}
	if err := checkPolicyURL(req.GetPrivacyPolicyUrl()); err != nil {
		return nil, err
	}
	acct, err := s.ownedAccount(ctx, call, req.GetAdAccountId())
	if err != nil {
		return nil, err
	}
	qs, err := json.Marshal(questions)
	if err != nil {
		return nil, err
	}
	row, err := adsdb.New(s.pool).InsertLeadgenForm(ctx, adsdb.InsertLeadgenFormParams{AdAccountID: acct.ID, Name: req.GetName(),
		Questions: qs, PrivacyPolicyUrl: req.GetPrivacyPolicyUrl()})
	if err != nil {
		return nil, err
	}
	return &adsv1.CreatedResponse{Id: sdk.FormatID(row.ID)}, nil
}

func (s *service) listLeadgenForms(ctx context.Context, call *sdk.Call, req *adsv1.ListLeadgenFormsRequest) (*adsv1.ListLeadgenFormsResponse, error) {
	w, err := sdk.ParseWindow(req.GetLimit(), req.GetAfter(), req.GetBefore())
	if err != nil {
		return nil, err
	}
	acct, err := s.ownedAccount(ctx, call, req.GetAdAccountId())
	if err != nil {
		return nil, err
	}
	q := adsdb.New(s.pool)
	var rows []adsdb.AdsLeadgenForm
	if w.Before != 0 {
		rows, err = q.LeadgenFormsBefore(ctx, adsdb.LeadgenFormsBeforeParams{AdAccountID: acct.ID, Before: w.Before, Lim: w.Fetch()})
	} else {
		rows, err = q.LeadgenFormsAfter(ctx, adsdb.LeadgenFormsAfterParams{AdAccountID: acct.ID, After: w.After, Lim: w.Fetch()})
	}
	if err != nil {
		return nil, err
	}
	rows, paging := sdk.Page(w, rows, func(f adsdb.AdsLeadgenForm) int64 { return f.ID })
	res := &adsv1.ListLeadgenFormsResponse{Data: make([]*adsv1.LeadgenForm, len(rows))}
	paging.Set(res)
	for i, r := range rows {
		if res.Data[i], err = formProto(r); err != nil {
			return nil, err
		}
	}
	return res, nil
}

// getLeadgenForm reads a form for anyone signed in: its questions are
// what a person answers.
func (s *service) getLeadgenForm(ctx context.Context, _ *sdk.Call, req *adsv1.GetLeadgenFormRequest) (*adsv1.LeadgenForm, error) {
	row, err := s.form(ctx, req.GetLeadgenFormId())
	if err != nil {
		return nil, err
	}
	return formProto(adsdb.AdsLeadgenForm{AdAccountID: row.AdAccountID, ID: row.ID, Name: row.Name, Questions: row.Questions,
		PrivacyPolicyUrl: row.PrivacyPolicyUrl, CreatedAt: row.CreatedAt})
}

// submitLead stores the signed-in person's answers to a form, once.
func (s *service) submitLead(ctx context.Context, call *sdk.Call, req *adsv1.SubmitLeadRequest) (*adsv1.CreatedResponse, error) {
	form, err := s.form(ctx, req.GetLeadgenFormId())
	if err != nil {
		return nil, err
	}
	var questions []question
	if err := json.Unmarshal(form.Questions, &questions); err != nil {
		return nil, fmt.Errorf("form %d: stored questions: %w", form.ID, err)
	}
	answers, err := checkAnswers(questions, req.GetFieldData())
	if err != nil {
		return nil, err
	}
	data, err := json.Marshal(answers)
	if err != nil {
		return nil, err
	}
	row, err := adsdb.New(s.pool).InsertLead(ctx, adsdb.InsertLeadParams{AdAccountID: form.AdAccountID, FormID: form.ID,
		UserID: call.Principal().UserID, FieldData: data})
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, sdk.Invalid("leadgen_form_id", "Invalid parameter: you already submitted a lead to form %s.", req.GetLeadgenFormId())
	}
	if err != nil {
		return nil, err
	}
	return &adsv1.CreatedResponse{Id: sdk.FormatID(row.ID)}, nil
}

// listLeads lists a form's leads to those who may use its ad account
// (mayUse); to anyone else the form does not exist.
func (s *service) listLeads(ctx context.Context, call *sdk.Call, req *adsv1.ListLeadsRequest) (*adsv1.ListLeadsResponse, error) {
	w, err := sdk.ParseWindow(req.GetLimit(), req.GetAfter(), req.GetBefore())
	if err != nil {
		return nil, err
	}
	form, err := s.form(ctx, req.GetLeadgenFormId())
	if err != nil {
		return nil, err
	}
	ok, err := mayUse(ctx, call, form.BusinessID, form.AdAccountID)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, formNotFound(req.GetLeadgenFormId())
	}
	q := adsdb.New(s.pool)
	var rows []adsdb.AdsLead
	if w.Before != 0 {
		rows, err = q.LeadsBefore(ctx, adsdb.LeadsBeforeParams{AdAccountID: form.AdAccountID, FormID: form.ID, Before: w.Before, Lim: w.Fetch()})
	} else {
		rows, err = q.LeadsAfter(ctx, adsdb.LeadsAfterParams{AdAccountID: form.AdAccountID, FormID: form.ID, After: w.After, Lim: w.Fetch()})
	}
	if err != nil {
		return nil, err
	}
	rows, paging := sdk.Page(w, rows, func(l adsdb.AdsLead) int64 { return l.ID })
	res := &adsv1.ListLeadsResponse{Data: make([]*adsv1.Lead, len(rows))}
	paging.Set(res)
	for i, r := range rows {
		var answers []answer
		if err := json.Unmarshal(r.FieldData, &answers); err != nil {
			return nil, fmt.Errorf("lead %d: stored field_data: %w", r.ID, err)
		}
		l := &adsv1.Lead{Id: sdk.FormatID(r.ID), FormId: sdk.FormatID(r.FormID), UserId: r.UserID, CreatedTime: rfc3339(r.CreatedAt)}
		for _, a := range answers {
			l.FieldData = append(l.FieldData, &adsv1.LeadField{Name: a.Name, Values: a.Values})
		}
		res.Data[i] = l
	}
	return res, nil
}

func (s *service) form(ctx context.Context, id string) (adsdb.GetLeadgenFormRow, error) {
	n, ok := sdk.ParseID(id)
	if !ok {
		return adsdb.GetLeadgenFormRow{}, formNotFound(id)
	}
	row, err := adsdb.New(s.pool).GetLeadgenForm(ctx, n)
	if errors.Is(err, pgx.ErrNoRows) {
		return row, formNotFound(id)
	}
	return row, err
}

func formProto(r adsdb.AdsLeadgenForm) (*adsv1.LeadgenForm, error) {
	var questions []question
	if err := json.Unmarshal(r.Questions, &questions); err != nil {
		return nil, fmt.Errorf("form %d: stored questions: %w", r.ID, err)
	}
	f := &adsv1.LeadgenForm{Id: sdk.FormatID(r.ID), AdAccountId: sdk.FormatID(r.AdAccountID), Name: r.Name,
		PrivacyPolicyUrl: r.PrivacyPolicyUrl, Status: "ACTIVE", CreatedTime: rfc3339(r.CreatedAt)}
	for _, q := range questions {
		f.Questions = append(f.Questions, &adsv1.LeadgenQuestion{Type: q.Type, Key: q.Key, Label: q.Label})
	}
	return f, nil
}

func formNotFound(id string) error { return sdk.NotFound("Lead form " + id) }
