package openai

import "github.com/svcplatform/svc/internal/jsonobj"

// wantsStream tells whether a request body's top-level field (the path's
// stream_field, "stream" for OpenAI's wire) is true, choosing the plugin
// method to call. It walks the top-level object's keys and skips their
// values without decoding them (jsonobj), so that the body is decoded
// once, by the plugin. A body it cannot walk goes to the unary method,
// whose parser explains what is wrong. As in the completions plugin's
// parser, keys match exactly and the last of a repeated key wins.
func wantsStream(body []byte, field string) bool {
	stream := false
	ok := jsonobj.Members(body, func(key, value []byte) bool {
		if string(key) == field {
			stream = string(value) == "true"
		}
		return true
	})
	return ok && stream
}
