-- Trust and safety (CONTRACT §16, issue 30 item 6): the Pages a user
-- blocked, the reports users make to platform staff, and the Pages staff
-- restricted. The blocks of people are the chat plugin's (chat.user_blocks):
-- each plugin keeps the block it enforces.

-- A user's block of a Page: the Page's sends to the user are refused and
-- its threads leave the user's inbox. Keyed by Page first, as every
-- Page-owned table (a send checks its one row in the transaction's first
-- round trip); the user's list reads by user.
CREATE TABLE svcchat.page_blocks (
    page_id    text        NOT NULL,
    user_id    text        NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (page_id, user_id)
);
CREATE INDEX page_blocks_by_user ON svcchat.page_blocks (user_id, created_at DESC);

-- Report ids are decimal strings to clients (CONTRACT §1).
CREATE SEQUENCE svcchat.report_id_seq START WITH 6000000001;

-- A report to staff: of a Page, a person, or a message the reporter
-- received. page_id and user_id name what it concerns ('' when nothing of
-- that kind): a Page's message concerns its Page, a direct message its
-- sender. Its status follows NextReportStatus: open, then dismissed or
-- restricted, both final.
CREATE TABLE svcchat.reports (
    id               bigint      NOT NULL DEFAULT nextval('svcchat.report_id_seq') PRIMARY KEY,
    reporter_user_id text        NOT NULL,
    kind             text        NOT NULL CHECK (kind IN ('page', 'user', 'message')),
    -- The id the reporter named.
    subject_id       text        NOT NULL,
    page_id          text        NOT NULL DEFAULT '',
    user_id          text        NOT NULL DEFAULT '',
    -- The reported message's text as it was when reported.
    message_text     text        NOT NULL DEFAULT '',
    reason           text        NOT NULL,
    status           text        NOT NULL DEFAULT 'open' CHECK (status IN ('open', 'dismissed', 'restricted')),
    created_at       timestamptz NOT NULL DEFAULT now(),
    decided_at       timestamptz,
    decided_by       text        NOT NULL DEFAULT '',
    CHECK ((status = 'open') = (decided_at IS NULL))
);
-- The staff queue, oldest first.
CREATE INDEX reports_open ON svcchat.reports (id) WHERE status = 'open';
-- One open report per reporter and subject: reporting again answers it.
CREATE UNIQUE INDEX reports_one_open ON svcchat.reports (reporter_user_id, kind, subject_id) WHERE status = 'open';

-- A Page staff restricted: it cannot send (403, code 10, subcode 2018310)
-- until staff lift it, which deletes the row (NextRestriction).
CREATE TABLE svcchat.page_restrictions (
    page_id       text        NOT NULL PRIMARY KEY,
    -- Paging key of the staff list.
    id            bigint      NOT NULL GENERATED ALWAYS AS IDENTITY UNIQUE,
    report_id     bigint      NOT NULL,
    restricted_by text        NOT NULL,
    restricted_at timestamptz NOT NULL DEFAULT now()
);
