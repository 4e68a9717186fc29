// Package validate checks request messages against their protovalidate
// rules — compiled-in messages and the dynamic messages of plugin services
// alike — and turns violations into the platform's invalid-parameter error
// (code 100) naming each offending field.
package validate
