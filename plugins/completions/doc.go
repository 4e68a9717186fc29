// Command completions is the completions plugin: OpenAI-compatible chat
// completions (CONTRACT §7) routed to the OpenAI-compatible servers the
// operator configures (vLLM, Ollama, LiteLLM, OpenAI itself), with a
// built-in model, svc-builtin, that always answers.
//
// The gateway authenticates the caller and hands this plugin the OpenAI
// request body untouched (see the gateway's openai edge); the plugin owns
// everything after that:
//
//   - request.go parses the body and validates only what the plugin reads
//     itself (model, the messages' shape with tool messages and any
//     content part, temperature, stream, stream_options, n, max_tokens);
//     the body goes to the upstream as sent, unknown fields included
//     (OpenAI clients send new fields first), and the upstream's answer
//     comes back as it wrote it: tools, response formats, logprobs and
//     the like are the upstream's business (CONTRACT §20);
//   - router.go picks the upstreams that serve the model, by weight, and
//     tries them in turn: 429, 5xx, connection errors and time-outs
//     (a stream's time to first token included) are retried on the next
//     one, with backoff and Retry-After respected, as long as nothing has
//     reached the client; nothing is retried after;
//   - breaker.go takes an upstream that keeps failing or stalling out for
//     its cooldown, then probes it with a one-token generation before
//     letting calls in again (its transitions in one table); budget.go
//     shows operators each upstream's state;
//   - quota.go enforces each app's monthly token budget and requests per
//     minute across gateways, by leasing slices of shared counter rows; the
//     operator's configured values are ceilings an app can lower, never
//     lift (budget.go refuses the write, quota.go caps what is stored);
//   - sse.go reads the upstream's server-sent events, whatever the chunk
//     boundaries;
//   - builtin.go is svc-builtin, which is not a language model: a fixed,
//     deterministic reply with honest token counts of its own text, or,
//     given tools, a call of the tool tool_choice names (the first when it
//     is "required") with arguments {};
//   - usage.go adds up usage per app, model, upstream and day in memory and
//     writes it to the completions schema in batches, exactly once, off the
//     hot path and when the plugin stops, and counts it in Prometheus
//     counters the gateway serves on /metrics; tokens.go counts what an
//     unfinished stream carried.
//
// Upstreams come from the gateway's config file
// (plugins.completions.upstreams), passed in SVC_PLUGIN_CONFIG; their API
// keys are read from the environment variables the config names (the
// gateway passes each variable a setting ending in _env names) and never
// logged or answered. The plugin declares its OpenAI paths (POST
// /v1/chat/completions, GET /v1/models) and its metrics method in its
// proto (svc.plugin.v1.http_path, metrics): the gateway serves them
// without knowing the plugin.
package main
