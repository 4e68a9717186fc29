// Package identity owns the platform's core identity in the core schema:
// users and their argon2id password hashes, platform staff, Pages and Page
// roles (owner, admin), business assets (a Page linked to an app with the
// products enabled on the link), apps (client id, client secret hashed and
// sealed: it also signs webhooks, and core.apps is its one home; registered
// redirect URIs, development or live mode, team roles, Test Users,
// App Review per scope), app API keys, and first-party sessions.
//
// It also holds the bounds around passwords and self-service (CONTRACT §15):
// sign-in failures counted per account and per address (signin.go), the
// slots every argon2id hash and check runs in (password.go), and the caps on
// Test Users per app and apps per user, enforced under row locks.
//
// Service holds them in areas, one type each, sharing one pool (or one
// transaction, InTx): Users (people, passwords, staff, sign-up), Sessions
// (sessions and credentials), Pages (Pages and Page roles, PageFacts), Apps
// (everything of an app: secrets, redirect URIs, products, Page links, team,
// Test Users, keys) and Review (App Review, going live): ids.Apps.CreateApp,
// tx.Users.User.
//
// It is storage and rules, never HTTP: the OAuth server (package oauth), the
// authenticator (package auth), the seed and the Graph nodes call these
// functions. It also mints and hashes every opaque credential (NewToken,
// HashToken), so that one function decides what a token looks like.
//
// identity must not parse requests, write responses, or know about the OAuth
// protocol; it must not touch tables owned by other packages' schemas.
package identity
