-- The ads plugin's schema: sandbox ad accounts of business portfolios,
-- their lead campaigns and lead forms, and the leads people submit. None of
-- it is a Page's data: every table is keyed by its ad account, first in the
-- primary key, so that an account's rows live together when sharded. Ids
-- come from sequences and are unique on their own too, since nodes name an
-- object by its id alone.

CREATE SEQUENCE ads.ad_account_id_seq START WITH 8000000001;

CREATE TABLE ads.ad_accounts (
    id          bigint      PRIMARY KEY DEFAULT nextval('ads.ad_account_id_seq'),
    -- "bp_<user id>": the business portfolio that owns it.
    business_id text        NOT NULL,
    name        text        NOT NULL,
    currency    text        NOT NULL DEFAULT 'USD',
    -- Every account is a sandbox: nothing is bought and no money moves.
    is_sandbox  boolean     NOT NULL DEFAULT true CHECK (is_sandbox),
    created_at  timestamptz NOT NULL DEFAULT now()
);

ALTER SEQUENCE ads.ad_account_id_seq OWNED BY ads.ad_accounts.id;

CREATE INDEX ad_accounts_business ON ads.ad_accounts (business_id, id);

CREATE SEQUENCE ads.leadgen_form_id_seq START WITH 8100000001;

CREATE TABLE ads.leadgen_forms (
    ad_account_id      bigint      NOT NULL REFERENCES ads.ad_accounts (id),
    id                 bigint      NOT NULL DEFAULT nextval('ads.leadgen_form_id_seq') UNIQUE,
    name               text        NOT NULL,
    -- [{"type","key","label"}], as checked by the plugin.
    questions          jsonb       NOT NULL,
    privacy_policy_url text        NOT NULL,
    created_at         timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (ad_account_id, id)
);

ALTER SEQUENCE ads.leadgen_form_id_seq OWNED BY ads.leadgen_forms.id;

CREATE SEQUENCE ads.lead_campaign_id_seq START WITH 8200000001;

CREATE TABLE ads.lead_campaigns (
    ad_account_id   bigint      NOT NULL REFERENCES ads.ad_accounts (id),
    id              bigint      NOT NULL DEFAULT nextval('ads.lead_campaign_id_seq'),
    name            text        NOT NULL,
    status          text        NOT NULL CHECK (status IN ('ACTIVE', 'PAUSED')),
    -- The form it promotes, of the same ad account.
    leadgen_form_id bigint,
    created_at      timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (ad_account_id, id),
    FOREIGN KEY (ad_account_id, leadgen_form_id) REFERENCES ads.leadgen_forms (ad_account_id, id)
);

ALTER SEQUENCE ads.lead_campaign_id_seq OWNED BY ads.lead_campaigns.id;

CREATE SEQUENCE ads.lead_id_seq START WITH 8300000001;

CREATE TABLE ads.leads (
    ad_account_id bigint      NOT NULL,
    form_id       bigint      NOT NULL,
    id            bigint      NOT NULL DEFAULT nextval('ads.lead_id_seq'),
    user_id       text        NOT NULL,
    -- [{"name","values":[…]}], Meta's field_data.
    field_data    jsonb       NOT NULL,
    created_at    timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (ad_account_id, form_id, id),
    FOREIGN KEY (ad_account_id, form_id) REFERENCES ads.leadgen_forms (ad_account_id, id),
    -- One lead per person and form.
    UNIQUE (ad_account_id, form_id, user_id)
);

ALTER SEQUENCE ads.lead_id_seq OWNED BY ads.leads.id;
