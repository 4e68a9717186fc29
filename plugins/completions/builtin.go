package main

import (
	"encoding/json"
	"strings"
	"unicode"
)

// builtinModel is the model that always answers. It is not a language
// model: whatever it is asked, it replies with builtinReply, and counts
// tokens with countTokens, a word-and-punctuation count of the text itself
// (not any real model's tokenizer), so that its usage figures are honest
// about what it did.
const builtinModel = "svc-builtin"

// builtinReply is svc-builtin's answer to every request.
const builtinReply = "Thanks for your message! This is an automatic reply from svc-builtin, " +
	"the platform's built-in model, which is not a language model."

// countTokens counts the tokens of s the way svc-builtin does: every run
// of letters and digits is one token, every other visible character one
// more.
func countTokens(s string) int {
	n, inWord := 0, false
	for _, r := range s {
		switch {
		case unicode.IsLetter(r) || unicode.IsDigit(r):
			if !inWord {
				n++
			}
			inWord = true
		case unicode.IsSpace(r):
			inWord = false
		default:
			n++
			inWord = false
		}
	}
	return n
}

// tokenize splits s into the pieces countTokens counts, each with the
// spaces before it, so that joining them gives s back (but for trailing
// spaces). Streams send one piece per chunk.
func tokenize(s string) []string {
	var out []string
	var cur strings.Builder
	inWord := false
	flush := func() {
		if cur.Len() > 0 {
			out = append(out, cur.String())
			cur.Reset()
		}
	}
	for _, r := range s {
		switch {
		case unicode.IsLetter(r) || unicode.IsDigit(r):
			if !inWord {
				flush()
			}
			inWord = true
			cur.WriteRune(r)
		case unicode.IsSpace(r):
			if inWord {
				flush()
			}
			inWord = false
			cur.WriteRune(r)
		default:
			flush()
			cur.WriteRune(r)
			flush()
			inWord = false
		}
	}
	flush()
	// Leading spaces belong to the piece that follows them.
	merged := out[:0]
	pending := ""
	for _, p := range out {
		if strings.TrimSpace(p) == "" {
			pending += p
			continue
		}
		merged = append(merged, pending+p)
		pending = ""
	}
	return merged
}

// promptTokens counts a conversation's tokens for svc-builtin: its texts,
// plus one per message for the role.
func promptTokens(msgs []message) int {
	n := 0
	for _, m := range msgs {
		n += 1 + countTokens(m.Content)
	}
	return n
}

// builtinArguments are the arguments of every tool call svc-builtin makes:
// it has nothing to fill them with.
const builtinArguments = "{}"

// checkBuiltinTools reads, for svc-builtin, which tool it calls
// (CONTRACT §20): the one tool_choice names, or the first function tool
// when tool_choice is "required". Otherwise (no tools; tool_choice left
// out, "auto" or "none") it answers in text. Only svc-builtin reads tools:
// for an upstream they are the upstream's to judge.
func (r *chatRequest) checkBuiltinTools() *apiError {
	var tools []struct {
		Type     string `json:"type"`
		Function struct {
			Name string `json:"name"`
		} `json:"function"`
	}
	if raw, ok := r.present("tools"); ok {
		if err := json.Unmarshal(raw, &tools); err != nil {
			return invalid("tools", "invalid_type", "Invalid type for 'tools': expected an array of tool objects.")
		}
	}
	raw, ok := r.present("tool_choice")
	if !ok {
		return nil
	}
	var mode string
	var named struct {
		Type     string `json:"type"`
		Function struct {
			Name string `json:"name"`
		} `json:"function"`
	}
	if json.Unmarshal(raw, &mode) != nil && json.Unmarshal(raw, &named) != nil {
		return invalid("tool_choice", "invalid_type", "Invalid type for 'tool_choice': expected a string or an object.")
	}
	want := named.Function.Name // "" unless a tool is named
	if mode != "required" && want == "" {
		return nil
	}
	for _, t := range tools {
		if t.Type == "function" && t.Function.Name != "" && (want == "" || t.Function.Name == want) {
			r.tool = t.Function.Name
			return nil
		}
	}
	if want != "" {
		return invalid("tool_choice", "invalid_value", "Invalid value for 'tool_choice': no function named '%s' in 'tools'.", want)
	}
	return invalid("tool_choice", "invalid_value", "Invalid value for 'tool_choice': 'required' needs at least one function in 'tools'.")
}

// builtinAnswer is svc-builtin's reply to a conversation, cut to maxTokens
// when given (then finish_reason is "length").
func builtinAnswer(maxTokens int) (text, finish string, pieces []string) {
	pieces = tokenize(builtinReply)
	finish = "stop"
	if maxTokens > 0 && maxTokens < len(pieces) {
		pieces, finish = pieces[:maxTokens], "length"
	}
	return strings.Join(pieces, ""), finish, pieces
}
