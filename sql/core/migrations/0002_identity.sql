-- Identity and the OAuth 2.0 / OIDC authorization server (issue #4).
--
-- Users, Pages and apps get decimal ids from one sequence, so that an id
-- names one object whatever its kind (CONTRACT §1: clients must not parse
-- them). Every secret is stored only as a hash: passwords with argon2id
-- (users.password_hash, a PHC string), every bearer credential and refresh
-- token with SHA-256 of its high-entropy random value. Tables that belong to
-- a Page carry page_id, so the data can later be sharded by Page.

CREATE SEQUENCE core.object_id START WITH 100000000000000;

CREATE TABLE core.users (
    id            bigint PRIMARY KEY DEFAULT nextval('core.object_id'),
    username      text        NOT NULL,
    name          text        NOT NULL,
    password_hash text        NOT NULL,
    -- Platform staff may use the staff-only endpoints (template queue, App Review).
    is_staff      boolean     NOT NULL DEFAULT false,
    created_at    timestamptz NOT NULL DEFAULT now(),
    CHECK (username <> '')
);
-- Sign-in is case-insensitive on the username.
CREATE UNIQUE INDEX users_username_key ON core.users (lower(username));

CREATE TABLE core.pages (
    id                 bigint PRIMARY KEY DEFAULT nextval('core.object_id'),
    name               text        NOT NULL,
    published          boolean     NOT NULL DEFAULT false,
    chat_surfacing     boolean     NOT NULL DEFAULT false,
    inbox_automation   boolean     NOT NULL DEFAULT false,
    assistant_label    text        NOT NULL DEFAULT 'Assistant',
    -- The Page's threads may be merged into the chat app's inbox (the link
    -- between the Page and the chat product, CONTRACT §5).
    inbox_merge_linked boolean     NOT NULL DEFAULT false,
    created_at         timestamptz NOT NULL DEFAULT now()
);

-- Who manages a Page. The owner is also listed here, with role 'owner'.
CREATE TABLE core.page_roles (
    page_id    bigint      NOT NULL REFERENCES core.pages (id) ON DELETE CASCADE,
    user_id    bigint      NOT NULL REFERENCES core.users (id) ON DELETE CASCADE,
    role       text        NOT NULL CHECK (role IN ('owner', 'admin')),
    created_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (page_id, user_id)
);
CREATE INDEX page_roles_user_idx ON core.page_roles (user_id);

CREATE TABLE core.apps (
    id                 bigint PRIMARY KEY DEFAULT nextval('core.object_id'),
    name               text        NOT NULL,
    client_id          text        NOT NULL UNIQUE,
    -- SHA-256 of the client secret: the secret is 256 random bits, so a
    -- fast hash is enough and keeps the token endpoint cheap.
    client_secret_hash bytea       NOT NULL,
    mode               text        NOT NULL DEFAULT 'development' CHECK (mode IN ('development', 'live')),
    created_at         timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE core.app_redirect_uris (
    app_id bigint NOT NULL REFERENCES core.apps (id) ON DELETE CASCADE,
    uri    text   NOT NULL,
    PRIMARY KEY (app_id, uri)
);

-- Products the app has enabled (e.g. svcchat).
CREATE TABLE core.app_products (
    app_id  bigint NOT NULL REFERENCES core.apps (id) ON DELETE CASCADE,
    product text   NOT NULL,
    PRIMARY KEY (app_id, product)
);

CREATE TABLE core.app_team (
    app_id  bigint NOT NULL REFERENCES core.apps (id) ON DELETE CASCADE,
    user_id bigint NOT NULL REFERENCES core.users (id) ON DELETE CASCADE,
    role    text   NOT NULL CHECK (role IN ('admin', 'developer', 'tester')),
    PRIMARY KEY (app_id, user_id)
);

CREATE TABLE core.app_test_users (
    app_id  bigint NOT NULL REFERENCES core.apps (id) ON DELETE CASCADE,
    user_id bigint NOT NULL REFERENCES core.users (id) ON DELETE CASCADE,
    PRIMARY KEY (app_id, user_id)
);

-- App Review, one row per app and scope.
CREATE TABLE core.app_scope_reviews (
    app_id       bigint      NOT NULL REFERENCES core.apps (id) ON DELETE CASCADE,
    scope        text        NOT NULL,
    status       text        NOT NULL CHECK (status IN ('pending', 'approved', 'rejected')),
    -- The automated review's score, for basic scopes.
    score        integer,
    reviewer_id  bigint      REFERENCES core.users (id),
    reason       text        NOT NULL DEFAULT '',
    submitted_at timestamptz NOT NULL DEFAULT now(),
    decided_at   timestamptz,
    PRIMARY KEY (app_id, scope)
);
CREATE INDEX app_scope_reviews_pending_idx ON core.app_scope_reviews (submitted_at) WHERE status = 'pending';

-- Business assets: a Page linked to an app, with the products enabled on
-- the link.
CREATE TABLE core.page_links (
    page_id    bigint      NOT NULL REFERENCES core.pages (id) ON DELETE CASCADE,
    app_id     bigint      NOT NULL REFERENCES core.apps (id) ON DELETE CASCADE,
    products   text[]      NOT NULL DEFAULT '{}',
    created_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (page_id, app_id)
);
CREATE INDEX page_links_app_idx ON core.page_links (app_id);

-- A grant is one user's authorization of one app, from one authorization
-- code (or one client_credentials request): every token issued from it
-- belongs to its family and is revoked with it.
CREATE TABLE core.oauth_grants (
    id         bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    app_id     bigint      NOT NULL REFERENCES core.apps (id) ON DELETE CASCADE,
    user_id    bigint      REFERENCES core.users (id) ON DELETE CASCADE,
    scopes     text[]      NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now(),
    revoked_at timestamptz
);

CREATE TABLE core.oauth_codes (
    code_hash      bytea PRIMARY KEY,
    grant_id       bigint      NOT NULL REFERENCES core.oauth_grants (id) ON DELETE CASCADE,
    app_id         bigint      NOT NULL REFERENCES core.apps (id) ON DELETE CASCADE,
    user_id        bigint      NOT NULL REFERENCES core.users (id) ON DELETE CASCADE,
    redirect_uri   text        NOT NULL,
    scopes         text[]      NOT NULL,
    -- BASE64URL(SHA-256(code_verifier)); only S256 is accepted.
    code_challenge text        NOT NULL,
    nonce          text        NOT NULL DEFAULT '',
    auth_time      timestamptz NOT NULL,
    expires_at     timestamptz NOT NULL,
    used_at        timestamptz,
    created_at     timestamptz NOT NULL DEFAULT now()
);

-- Every bearer credential, whatever its kind, so that authenticating a
-- request is one lookup by hash. kind is svc.plugin.v1.TokenKind: 1 user
-- access token, 2 system user token, 3 app API key, 4 first-party session,
-- 5 operator admin token.
CREATE TABLE core.credentials (
    token_hash bytea PRIMARY KEY,
    kind       smallint    NOT NULL CHECK (kind BETWEEN 1 AND 5),
    app_id     bigint      REFERENCES core.apps (id) ON DELETE CASCADE,
    user_id    bigint      REFERENCES core.users (id) ON DELETE CASCADE,
    scopes     text[]      NOT NULL DEFAULT '{}',
    grant_id   bigint      REFERENCES core.oauth_grants (id) ON DELETE CASCADE,
    -- A name for credentials that exist once (the admin token: 'admin').
    label      text,
    -- The first characters of an app key, to tell keys apart in the console.
    hint       text        NOT NULL DEFAULT '',
    expires_at timestamptz,
    revoked_at timestamptz,
    created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX credentials_grant_idx ON core.credentials (grant_id) WHERE grant_id IS NOT NULL;
CREATE INDEX credentials_app_idx ON core.credentials (app_id, kind) WHERE app_id IS NOT NULL;
CREATE UNIQUE INDEX credentials_label_key ON core.credentials (label) WHERE label IS NOT NULL;

-- Refresh tokens are not bearer credentials: they are only redeemed at the
-- token endpoint, and rotated on every use (used_at set, a new one issued).
CREATE TABLE core.oauth_refresh_tokens (
    token_hash bytea PRIMARY KEY,
    grant_id   bigint      NOT NULL REFERENCES core.oauth_grants (id) ON DELETE CASCADE,
    app_id     bigint      NOT NULL REFERENCES core.apps (id) ON DELETE CASCADE,
    user_id    bigint      NOT NULL REFERENCES core.users (id) ON DELETE CASCADE,
    scopes     text[]      NOT NULL,
    expires_at timestamptz NOT NULL,
    used_at    timestamptz,
    revoked_at timestamptz,
    created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX oauth_refresh_tokens_grant_idx ON core.oauth_refresh_tokens (grant_id);

-- Consent remembered per user and app: the union of the scopes granted.
CREATE TABLE core.oauth_consents (
    user_id    bigint      NOT NULL REFERENCES core.users (id) ON DELETE CASCADE,
    app_id     bigint      NOT NULL REFERENCES core.apps (id) ON DELETE CASCADE,
    scopes     text[]      NOT NULL,
    updated_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (user_id, app_id)
);

-- The id_token signing keys. private_key is PKCS#8 DER, sealed with
-- AES-256-GCM when the operator supplies a key-encryption secret (sealed =
-- true), else protected only by the database's access control. Exactly one
-- key is active; the others stay published in the JWKS until removed.
CREATE TABLE core.signing_keys (
    kid         text PRIMARY KEY,
    algorithm   text        NOT NULL,
    private_key bytea       NOT NULL,
    sealed      boolean     NOT NULL DEFAULT false,
    active      boolean     NOT NULL DEFAULT true,
    created_at  timestamptz NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX signing_keys_active_key ON core.signing_keys (active) WHERE active;
