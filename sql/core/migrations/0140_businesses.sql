-- Business portfolios are stored (issue 31, CONTRACT §17): a business has
-- people with roles (admin, employee, as Meta Business Manager), assets
-- (Pages, apps, ad accounts; an asset in at most one business) and a
-- verification status that only the transitions of
-- identity.verificationTransitions change.
CREATE TABLE core.businesses (
    id                  bigint PRIMARY KEY DEFAULT nextval('core.object_id'),
    name                text        NOT NULL CHECK (name <> ''),
    verification_status text        NOT NULL DEFAULT 'unverified'
        CHECK (verification_status IN ('unverified', 'pending', 'verified', 'rejected')),
    -- Staff's reason for the last decision (a rejection's is required).
    verification_reason text        NOT NULL DEFAULT '',
    created_by          bigint REFERENCES core.users (id) ON DELETE SET NULL,
    created_at          timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX businesses_created_by_idx ON core.businesses (created_by) WHERE created_by IS NOT NULL;

CREATE TABLE core.business_roles (
    business_id bigint      NOT NULL REFERENCES core.businesses (id) ON DELETE CASCADE,
    user_id     bigint      NOT NULL REFERENCES core.users (id) ON DELETE CASCADE,
    role        text        NOT NULL CHECK (role IN ('admin', 'employee')),
    created_at  timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (business_id, user_id)
);
CREATE INDEX business_roles_user_idx ON core.business_roles (user_id);

-- An asset belongs to at most one business: the key is the asset. No
-- foreign key on asset_id: an ad account lives in the ads plugin's schema.
-- A Page or app deleted leaves a row naming nothing, which no read joins.
CREATE TABLE core.business_assets (
    asset_type  text        NOT NULL CHECK (asset_type IN ('PAGE', 'APP', 'AD_ACCOUNT')),
    asset_id    bigint      NOT NULL,
    business_id bigint      NOT NULL REFERENCES core.businesses (id) ON DELETE CASCADE,
    added_by    bigint REFERENCES core.users (id) ON DELETE SET NULL,
    added_at    timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (asset_type, asset_id)
);
CREATE INDEX business_assets_business_idx ON core.business_assets (business_id, asset_type, asset_id);

-- Verification requests: what the business sent (documents' metadata only:
-- their kind and SHA-256, never their content) and staff's decision.
CREATE TABLE core.business_verifications (
    id           bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    business_id  bigint      NOT NULL REFERENCES core.businesses (id) ON DELETE CASCADE,
    legal_name   text        NOT NULL CHECK (legal_name <> ''),
    country      text        NOT NULL CHECK (country ~ '^[A-Z]{2}$'),
    documents    jsonb       NOT NULL,
    requested_by bigint REFERENCES core.users (id) ON DELETE SET NULL,
    requested_at timestamptz NOT NULL DEFAULT now(),
    decision     text CHECK (decision IN ('approve', 'reject')),
    reason       text        NOT NULL DEFAULT '',
    decided_by   bigint REFERENCES core.users (id) ON DELETE SET NULL,
    decided_at   timestamptz
);
-- At most one undecided request per business: the staff queue.
CREATE UNIQUE INDEX business_verifications_open_idx ON core.business_verifications (business_id) WHERE decided_at IS NULL;
CREATE INDEX business_verifications_queue_idx ON core.business_verifications (requested_at) WHERE decided_at IS NULL;
