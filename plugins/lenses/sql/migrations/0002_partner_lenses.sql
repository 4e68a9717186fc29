-- Lenses become partners' (issue #32): an app with the lenses product
-- makes a lens, staff review it, and the chat app offers the approved
-- ones. The built-in rows of 0001 go: the development seed makes them
-- again through the partners' path (gateway/internal/seed), so nothing is
-- offered that nobody reviewed.
DROP TABLE lenses.lenses;

CREATE TABLE lenses.lenses (
    id               bigint      GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    app_id           text        NOT NULL,
    name             text        NOT NULL,
    icon_url         text        NOT NULL,
    -- The review transition table is in the plugin (review.go).
    status           text        NOT NULL DEFAULT 'draft'
                                 CHECK (status IN ('draft', 'in_review', 'approved', 'rejected')),
    rejection_reason text        NOT NULL DEFAULT '',
    submitted_at     timestamptz,
    decided_at       timestamptz,
    created_at       timestamptz NOT NULL DEFAULT now()
);

CREATE INDEX lenses_app ON lenses.lenses (app_id, id);
-- The carousel (approval order) and the staff queue read only their rows.
CREATE INDEX lenses_approved ON lenses.lenses (decided_at, id) WHERE status = 'approved';
CREATE INDEX lenses_in_review ON lenses.lenses (id) WHERE status = 'in_review';
