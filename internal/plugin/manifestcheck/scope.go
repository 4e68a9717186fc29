package manifestcheck

import (
	"errors"
	"fmt"
	"regexp"
	"slices"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"

	pluginv1 "github.com/svcplatform/svc/gen/svc/plugin/v1"
)

// CoreScopes are the OAuth scopes of the gateway itself; every other scope
// is declared by the plugin that introduces it (the scopes option of its
// services). Package identity holds their descriptions and review tiers.
var CoreScopes = []string{"openid", "public_profile", "pages:read", "pages:manage"}

// Scope is a scope a plugin declares: its name, its description on the
// consent page, and how App Review decides it.
type Scope struct {
	Name        string
	Description string
	Review      pluginv1.ReviewTier
}

// scopeName is the syntax of a scope's name, as the platform's scopes
// already use it: "threads_basic", "svcchat:send".
var scopeName = regexp.MustCompile(`^[a-z][a-z0-9_]*(:[a-z][a-z0-9_]*)?$`)

// maxScopeDescription bounds a description, which the consent page shows.
const maxScopeDescription = 200

// ServiceScopes reads the scopes declared on sd (its scopes option),
// unchecked.
func ServiceScopes(sd protoreflect.ServiceDescriptor) []Scope {
	declared, _ := proto.GetExtension(sd.Options(), pluginv1.E_Scopes).([]*pluginv1.Scope)
	out := make([]Scope, 0, len(declared))
	for _, sc := range declared {
		out = append(out, Scope{Name: sc.GetName(), Description: sc.GetDescription(), Review: sc.GetReview()})
	}
	return out
}

// checkScopes checks the scopes a plugin declares: a name of the scopes'
// syntax that is no core scope and is declared once, a description, and a
// review tier.
func checkScopes(scopes []Scope) []error {
	var errs []error
	seen := map[string]bool{}
	for _, sc := range scopes {
		switch {
		case !scopeName.MatchString(sc.Name):
			errs = append(errs, fmt.Errorf("scope %q: want lowercase letters, digits and underscores, with at most one colon (threads_basic, svcchat:send)", sc.Name))
		case slices.Contains(CoreScopes, sc.Name):
			errs = append(errs, fmt.Errorf("scope %q is the gateway's own", sc.Name))
		case seen[sc.Name]:
			errs = append(errs, fmt.Errorf("scope %q is declared twice", sc.Name))
		}
		seen[sc.Name] = true
		if sc.Description == "" || len(sc.Description) > maxScopeDescription {
			errs = append(errs, fmt.Errorf("scope %q: a description of 1 to %d bytes is required (the consent page shows it)", sc.Name, maxScopeDescription))
		}
		if sc.Review != pluginv1.ReviewTier_REVIEW_TIER_BASIC && sc.Review != pluginv1.ReviewTier_REVIEW_TIER_ADVANCED {
			errs = append(errs, fmt.Errorf("scope %q: review is REVIEW_TIER_BASIC or REVIEW_TIER_ADVANCED", sc.Name))
		}
	}
	return errs
}

// togetherScopes checks the scopes of plugins that serve side by side: one
// owner per scope, and every scope an access rule names is a core scope or
// one some plugin declares.
func togetherScopes(plugins []*Plugin) error {
	owner := map[string]string{}
	for _, p := range plugins {
		for _, sc := range p.Scopes {
			if prev, dup := owner[sc.Name]; dup {
				return fmt.Errorf("scope %s is declared by both %s and %s", sc.Name, prev, p.Name)
			}
			owner[sc.Name] = p.Name
		}
	}
	var errs []error
	for _, p := range plugins {
		for _, m := range p.Methods {
			for _, sc := range slices.Concat(m.Access.GetScopes(), m.Access.GetAnyScopes()) {
				if _, ok := owner[sc]; !ok && !slices.Contains(CoreScopes, sc) {
					errs = append(errs, fmt.Errorf("%s: access names scope %q, which is no core scope and no plugin declares", m.Procedure, sc))
				}
			}
		}
	}
	return errors.Join(errs...)
}
