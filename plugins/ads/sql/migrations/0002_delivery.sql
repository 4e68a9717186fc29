-- Campaigns and ads that are served in the chats list's sponsored slot,
-- their daily counts, the clicks on them, custom audiences of hashed
-- identifiers, and conversions (CONTRACT §19). Keyed by ad account first,
-- as the rest of the schema. No plain email, phone or user id is stored:
-- a person is named only by the SHA-256 of their identifier.

CREATE SEQUENCE ads.campaign_id_seq START WITH 8400000001;

CREATE TABLE ads.campaigns (
    ad_account_id bigint      NOT NULL REFERENCES ads.ad_accounts (id),
    id            bigint      NOT NULL DEFAULT nextval('ads.campaign_id_seq') UNIQUE,
    name          text        NOT NULL,
    objective     text        NOT NULL CHECK (objective IN ('LEADS', 'TRAFFIC', 'MESSAGES')),
    status        text        NOT NULL CHECK (status IN ('ACTIVE', 'PAUSED', 'ARCHIVED', 'DELETED')),
    -- Minor units of the account's currency a day; spend stops there.
    daily_budget  bigint      NOT NULL CHECK (daily_budget > 0),
    created_at    timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (ad_account_id, id)
);

ALTER SEQUENCE ads.campaign_id_seq OWNED BY ads.campaigns.id;

CREATE SEQUENCE ads.custom_audience_id_seq START WITH 8500000001;

CREATE TABLE ads.custom_audiences (
    ad_account_id bigint      NOT NULL REFERENCES ads.ad_accounts (id),
    id            bigint      NOT NULL DEFAULT nextval('ads.custom_audience_id_seq') UNIQUE,
    name          text        NOT NULL,
    description   text        NOT NULL DEFAULT '',
    created_at    timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (ad_account_id, id)
);

ALTER SEQUENCE ads.custom_audience_id_seq OWNED BY ads.custom_audiences.id;

-- One hashed identifier of an audience. matched: it names a person of the
-- platform (only USER_ID entries can: people have no email or phone yet).
CREATE TABLE ads.audience_members (
    ad_account_id bigint  NOT NULL,
    audience_id   bigint  NOT NULL,
    schema        text    NOT NULL CHECK (schema IN ('EMAIL_SHA256', 'PHONE_SHA256', 'USER_ID')),
    hash          bytea   NOT NULL CHECK (length(hash) = 32),
    matched       boolean NOT NULL,
    PRIMARY KEY (ad_account_id, audience_id, schema, hash),
    FOREIGN KEY (ad_account_id, audience_id) REFERENCES ads.custom_audiences (ad_account_id, id)
);

-- A person leaving is found by hash across accounts.
CREATE INDEX audience_members_hash ON ads.audience_members (hash);

CREATE SEQUENCE ads.ad_id_seq START WITH 8600000001;

CREATE TABLE ads.ads (
    ad_account_id bigint      NOT NULL,
    campaign_id   bigint      NOT NULL,
    id            bigint      NOT NULL DEFAULT nextval('ads.ad_id_seq') UNIQUE,
    name          text        NOT NULL,
    status        text        NOT NULL CHECK (status IN ('ACTIVE', 'PAUSED', 'ARCHIVED', 'DELETED')),
    title         text        NOT NULL,
    body          text        NOT NULL,
    link_url      text        NOT NULL,
    page_id       text        NOT NULL,
    -- Everyone when null.
    audience_id   bigint,
    created_at    timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (ad_account_id, id),
    FOREIGN KEY (ad_account_id, campaign_id) REFERENCES ads.campaigns (ad_account_id, id),
    FOREIGN KEY (ad_account_id, audience_id) REFERENCES ads.custom_audiences (ad_account_id, id)
);

ALTER SEQUENCE ads.ad_id_seq OWNED BY ads.ads.id;

-- Serving reads the active ads of every account.
CREATE INDEX ads_active ON ads.ads (id) WHERE status = 'ACTIVE';

-- An ad's serves and clicks of one UTC day: counts that name no one.
CREATE TABLE ads.ad_daily_stats (
    ad_account_id bigint NOT NULL,
    ad_id         bigint NOT NULL,
    day           date   NOT NULL,
    campaign_id   bigint NOT NULL,
    impressions   bigint NOT NULL DEFAULT 0,
    clicks        bigint NOT NULL DEFAULT 0,
    PRIMARY KEY (ad_account_id, ad_id, day),
    FOREIGN KEY (ad_account_id, ad_id) REFERENCES ads.ads (ad_account_id, id)
);

CREATE INDEX ad_daily_stats_campaign ON ads.ad_daily_stats (campaign_id, day);

-- One click, kept for attribution: the person by the SHA-256 of their
-- user id, null once they left.
CREATE SEQUENCE ads.ad_click_id_seq START WITH 8700000001;

CREATE TABLE ads.ad_clicks (
    ad_account_id bigint      NOT NULL,
    ad_id         bigint      NOT NULL,
    id            bigint      NOT NULL DEFAULT nextval('ads.ad_click_id_seq'),
    user_hash     bytea,
    clicked_at    timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (ad_account_id, ad_id, id),
    FOREIGN KEY (ad_account_id, ad_id) REFERENCES ads.ads (ad_account_id, id)
);

ALTER SEQUENCE ads.ad_click_id_seq OWNED BY ads.ad_clicks.id;

CREATE INDEX ad_clicks_user ON ads.ad_clicks (user_hash, clicked_at) WHERE user_hash IS NOT NULL;

-- One conversion event received (duplicates of an event_id within 48
-- hours are not stored); ad_id: the ad it is attributed to.
CREATE SEQUENCE ads.conversion_id_seq START WITH 8800000001;

CREATE TABLE ads.conversions (
    ad_account_id bigint      NOT NULL REFERENCES ads.ad_accounts (id),
    id            bigint      NOT NULL DEFAULT nextval('ads.conversion_id_seq'),
    event_id      text        NOT NULL,
    event_name    text        NOT NULL,
    event_time    timestamptz NOT NULL,
    user_hash     bytea,
    ad_id         bigint,
    value         double precision,
    currency      text        NOT NULL DEFAULT '',
    received_at   timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (ad_account_id, id)
);

ALTER SEQUENCE ads.conversion_id_seq OWNED BY ads.conversions.id;

CREATE INDEX conversions_event ON ads.conversions (ad_account_id, event_id, received_at) WHERE event_id <> '';
CREATE INDEX conversions_ad ON ads.conversions (ad_id) WHERE ad_id IS NOT NULL;
CREATE INDEX conversions_user ON ads.conversions (user_hash) WHERE user_hash IS NOT NULL;
