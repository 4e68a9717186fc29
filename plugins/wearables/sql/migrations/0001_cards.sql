-- The migration runner makes the schema: the plugin's role owns it but may
-- not create schemas. An earlier text of this file made it too; a database
-- that applied that text is current:
-- migrate:replaces c848d2d81daff02ba8f0552f1114b39f10c892929e40c01f14b843a27c3966c5
-- The wearables plugin's schema: the device each user paired and the cards
-- apps pushed to them. Cards belong to a user, not a Page: every table
-- carries user_id, the key to shard them by.

CREATE SEQUENCE wearables.device_id_seq START WITH 3000000001;

-- A user has at most one paired device at a time. A simulated device (paired
-- by the platform in development) acknowledges cards by itself; a real
-- device connecting replaces it (replaced_at) for good.
CREATE TABLE wearables.devices (
    id          bigint      PRIMARY KEY DEFAULT nextval('wearables.device_id_seq'),
    user_id     text        NOT NULL,
    simulated   boolean     NOT NULL,
    paired_at   timestamptz NOT NULL DEFAULT now(),
    replaced_at timestamptz
);

ALTER SEQUENCE wearables.device_id_seq OWNED BY wearables.devices.id;

CREATE UNIQUE INDEX devices_paired ON wearables.devices (user_id) WHERE replaced_at IS NULL;

CREATE SEQUENCE wearables.card_id_seq START WITH 4000000001;

-- status: queued → delivered (the device acknowledged it) → confirmed (the
-- wearer took an action); queued → expired (expires_at passed, or displaced
-- by newer cards beyond the per-user bound). See cardstate.go.
CREATE TABLE wearables.cards (
    id           bigint      PRIMARY KEY DEFAULT nextval('wearables.card_id_seq'),
    user_id      text        NOT NULL,
    app_id       text        NOT NULL,
    title        text        NOT NULL,
    body         text        NOT NULL,
    -- [{"id","label"}], 1 to 4 items with unique ids.
    actions      jsonb       NOT NULL,
    status       text        NOT NULL DEFAULT 'queued'
                             CHECK (status IN ('queued', 'delivered', 'confirmed', 'expired')),
    device_id    bigint      REFERENCES wearables.devices (id),
    action_id    text,
    created_at   timestamptz NOT NULL DEFAULT now(),
    expires_at   timestamptz NOT NULL,
    delivered_at timestamptz,
    confirmed_at timestamptz
);

ALTER SEQUENCE wearables.card_id_seq OWNED BY wearables.cards.id;

-- The cards waiting for each user's device, oldest first.
CREATE INDEX cards_waiting ON wearables.cards (user_id, id) WHERE status = 'queued';
