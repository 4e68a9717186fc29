// Package secretbox seals small secrets the gateway must be able to read
// back (each app's webhook signing secret) with AES-256-GCM under the
// installation's master key, and derives per-purpose keys from it for
// components that seal on their own (Box.Derive: the OIDC signing key).
//
// The master key is 32 bytes, taken from the environment variable
// SVC_MASTER_KEY (standard base64) or, when that is unset, from the file
// <data-dir>/master.key, which the first start creates with mode 0600.
// Every replica of the gateway that shares one database must use the same
// key: set SVC_MASTER_KEY on all of them (copy the file's content). A
// replica with another key cannot open what the others sealed, and says so
// with both keys' fingerprints, never the keys.
//
// A sealed value is bound to a context string (e.g. the app id it belongs
// to), so a sealed value copied to another row does not open there.
//
// secretbox knows nothing of the database or of what it seals, and never
// logs a key or a plaintext.
package secretbox
