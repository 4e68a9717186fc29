-- The extmsg plugin's schema: business messaging accounts connected to apps
-- by embedded signup, and their message templates. None of it is a Page's
-- data: accounts are keyed by their business, templates by their account,
-- first in each primary key. Ids are unique on their own too, since the
-- API names an object by its id alone.

CREATE SEQUENCE extmsg.account_id_seq START WITH 9000000001;

CREATE TABLE extmsg.accounts (
    -- "bp_<user id>": the business portfolio that owns it.
    business_id  text        NOT NULL,
    id           bigint      NOT NULL DEFAULT nextval('extmsg.account_id_seq') UNIQUE,
    app_id       text        NOT NULL,
    display_name text        NOT NULL,
    status       text        NOT NULL DEFAULT 'connected' CHECK (status IN ('connected')),
    created_at   timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (business_id, id),
    -- One account per business and app: signing up again finds it.
    UNIQUE (business_id, app_id)
);

ALTER SEQUENCE extmsg.account_id_seq OWNED BY extmsg.accounts.id;

CREATE SEQUENCE extmsg.template_id_seq START WITH 9100000001;
-- Submissions in order: the staff queue is read oldest submission first.
CREATE SEQUENCE extmsg.submission_seq;

-- status follows plugins/internal/msgtemplate's lifecycle table.
CREATE TABLE extmsg.templates (
    account_id       bigint      NOT NULL REFERENCES extmsg.accounts (id),
    name             text        NOT NULL,
    id               bigint      NOT NULL DEFAULT nextval('extmsg.template_id_seq') UNIQUE,
    body             text        NOT NULL,
    params           text[]      NOT NULL,
    status           text        NOT NULL CHECK (status IN ('draft', 'pending_review', 'approved', 'rejected')),
    rejection_reason text        NOT NULL DEFAULT '',
    submission       bigint,
    submitted_at     timestamptz,
    decided_by       text,
    decided_at       timestamptz,
    created_at       timestamptz NOT NULL DEFAULT now(),
    updated_at       timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (account_id, name)
);

ALTER SEQUENCE extmsg.template_id_seq OWNED BY extmsg.templates.id;

CREATE INDEX templates_queue ON extmsg.templates (submission) WHERE status = 'pending_review';
