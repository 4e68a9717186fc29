-- The core schema belongs to the gateway. This first migration records the
-- installation itself: one row, created on first start, whose seeded flag
-- tells whether the development world has been created.
CREATE SCHEMA IF NOT EXISTS core;

CREATE TABLE core.installation (
    singleton  boolean PRIMARY KEY DEFAULT true CHECK (singleton),
    id         text        NOT NULL,
    dev_seeded boolean     NOT NULL DEFAULT false,
    created_at timestamptz NOT NULL DEFAULT now()
);
